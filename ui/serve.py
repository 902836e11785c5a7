"""Start the app server with its dispatcher running from the start, so that queued runs start whether or not
a browser is open (a plain `streamlit run app.py` dispatches too, from its first page view):

    python -m ui.serve [--store DIR] [--database-url URL] [streamlit run options...]      # what ./run.sh does

--store and --database-url set $STUDIO_DATA_DIR and $STUDIO_DATABASE_URL for the pages, as on every command.
"""
from __future__ import annotations

import argparse
import os
import sys

from streamlit.web import cli

from core.runs import launcher
from core.runs.store import DATA_DIR_ENV, DATABASE_URL_ENV, RunStore
from core.runs.store.arguments import add_store_arguments


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description="The studio's app server (other options go to streamlit run).")
    add_store_arguments(ap)
    args, rest = ap.parse_known_args(argv)
    if args.store:
        os.environ[DATA_DIR_ENV] = os.path.abspath(args.store)
    if args.database_url:
        os.environ[DATABASE_URL_ENV] = args.database_url
    launcher.serve(RunStore())  # the store the app's pages open
    cli.main(["run", "studio_server.py", *rest], prog_name="streamlit")  # app.py and the access route


if __name__ == "__main__":
    main(sys.argv[1:])
