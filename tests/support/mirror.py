"""A mirror of the MNIST archives on 127.0.0.1 for the download tests, which can misbehave on purpose."""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import contextlib


class Server:
    """Serves files with Range support; `mode` makes it misbehave: ok | wrong | truncate | hang | missing | slow
    (64 KB every 0.2 s, as a slow link: a download that can be watched and cancelled)."""

    def __init__(self, files: dict[str, bytes], mode: str = "ok"):
        self.files, self.mode, self.ranges = files, mode, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                name = self.path.rsplit("/", 1)[-1]
                data = outer.files.get(name)
                if data is None or outer.mode == "missing":
                    self.send_error(404)
                    return
                if outer.mode == "wrong":
                    data = bytes(len(data))
                start = 0
                rng = self.headers.get("Range")
                if rng:
                    outer.ranges.append(rng)
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if outer.mode == "hang":
                    self.wfile.write(body[:1000])
                    self.wfile.flush()
                    time.sleep(3)
                    return
                if outer.mode == "slow":
                    for i in range(0, len(body), 64 * 1024):
                        try:
                            self.wfile.write(body[i:i + 64 * 1024])
                            self.wfile.flush()
                        except (BrokenPipeError, ConnectionResetError):
                            return  # the client cancelled
                        time.sleep(0.2)
                    return
                if outer.mode == "truncate":
                    body = body[: len(body) // 2]
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mnist/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
