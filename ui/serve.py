"""Start the app server with its dispatcher running from the start, so that queued runs start whether or not
a browser is open (a plain `streamlit run app.py` dispatches too, from its first page view):

    python -m ui.serve [--store DIR] [--database-url URL] [streamlit run options...]      # what ./run.sh does

--store and --database-url set $STUDIO_DATA_DIR and $STUDIO_DATABASE_URL for the pages, as on every command.
It prints the server's access link (its token: core/app/server_token.py) and, on a desktop, opens it once the
server answers (not with --server.headless true, nor where STUDIO_NO_BROWSER=1).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import urllib.request
import webbrowser

from streamlit import config as st_config
from streamlit.web import cli

from core.app.access import PASSWORD_ENV
from core.app.server_token import OPEN_ENV, access_link, open_without_token

from core.runs.launch import launcher
from core.runs.people.permissions import keep_admins
from core.runs.store import DATA_DIR_ENV, DATABASE_URL_ENV, RunStore
from core.runs.store.arguments import add_store_arguments
from ui.admit_route import ADMIT_PATH

NO_BROWSER_ENV = "STUDIO_NO_BROWSER"


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description="The studio's app server (other options go to streamlit run).")
    add_store_arguments(ap)
    args, rest = ap.parse_known_args(argv)
    if args.store:
        os.environ[DATA_DIR_ENV] = os.path.abspath(args.store)
    if args.database_url:
        os.environ[DATABASE_URL_ENV] = args.database_url
    store = RunStore()  # the store the app's pages open
    keep_admins(store)  # this server's STUDIO_ADMINS, for the command lines of every host
    launcher.serve(store)
    _announce(rest)
    cli.main(["run", "studio_server.py", *rest], prog_name="streamlit")  # app.py and the access route


def _streamlit_options(rest: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--server.port", dest="port", type=int, default=None)
    ap.add_argument("--server.address", dest="address", default=None)
    ap.add_argument("--server.headless", dest="headless", default=None)
    return ap.parse_known_args(rest)[0]


def _announce(rest: list[str]) -> None:
    """Print the access link; open it in the desktop's browser once the server answers."""
    given = _streamlit_options(rest)
    port = given.port or int(st_config.get_option("server.port"))
    address = given.address or st_config.get_option("server.address") or ""
    host = address if address not in ("", "0.0.0.0", "::") else "127.0.0.1"
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    if open_without_token():
        print(f"\n  {OPEN_ENV}=1: the studio asks for no access link; whoever reaches {base} uses it.\n", flush=True)
        return
    link = access_link(base, ADMIT_PATH)
    role = ("its holder is this server's admin" if os.environ.get(PASSWORD_ENV)
            else "it is the only way in")
    print(f"\n  MindSpore Training Studio: open it with this link ({role}; keep it to yourself)\n"
          f"    {link}\n", flush=True)
    headless = (given.headless or "").lower() == "true" or os.environ.get(NO_BROWSER_ENV) == "1"
    if not headless and (os.environ.get("DISPLAY") or sys.platform == "darwin"):
        threading.Thread(target=_open_when_up, args=(base, link), daemon=True).start()


def _open_when_up(base: str, link: str, patience_s: float = 120.0) -> None:
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(base + "/_stcore/health", timeout=1).read() == b"ok":
                webbrowser.open(link)
                return
        except OSError:
            time.sleep(0.5)


if __name__ == "__main__":
    main(sys.argv[1:])
