"""The run store's own commands:

    python -m core.cli.store copy --from runs/ --to postgresql+psycopg://studio@db-host/studio
    python -m core.cli.store upgrade [--store DIR] [--database-url URL]    # migrate to this code's schema
    python -m core.cli.store rotate-secret [--store DIR] [--database-url URL]   # revoke every link and cookie

--from and --to take a database URL or a store folder (its runs.sqlite). Files of a store folder (checkpoints)
go into the target's database when it is a server, into --to-store otherwise.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.messages import Explained
from core.runs import sweeps as sweep
from core.runs.store.arguments import add_store_arguments, open_store
from core.runs.store.copy import copy_store
from core.runs.store.run_store import RunStore, default_data_dir


def _open(where: str, folder: str | None) -> RunStore:
    if "://" in where:
        return RunStore(folder or default_data_dir(), where)
    return RunStore(Path(where), f"sqlite:///{Path(where).expanduser().resolve() / 'runs.sqlite'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.cli.store", description="The run store's own commands.")
    sub = ap.add_subparsers(dest="command", required=True)
    copy = sub.add_parser("copy", help="copy a whole store into another database and compare the counts")
    copy.add_argument("--from", dest="source", required=True, metavar="URL_OR_FOLDER")
    copy.add_argument("--to", dest="target", required=True, metavar="URL_OR_FOLDER")
    copy.add_argument("--from-store", default=None, help="the source's folder, when --from is a URL")
    copy.add_argument("--to-store", default=None, help="the target's folder, when --to is a URL (default: the "
                                                       "source's folder)")
    upgrade = sub.add_parser("upgrade", help="migrate a store to this code's schema: a shared database waits for "
                                             "this (back it up first); a personal SQLite store migrates itself")
    add_store_arguments(upgrade)
    rotate = sub.add_parser("rotate-secret", help="a new server secret: every class link, sign-in ticket and "
                                                   "cookie handed out so far stops working")
    add_store_arguments(rotate)
    args = ap.parse_args(argv)
    try:
        if args.command == "upgrade":
            store = open_store(args, upgrade_schema=True)
            print(f"{store.where}: schema {store.schema_revision}")
            return 0
        if args.command == "rotate-secret":
            store = open_store(args)
            store.rotate_secret()
            print(f"{store.where}: a new server secret; every class link and cookie of the old one is revoked "
                  "(app servers see it within seconds: people sign in again, teachers show the new class link)")
            return 0
        source = _open(args.source, args.from_store)
        target = _open(args.target, args.to_store or str(source.root))
        report = copy_store(source, target)
        studies = sweep.copy_studies(source, target)
    except (Explained, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"copied {source.where} -> {target.where}")
    print("\n".join(report.lines() + [f"sweep studies: {studies}"]))
    if not report.matches:
        print("error: the counts differ (see MISMATCH above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
