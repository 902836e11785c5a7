"""Command line: python -m core.cli.download <target-dir> [--mirror URL ...] [--timeout S]

Downloads the full MNIST (70,000 images) with a progress bar (tqdm) per file.
"""
from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from core.data.downloader import MIRRORS_ENV, Progress, configured_mirrors, download_mnist
from core.data.idx import DataError


class DownloadBar:
    """One tqdm bar per file, fed by the downloader's progress reports (bytes done, total, speed)."""

    def __init__(self):
        self.bar: tqdm | None = None
        self.file = None

    def __call__(self, p: Progress) -> None:
        if p.file != self.file:
            self.close()
            self.file = p.file
            self.bar = tqdm(total=p.total, unit="B", unit_scale=True, unit_divisor=1000, file=sys.stderr,
                            desc=f"[{p.files_done + 1}/{p.files_total}] {p.file}")
        bar = self.bar
        assert bar is not None  # made above for this file
        bar.total = p.total
        bar.n = p.done
        bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Download the full MNIST (70,000 images) into a folder.")
    ap.add_argument("target", help="folder to create train/ and test/ in")
    ap.add_argument("--mirror", action="append",
                    help=f"mirror base URL (repeatable); default: ${MIRRORS_ENV} or the known mirrors")
    ap.add_argument("--timeout", type=float, default=30.0)
    args = ap.parse_args(argv)
    bar = DownloadBar()
    try:
        root = download_mnist(args.target, tuple(args.mirror or configured_mirrors()), progress=bar,
                              timeout=args.timeout)
    except DataError as e:
        print(f"\nerror: {e}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    print(f"MNIST is ready in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
