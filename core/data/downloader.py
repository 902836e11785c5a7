"""Download the full MNIST (70,000 images): mirrors, published md5, resume, atomic writes, gunzip, progress.

The command line is core.cli.download.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.data.folders import check_split, resolve_path
from core.data.idx import DataError
from core.messages import Explained

MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)

# Published md5 of the official archives (the ones torchvision checks too).
ARCHIVES = {
    "train-images-idx3-ubyte.gz": ("train", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
    "train-labels-idx1-ubyte.gz": ("train", "d53e105ee54ea40749a09fcbcd1e9432"),
    "t10k-images-idx3-ubyte.gz": ("test", "9fb629c4189551a2d022fa330f9573f3"),
    "t10k-labels-idx1-ubyte.gz": ("test", "ec29112dd5afa0611ce80d1b7f02629c"),
}

CHUNK = 64 * 1024
MIRRORS_ENV = "STUDIO_MNIST_MIRRORS"  # a server's own mirrors (an internal file server), before the known ones


def configured_mirrors() -> tuple[str, ...]:
    """The mirrors a server or command line uses by default: $STUDIO_MNIST_MIRRORS (base URLs separated by
    commas or spaces) when set, else the known public ones."""
    own = tuple(u for u in re.split(r"[,\s]+", os.environ.get(MIRRORS_ENV, "")) if u)
    return own or MIRRORS


class DownloadCancelled(Explained):
    pass


@dataclass(frozen=True)
class Progress:
    file: str
    done: int        # bytes of this file so far (resumed bytes included)
    total: int | None  # bytes of this file, if the server said
    speed: float     # bytes/s over this transfer
    files_done: int
    files_total: int


ProgressFn = Callable[[Progress], None]


def md5_of(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fetch(url: str, part: Path, timeout: float, on_chunk: Callable[[int, int | None], None],
           cancel: threading.Event | None) -> None:
    """Append the rest of url to part, resuming from its current size with an HTTP Range request."""
    have = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": "mindspore-training-studio"})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # we already have it all
            on_chunk(have, have)
            return
        raise
    with resp:
        if have and resp.status != 206:  # server ignored Range: start over
            have = 0
            part.unlink(missing_ok=True)
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length is not None else None
        with open(part, "ab") as f:
            done = have
            on_chunk(done, total)
            while True:
                if cancel is not None and cancel.is_set():
                    raise DownloadCancelled("download_cancelled")
                block = resp.read(CHUNK)
                if not block:
                    break
                f.write(block)
                done += len(block)
                on_chunk(done, total)
        if total is not None and done < total:
            raise OSError(f"connection closed after {done:,} of {total:,} bytes")


def _gunzip_atomic(src: Path, dst: Path) -> None:
    tmp = dst.with_name(dst.name + ".tmp")
    with gzip.open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
    os.replace(tmp, dst)


def download_mnist(target: str | os.PathLike, mirrors: tuple[str, ...] = MIRRORS,
                   archives: dict[str, tuple[str, str]] | None = None,
                   progress: ProgressFn | None = None, timeout: float = 30.0, retries: int = 2,
                   cancel: threading.Event | None = None, keep_archives: bool = False) -> Path:
    """Download, verify and unpack MNIST into <target>/train and <target>/test.

    Partial downloads live in <target>/.download/<name>.part and are resumed on the next call; the archive
    is renamed to its final name only after its md5 matches, and unpacked files appear atomically.
    Raises DataError with what went wrong on every mirror, DownloadCancelled if cancel is set.
    """
    archives = ARCHIVES if archives is None else archives
    root = resolve_path(target)
    cache = root / ".download"
    cache.mkdir(parents=True, exist_ok=True)
    for i, (name, (split, md5)) in enumerate(archives.items()):
        final = root / split / name.removesuffix(".gz")
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():
            continue
        archive = cache / name
        if archive.exists() and md5_of(archive) != md5:
            archive.unlink()
        errors = []
        if not archive.exists():
            part = cache / (name + ".part")
            for mirror in mirrors:
                for attempt in range(retries + 1):
                    start, start_size = time.monotonic(), (part.stat().st_size if part.exists() else 0)

                    def on_chunk(done, total, _start=start, _base=start_size, _name=name, _i=i):
                        if progress is not None:
                            elapsed = max(time.monotonic() - _start, 1e-6)
                            progress(Progress(_name, done, total, (done - _base) / elapsed, _i, len(archives)))

                    try:
                        _fetch(mirror.rstrip("/") + "/" + name, part, timeout, on_chunk, cancel)
                    except DownloadCancelled:
                        raise
                    except (OSError, urllib.error.URLError) as e:  # HTTPError, timeouts, resets
                        errors.append(f"{mirror}: {getattr(e, 'reason', None) or e}")
                        if isinstance(e, urllib.error.HTTPError) and e.code == 404:
                            break  # this mirror does not have it: next mirror
                        continue
                    got = md5_of(part)
                    if got == md5:
                        os.replace(part, archive)
                        break
                    errors.append(f"{mirror}: md5 {got} does not match the published {md5}")
                    part.unlink()
                if archive.exists():
                    break
        if not archive.exists():
            raise DataError("download_failed", name=name, tried="\n  ".join(errors))
        try:
            _gunzip_atomic(archive, final)
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            archive.unlink(missing_ok=True)
            raise DataError("unpack_failed", name=name, why=str(e)) from None
        if not keep_archives:
            archive.unlink()
    if not any(cache.iterdir()):
        cache.rmdir()
    for split in sorted({split for split, _ in archives.values()}):
        check_split(root, split)
    return root
