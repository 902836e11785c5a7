"""The server's /studio/admit route, where a browser swaps a pass for the signed HttpOnly access cookie and is
sent back to the page (a page's script cannot set an HttpOnly cookie; the server's response does):

- `?ticket=…`: the one-minute pass a page hands the browser after the password or a class link let it in;
- `?token=…`: the server's access token (core/app/server_token.py), from the link ./run.sh prints: its holder
  becomes this server's admin (on an open server, its one user).

A reload then finds the cookie and asks for nothing."""
from __future__ import annotations

import os

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from core.app.passes import ADMIN, COOKIE_HOURS, PASS_COOKIE, TicketBook, cookie_value, read_pass, signing_key
from core.app.server_token import TOKEN_PARAM, token_matches
from core.runs.store import RunStore, default_data_dir
from core.runs.store.database import database_url_setting
from ui.deployment import configured_password

__all__ = ["ADMIT_PATH", "ROUTE_ENV", "routes", "serve_routes", "admit_available", "safe_next"]

ADMIT_PATH = "/studio/admit"
ROUTE_ENV = "STUDIO_ADMIT_ROUTE"  # set in the server process that serves the route (studio_server.py)
_BOOK = TicketBook()
_STORES: dict[tuple[str, str | None], RunStore] = {}


def safe_next(target: str | None) -> str:
    """Where to send the browser: a path on this server only (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _signing_key() -> bytes:
    where = (str(default_data_dir()), database_url_setting())
    if where not in _STORES:
        _STORES[where] = RunStore(*where)
    return signing_key(_STORES[where].server_secret(), configured_password())


def admit(request: Request) -> Response:
    try:
        key = _signing_key()
    except OSError as e:  # the store or its secret cannot be used: said, as the pages say it
        return PlainTextResponse(str(e), status_code=503)
    token = request.query_params.get(TOKEN_PARAM)
    if token is not None:
        if not token_matches(token):
            return PlainTextResponse("This access link's token is not this server's: it has restarted since, or "
                                     "the link was cut. Open the link the server printed when it started (it ends "
                                     "in /studio/admit?token=…).", status_code=403)
        role = ADMIN
    else:
        p = read_pass(key, request.query_params.get("ticket"), "ticket")
        if p is None or not _BOOK.first_use(p):
            return PlainTextResponse("This sign-in link has expired or was used already. Open the studio's address "
                                     "again and sign in (or open the class link again).", status_code=400)
        role = p.role
    response = RedirectResponse(safe_next(request.query_params.get("next")), status_code=303)
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(PASS_COOKIE, cookie_value(key, role), max_age=COOKIE_HOURS * 3600, path="/",
                        httponly=True, secure=secure, samesite="lax")
    return response


def routes() -> list[Route]:
    return [Route(ADMIT_PATH, admit, methods=["GET"])]


def serve_routes() -> list[Route]:
    """The routes, for the app server that serves them: its pages may then send browsers there."""
    os.environ[ROUTE_ENV] = ADMIT_PATH
    return routes()


def admit_available() -> bool:
    """Whether this process serves the route (started by ./run.sh; not a plain `streamlit run app.py`)."""
    return os.environ.get(ROUTE_ENV) == ADMIT_PATH
