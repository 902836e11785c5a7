"""Start the app server with its dispatcher running from the start, so that queued runs start whether or not
a browser is open (a plain `streamlit run app.py` dispatches too, from its first page view):

    python -m ui.serve [streamlit run options...]      # what ./run.sh does
"""
from __future__ import annotations

import sys

from streamlit.web import cli

from core.runs import launcher
from core.runs.store import RunStore


def main(argv: list[str]) -> None:
    launcher.serve(RunStore())  # $STUDIO_DATA_DIR or ./runs, as the app's pages use
    cli.main(["run", "app.py", *argv], prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
