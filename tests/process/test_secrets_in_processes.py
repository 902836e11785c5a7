"""No secret in a command line: every process the studio starts for a team's database gets its URL (with the
password) through its environment, which only its own user can read, never through argv, which every local user
can (/proc/PID/cmdline)."""
from __future__ import annotations

import secrets
from pathlib import Path

import psutil

from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.store import RunStore
from core.runs.launch.warm_pool import WarmPool
from tests.support.helpers import wait_for


def _command_lines_holding(text: str) -> list[str]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if text in line:
            found.append(f"{proc.info['pid']}: {line}")
    return found


def _studio_children() -> list[tuple[list[str], dict[str, str]]]:
    """The command line and environment of each live process below this one. A process that has ended (an earlier
    test's child not yet reaped, a zombie, or one that ends while it is read) is left out: the kernel has freed its
    memory, so it has no command line or environment left to show."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            found.append((child.cmdline(), child.environ()))
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return found


def test_no_process_the_studio_starts_has_the_database_password_in_its_command_line(postgres_server, tmp_path,
                                                                                       small_mnist, monkeypatch):
    password = "pw-" + secrets.token_hex(8)
    url = postgres_server.new_database().replace(f"://{postgres_server.user}@",
                                                 f"://{postgres_server.user}:{password}@")
    monkeypatch.setenv("STUDIO_DATABASE_URL", url)  # as a team's app server has it
    store = RunStore(tmp_path / "store", url)
    pool = WarmPool(store)
    pool.fill()  # the warm workers an app server keeps
    config = TrainConfig(network="mlp", mode="pynative", epochs=50, batch_size=16, data_dir=str(small_mnist))
    run_id = launcher.start(store, config)  # its worker process
    try:
        wait_for(lambda: store.get(run_id).step > 3, timeout=120, what="the worker's first steps in PostgreSQL")
        children = _studio_children()
        assert len(children) >= 3, [cmdline for cmdline, _ in children]  # two warm workers and the run's worker
        for cmdline, _ in children:
            assert password not in " ".join(cmdline), cmdline
        assert _command_lines_holding(password) == []
        # the password still reaches the children, through their environment (and the run trains on it)
        assert any(password in environ.get("STUDIO_DATABASE_URL", "") for _, environ in children)
        assert store.get(run_id).status == "running"
    finally:
        launcher.stop(store, run_id)
        pool.close()
        wait_for(lambda: store.get(run_id).status not in ("running", "starting", "stopping"), timeout=60,
                 what="the run to stop")


def test_a_store_hands_its_children_the_database_in_their_environment(tmp_path):
    store = RunStore(tmp_path / "store", "sqlite:///" + str(Path(tmp_path / "elsewhere.sqlite")))
    assert store.command_args() == ["--store", str(store.root)]
    assert store.command_env() == {"STUDIO_DATABASE_URL": store.url}

