"""A reverse proxy on 127.0.0.1 for tests, as a deployment puts nginx or Caddy in front of the app: HTTP and the
websocket passed on to the app, with the X-Forwarded-For / X-Forwarded-Proto headers a proxy adds. Runs in a
thread of the test process (tornado, which Streamlit already depends on)."""
from __future__ import annotations

import asyncio
import threading

from tornado import httpclient, web, websocket
from tornado.httpserver import HTTPServer

from tests.support.server import free_port

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade", "content-length", "host", "content-encoding"}


def _forwarded(request, add: bool = True) -> dict:
    headers = {k: v for k, v in request.headers.get_all() if k.lower() not in HOP_BY_HOP}
    if add:
        headers["X-Forwarded-For"] = request.remote_ip
        headers["X-Forwarded-Proto"] = "https"
    return headers


class Passthrough(web.RequestHandler):
    def initialize(self, upstream: str, add: bool):
        self.upstream, self.add = upstream, add

    async def _pass(self):
        body = self.request.body if self.request.method in ("POST", "PUT", "PATCH") else None
        response = await httpclient.AsyncHTTPClient().fetch(
            self.upstream + self.request.uri, method=self.request.method, headers=_forwarded(self.request, self.add), body=body,
            raise_error=False, follow_redirects=False, decompress_response=True)
        self.set_status(response.code, response.reason)
        for k, v in response.headers.get_all():
            if k.lower() == "content-type":
                self.set_header(k, v)  # replaces tornado's default text/html: two would make Chromium refuse the JS
            elif k.lower() not in HOP_BY_HOP:
                self.add_header(k, v)
        if response.body:
            self.write(response.body)

    get = post = put = delete = patch = head = _pass


class Socket(websocket.WebSocketHandler):
    def initialize(self, upstream: str, add: bool):
        self.upstream, self.add = upstream.replace("http://", "ws://"), add
        self.inner = None

    def select_subprotocol(self, subprotocols):
        return subprotocols[0] if subprotocols else None

    async def open(self, *args):
        request = httpclient.HTTPRequest(self.upstream + self.request.uri, headers=_forwarded(self.request, self.add))
        protocols = [p.strip() for p in self.request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        self.inner = await websocket.websocket_connect(request, subprotocols=protocols or None)
        asyncio.ensure_future(self._pump())

    async def _pump(self):
        while True:
            message = await self.inner.read_message()
            if message is None:
                self.close()
                return
            await self.write_message(message, binary=isinstance(message, bytes))

    async def on_message(self, message):
        if self.inner is not None:
            await self.inner.write_message(message, binary=isinstance(message, bytes))

    def on_close(self):
        if self.inner is not None:
            self.inner.close()

    def check_origin(self, origin):
        return True


class Proxy:
    """Start: Proxy(upstream_url); its url; stop(). forwarded=False: a proxy that adds no X-Forwarded-* header
    (nginx's plain proxy_pass)."""

    def __init__(self, upstream: str, forwarded: bool = True):
        self.add = forwarded
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(upstream, ready), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _serve(self, upstream: str, ready: threading.Event):
        asyncio.set_event_loop(self.loop)
        app = web.Application([(r"/_stcore/stream", Socket, {"upstream": upstream, "add": self.add}),
                               (r"/.*", Passthrough, {"upstream": upstream, "add": self.add})])
        self.server = HTTPServer(app)
        self.server.listen(self.port, address="127.0.0.1")
        ready.set()
        self.loop.run_forever()

    def stop(self):
        self.loop.call_soon_threadsafe(self.server.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
