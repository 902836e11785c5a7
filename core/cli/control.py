"""Control a run from the command line, under the same rule as the dashboard (core/runs/people/permissions.py):
you are your OS user name; only a run's owner or an admin (STUDIO_ADMINS) may act on it, and every attempt is recorded.

    python -m core.cli.control pause|resume|stop|delete RUN_ID [--store DIR]
    python -m core.cli.control rename RUN_ID --name "new name" [--store DIR]
"""
from __future__ import annotations

import argparse
import sys

from core.messages import Explained
from core.runs.people.actions import Actions
from core.runs.people.permissions import NotAllowed, command_line_person
from core.runs.store.arguments import add_store_arguments, open_store

__all__ = ["main"]

REFUSED = 3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Pause, resume, stop, rename or delete a run of the run store.")
    ap.add_argument("action", choices=("pause", "resume", "stop", "rename", "delete"))
    ap.add_argument("run_id")
    ap.add_argument("--name", default=None, help="the new name (rename)")
    add_store_arguments(ap)
    args = ap.parse_args(argv)
    store = open_store(args)
    run = store.get(args.run_id)
    if run is None:
        print(f"no run {args.run_id} in {store.where}", file=sys.stderr)
        return 2
    if args.action == "rename" and not args.name:
        print("rename needs --name", file=sys.stderr)
        return 2
    act = Actions(store, command_line_person(store))
    try:
        done = {"pause": lambda: act.pause(run), "resume": lambda: act.resume(run), "stop": lambda: act.stop(run),
                "rename": lambda: act.rename(run, args.name), "delete": lambda: act.delete(run)}[args.action]()
    except NotAllowed as e:
        print(f"refused: {e}", file=sys.stderr)
        return REFUSED
    except (Explained, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(done if not isinstance(done, bool) else f"{args.action}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
