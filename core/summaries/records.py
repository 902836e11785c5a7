"""The record framing of summary and event files (TFRecord's, which MindSpore's EventWriter_ writes too): an
8-byte little-endian length, its masked CRC-32C, the data, the data's masked CRC-32C. Every record is checked:
a record whose data fails its CRC is skipped (its length is sound, so the next one is found), a length that fails
its CRC ends the file's reading there (nothing after it can be framed), and a last record cut short is left for
the next read (a file still being written) or reported as truncated."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import google_crc32c

__all__ = ["Scan", "Skip", "scan_records", "masked_crc32c", "frame"]

HEADER = 12  # length (8) and its CRC (4)
FOOTER = 4   # the data's CRC
MAX_RECORD = 256 * 1024 * 1024  # a length above this is not a record: a corrupt header, whatever its CRC says


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C (so that a CRC of data holding CRCs is not trivially weak)."""
    x = google_crc32c.value(data)
    return (((x >> 15) | (x << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One record as written (tests write corrupt and truncated files with it)."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


@dataclass(frozen=True)
class Skip:
    """A part of a file that could not be read: where it starts, how long it is and why."""
    offset: int
    length: int
    reason: str  # "data_crc" | "length_crc" | "truncated" | "too_long"


@dataclass
class Scan:
    """The sound records of a file from `start`, and what was not: `end` is where the next read goes on (after
    the last whole record; before an incomplete one, which a writer may still finish)."""
    records: list[bytes] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    end: int = 0
    pending: int = 0  # bytes of an incomplete last record


def scan_records(path: Path, start: int = 0, final: bool = True) -> Scan:
    """Read every record of path from byte `start`. final: the file is complete, so an incomplete last record is
    reported as truncated; otherwise it is left pending for the next read (a file a training still writes)."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    scan, at = Scan(end=start), 0
    while at < len(data):
        if len(data) - at < HEADER:
            _cut_short(scan, start + at, len(data) - at, final)
            break
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked_crc32c(header) or length > MAX_RECORD:
            reason = "length_crc" if length_crc != masked_crc32c(header) else "too_long"
            scan.skipped.append(Skip(start + at, len(data) - at, reason))
            scan.end = start + len(data)  # nothing after a bad length can be framed: do not read it again
            break
        whole = HEADER + length + FOOTER
        if len(data) - at < whole:
            _cut_short(scan, start + at, len(data) - at, final)
            break
        body = data[at + HEADER:at + HEADER + length]
        (data_crc,) = struct.unpack("<I", data[at + HEADER + length:at + whole])
        if data_crc == masked_crc32c(body):
            scan.records.append(body)
        else:
            scan.skipped.append(Skip(start + at, whole, "data_crc"))
        at += whole
        scan.end = start + at
    return scan


def _cut_short(scan: Scan, offset: int, length: int, final: bool) -> None:
    if final:
        scan.skipped.append(Skip(offset, length, "truncated"))
        scan.end = offset + length
    else:
        scan.pending = length
