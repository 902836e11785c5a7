"""The server's /studio/admit route: a page hands the browser a one-minute ticket (core/app/passes.py) after the
password or a class link let it in; this route checks it, sets the signed HttpOnly access cookie in its
response and sends the browser back to the page. A reload then finds the cookie and asks for nothing."""
from __future__ import annotations

import os

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from core.app.passes import COOKIE_HOURS, PASS_COOKIE, TicketBook, cookie_value, read_pass, signing_key
from ui.deployment import configured_password

__all__ = ["ADMIT_PATH", "ROUTE_ENV", "routes", "serve_routes", "admit_available", "safe_next"]

ADMIT_PATH = "/studio/admit"
ROUTE_ENV = "STUDIO_ADMIT_ROUTE"  # set in the server process that serves the route (studio_server.py)
_BOOK = TicketBook()


def safe_next(target: str | None) -> str:
    """Where to send the browser: a path on this server only (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def admit(request: Request) -> Response:
    key = signing_key(configured_password())
    p = read_pass(key, request.query_params.get("ticket"), "ticket")
    if p is None or not _BOOK.first_use(p):
        return PlainTextResponse("This sign-in link has expired or was used already. Open the studio's address "
                                 "again and sign in (or open the class link again).", status_code=400)
    response = RedirectResponse(safe_next(request.query_params.get("next")), status_code=303)
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(PASS_COOKIE, cookie_value(key, p.role), max_age=COOKIE_HOURS * 3600, path="/",
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
