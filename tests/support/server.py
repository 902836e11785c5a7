"""Start and stop a real `streamlit run app.py` on 127.0.0.1 for browser and load tests."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core import PROJECT_ROOT
from tests.support import leftovers

CHROMIUM = "/usr/bin/chromium"  # Debian's Chromium, as a user runs it: what the benches measure
# The tests' browser: Debian's build of Chromium's headless shell when installed (.ci/run installs it), the same
# Blink drawing the same pages without the desktop browser around them; Playwright runs it for headless Chromium
# by default. On this 2-core machine it took ~10 % less CPU than CHROMIUM on tests/browser/test_browser_lesson.py
# (docs/testing.md).
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
AS_DEPLOYED = {"STUDIO_PRELOAD": "1"}  # the benchmarks' servers: the preload on, as ./run.sh's, whatever the caller's environment
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    log_path: Path

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            self.proc.wait(timeout=20)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(store: Path, port: int | None = None, extra_env: dict | None = None,
                 address: str = "127.0.0.1", token: str | None = None, code: Path = PROJECT_ROOT) -> Server:
    """Start the app with its run store in `store`; returns once /_stcore/health answers. With `token`, the
    server asks for its access link (as ./run.sh's does) and that is its token; without, it is a trusted
    single-user machine's (STUDIO_OPEN=1, the pages' tests). `code`: the checkout whose app it serves
    (bench/page_load_cost.py compares two). Without `port`, a free one: free_port's port can be taken by
    another process before the server binds it, and then the server starts again on another."""
    for _ in range(_PORT_TRIES - 1 if port is None else 0):
        with contextlib.suppress(_PortTaken):
            return _start_server_once(store, free_port(), extra_env, address, token, code)
    return _start_server_once(store, port or free_port(), extra_env, address, token, code)


_PORT_TRIES = 3
_PORT_TAKEN = "is not available"  # Streamlit's log line when the port it was given is in use
_LISTENING = "You can now view your Streamlit app"  # its log line once it listens on its port


class _PortTaken(RuntimeError):
    pass


def _start_server_once(store: Path, port: int, extra_env: dict | None, address: str, token: str | None,
                       code: Path) -> Server:
    # Warm workers (two processes loading MindSpore at the server's start) are off unless a test asks for them:
    # on two cores they would slow every browser test's start; tests/process/test_warm_pool.py and the teams test
    # cover them. The preload of MindSpore after the first page stays on, as deployed (STUDIO_PRELOAD=0 turns it
    # off: tests/process/test_server_preload.py).
    env = dict(os.environ, STUDIO_DATA_DIR=str(store), PYTHONPATH=str(code), STUDIO_DISPATCH="1",
               STUDIO_WARM_WORKERS="0")
    if token is None:
        env["STUDIO_OPEN"] = "1"
    else:
        env.pop("STUDIO_OPEN", None)
        env["STUDIO_TOKEN"] = token
    env.update(extra_env or {})
    Path(store).mkdir(parents=True, exist_ok=True)
    leftovers.remember(store)  # the runs it starts end with the test module (tests/conftest.py)
    log_path = Path(store) / f"server-{port}-{time.time_ns()}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port),  # as ./run.sh
                                 "--server.address", address, "--server.headless", "true"],
                                cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    server = Server(proc, url, log_path)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            # ours answers: its log says it listens (before it does, the port may answer for another server)
            if (urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok"
                    and _LISTENING in server.log()):
                return server
        except OSError:
            time.sleep(0.3)
        if proc.poll() is not None:
            break
    server.stop(kill=True)
    if f"Port {port} {_PORT_TAKEN}" in server.log():
        raise _PortTaken(server.log()[-2000:])
    raise RuntimeError("streamlit did not start: " + server.log()[-2000:])


def _test_browser() -> Path:
    """The browser the tests drive: HEADLESS_SHELL, else CHROMIUM."""
    return Path(HEADLESS_SHELL) if Path(HEADLESS_SHELL).exists() else Path(CHROMIUM)


def launch_chromium(playwright):
    """A headless Chromium for a test (_test_browser)."""
    return playwright.chromium.launch(executable_path=str(_test_browser()), args=CHROMIUM_ARGS)


def require_chromium(pytest) -> None:
    """Skip (or, with STUDIO_REQUIRE_BROWSER set as in CI, fail) when the browser the tests drive is missing."""
    if not _test_browser().exists():
        if os.environ.get("STUDIO_REQUIRE_BROWSER"):
            raise RuntimeError("Chromium is required here: apt-get install chromium chromium-driver")
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver); CI runs this test",
                    allow_module_level=True)


@contextmanager
def served_browser(root: Path, shots: Path | None = None, extra_env: dict | None = None):
    """An app server on the store in root and one headless Chromium: (url, store, browser) while it lasts; the
    server's log tail is printed at the end (pytest shows it when a test failed)."""
    from playwright.sync_api import sync_playwright  # deferred: only browser tests need Playwright
    from core.runs.store import RunStore
    srv = start_server(root, extra_env=extra_env)
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            yield srv.url, RunStore(root), browser
            browser.close()
    finally:
        srv.stop()
        print(srv.log()[-3000:])
