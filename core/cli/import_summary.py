"""Open MindSpore summary folders (what MindInsight read) and TensorBoard logs in the studio: every training folder
under each DIR (searched recursively) becomes a run with source "summary", updated, not doubled, when imported
again.

    python -m core.cli.import_summary DIR [DIR ...] [--store DIR_OR_URL] [--watch] [--every 2]

--watch follows trainings still writing: their runs stay live on Train and Compare and end when their training
lineage arrives (or when you press Ctrl-C: they are left as stopped). Exit 2 when a DIR holds no summary files."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from core.app.summary_import import SummaryImport
from core.summaries.training_folders import training_folders
from core.runs.people.permissions import script_user
from core.runs.store.arguments import store_from

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.cli.import_summary", description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="a summary folder, or a folder of them")
    ap.add_argument("--store", default=None, help="the studio's store: a folder or a database URL")
    ap.add_argument("--watch", action="store_true", help="follow trainings still writing until they end")
    ap.add_argument("--every", type=float, default=2.0, help="seconds between two reads while watching")
    args = ap.parse_args(argv)
    folders = _folders(args.dirs)
    if folders is None:
        return 2
    store = store_from(args.store)
    imports = [SummaryImport(store, f, who=script_user()) for f in folders]
    if not args.watch:
        for one in imports:
            print(one.update(final=True).line(), flush=True)
        return 0
    return _watch(imports, args.every)


def _folders(dirs: list[str]) -> list[Path] | None:
    found: list[Path] = []
    for d in dirs:
        path = Path(d).expanduser()
        if not path.is_dir():
            print(f"{d}: no such folder. Give the folder SummaryCollector(summary_dir=...) wrote, or one above it.",
                  file=sys.stderr)
            return None
        here = training_folders(path)
        if not here:
            print(f"{d}: no MindSpore summary files (*.summary.*_MS, *_lineage) nor TensorBoard event files "
                  "(events.out.tfevents.*) in it or below it.", file=sys.stderr)
            return None
        found += [f for f in here if f not in found]
    return found


def _watch(imports: list[SummaryImport], every: float) -> int:
    """Read every folder again every `every` s until each training has ended (Ctrl-C: stop following)."""
    waiting = list(imports)
    try:
        while waiting:
            for one in list(waiting):
                report = one.update(final=False)
                if report.new_steps or report.ended:
                    print(report.line(), flush=True)
                if report.ended:
                    waiting.remove(one)
            if waiting:
                time.sleep(every)
    except KeyboardInterrupt:
        for one in waiting:
            print(one.update(final=True).line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
