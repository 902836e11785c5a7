"""A websocket client in the standard library only, as any script (or another local user, with the system's
Python) could write: it opens a Streamlit server's stream, asks for one page run, and prints what came back
until that run has finished (or for WS_SECONDS).

    python3 tests/support/ws_client.py ws://127.0.0.1:PORT/_stcore/stream BACKMSG_HEX [ORIGIN] > what-it-saw

BACKMSG_HEX: a serialised BackMsg (tests/browser/test_browser_token.py makes it). Prints the frames' bytes, decoded as
UTF-8 with errors replaced, so that a test can look for the page's words in them."""
from __future__ import annotations

import base64
import os
import socket
import struct
import sys
import time
from urllib.parse import urlsplit

SCRIPT_FINISHED = 6  # ForwardMsg.script_finished (streamlit/proto/ForwardMsg.proto)
QUIET_S = 1.5


def _handshake(sock: socket.socket, url: str, origin: str | None) -> None:
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {parts.path} HTTP/1.1", f"Host: {parts.netloc}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: streamlit"]
    if origin:
        lines.append(f"Origin: {origin}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            raise SystemExit("closed during the handshake: " + answer.decode(errors="replace"))
        answer += chunk
    if b" 101 " not in answer.split(b"\r\n")[0]:
        raise SystemExit("refused: " + answer.decode(errors="replace"))


def _send_binary(sock: socket.socket, payload: bytes) -> None:
    mask = os.urandom(4)
    n = len(payload)
    head = struct.pack("!BB", 0x82, 0x80 | n) if n < 126 else struct.pack("!BBH", 0x82, 0x80 | 126, n) \
        if n < 65536 else struct.pack("!BBQ", 0x82, 0x80 | 127, n)
    sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if not byte & 0x80:
            return value, i


def _field_numbers(message: bytes) -> set[int]:
    """The top-level field numbers of a serialised protobuf message (a ForwardMsg)."""
    numbers, i = set(), 0
    while i < len(message):
        tag, i = _varint(message, i)
        kind = tag & 7
        if kind == 0:
            _, i = _varint(message, i)
        elif kind == 2:
            size, i = _varint(message, i)
            i += size
        elif kind in (1, 5):
            i += 8 if kind == 1 else 4
        else:
            break
        numbers.add(tag >> 3)
    return numbers


def _frame_payloads(data: bytes) -> tuple[list[bytes], bytes]:
    """The payloads of the complete (unmasked, server-sent) frames at the start of data, and what is left."""
    payloads = []
    while len(data) >= 2:
        size, start = data[1] & 0x7F, 2
        if size == 126:
            size, start = (struct.unpack("!H", data[2:4])[0], 4) if len(data) >= 4 else (None, 0)
        elif size == 127:
            size, start = (struct.unpack("!Q", data[2:10])[0], 10) if len(data) >= 10 else (None, 0)
        if size is None or len(data) < start + size:
            break
        payloads.append(data[start:start + size])
        data = data[start + size:]
    return payloads, data


def _frames(sock: socket.socket, seconds: float) -> bytes:
    """Everything the server sends until its page run has finished (a ForwardMsg with script_finished, field 6)
    and QUIET_S passed without another frame (a rerun the run asked for would send more), or `seconds`."""
    sock.settimeout(0.2)
    got, pending, end, finished = b"", b"", time.monotonic() + seconds, False
    quiet_until = end
    while time.monotonic() < min(end, quiet_until):
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        got += chunk
        payloads, pending = _frame_payloads(pending + chunk)
        finished = finished or any(SCRIPT_FINISHED in _field_numbers(p) for p in payloads)
        if finished:
            quiet_until = time.monotonic() + QUIET_S
    return got


def main(url: str, back_msg_hex: str, origin: str | None = None) -> None:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        _handshake(sock, url, origin)
        _send_binary(sock, bytes.fromhex(back_msg_hex))
        sys.stdout.write(_frames(sock, float(os.environ.get("WS_SECONDS", "12"))).decode("utf-8", errors="replace"))


if __name__ == "__main__":
    main(*sys.argv[1:4])
