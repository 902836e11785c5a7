"""A server loads MindSpore in the background after its first page (core/app/model_service.preload), so that the
first Evaluate or Draw does not wait for it; STUDIO_PRELOAD=0 leaves it to the first page that needs it."""
import subprocess
import sys
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg

from tests.support.helpers import let_pass, wait_for
from tests.support.server import start_server

WS_CLIENT = Path(__file__).resolve().parents[1] / "support" / "ws_client.py"


def _open_a_page(url: str) -> None:
    """One run of the Runs page, as a browser's first visit asks for it (no MindSpore in that page)."""
    msg = BackMsg()
    msg.rerun_script.page_name = "runs"
    done = subprocess.run([sys.executable, str(WS_CLIENT), url.replace("http://", "ws://") + "/_stcore/stream",
                           msg.SerializeToString().hex()], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Runs" in done.stdout, done.stderr[-2000:]


def _has_mindspore(pid: int) -> bool:
    return "mindspore/_c_expression" in Path(f"/proc/{pid}/maps").read_text()


def test_a_server_loads_mindspore_after_its_first_page_unless_told_not_to(tmp_path):
    preloading = start_server(tmp_path / "a", extra_env={"STUDIO_PRELOAD": "1"})  # as ./run.sh's
    not_preloading = start_server(tmp_path / "b", extra_env={"STUDIO_PRELOAD": "0"})
    try:
        assert not _has_mindspore(preloading.proc.pid), "nothing loads MindSpore before the first page"
        _open_a_page(not_preloading.url)
        _open_a_page(preloading.url)
        wait_for(lambda: _has_mindspore(preloading.proc.pid), 60, "MindSpore in the server after its first page")
        let_pass(2, "the other server, whose page ran first, staying without MindSpore")
        assert not _has_mindspore(not_preloading.proc.pid)
    finally:
        preloading.stop()
        not_preloading.stop()
