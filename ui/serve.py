"""Start the app server with its dispatcher running from the start, so that queued runs start whether or not
a browser is open, and with MindSpore loading in the background (a plain `streamlit run app.py` does both too,
from its first page view):

    python -m ui.serve [streamlit run options...]      # what ./run.sh does
"""
from __future__ import annotations

import sys

from core.runtime import prepare_process

prepare_process(None)  # the app process's oneDNN cap, before anything here imports mindspore

from streamlit.web import cli  # noqa: E402

from core.app import model_service  # noqa: E402
from core.runs import launcher  # noqa: E402
from core.runs.store import RunStore  # noqa: E402


def main(argv: list[str]) -> None:
    store = RunStore()  # $STUDIO_DATA_DIR or ./runs, as the app's pages use
    launcher.serve(store)
    model_service.preload(store)  # MindSpore loads while Streamlit starts, not when the first page needs it
    cli.main(["run", "app.py", *argv], prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
