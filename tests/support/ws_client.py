"""A websocket client in the standard library only, as any script (or another local user, with the system's
Python) could write: it opens a Streamlit server's stream, asks for one page run, and prints what came back.

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


def _frames(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(0.5)
    got, end = b"", time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        got += chunk
    return got


def main(url: str, back_msg_hex: str, origin: str | None = None) -> None:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        _handshake(sock, url, origin)
        _send_binary(sock, bytes.fromhex(back_msg_hex))
        sys.stdout.write(_frames(sock, float(os.environ.get("WS_SECONDS", "12"))).decode("utf-8", errors="replace"))


if __name__ == "__main__":
    main(*sys.argv[1:4])
