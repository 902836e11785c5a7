"""Security: the shared-password gate, exposure without a password, data paths and run ids that try to
leave their folders, uploads that are never unpickled, no shell strings."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from streamlit import config as st_config

from core.app.access import check_data_path, data_roots, is_loopback
from core.runs.ids import check_run_id
from core import PROJECT_ROOT
from core.data.idx import DataError
from core.app.throttle import Throttle
from core.config import TrainConfig
from tests.support.apptest import page


def give_name(at, name: str) -> None:
    """A shared-password server asks each browser for a display name once, after the password."""
    at.text_input(key="display_name_input").input(name)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def exposed():
    """The server option as `streamlit run --server.address 0.0.0.0` sets it."""
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    yield
    st_config.set_option("server.address", before)


def test_the_gate_is_off_on_loopback_without_a_password(store):
    at = page("train")
    assert not at.exception and at.title[0].value.endswith("Train")
    assert not any(t.label == "Password" for t in at.text_input)


def test_the_gate_asks_for_the_password_and_lets_the_right_one_in(store, monkeypatch):
    monkeypatch.setenv("STUDIO_PASSWORD", "s3cret team")
    monkeypatch.setattr("ui.gate.THROTTLE", Throttle(spacing_s=0.0))
    at = page("runs")
    assert [t.value for t in at.title] == ["🧠 MindSpore Training Studio"]  # nothing of the app is drawn
    assert not at.sidebar.markdown
    at.text_input(key="login_password").input("guess")
    at.button[0].click().run()
    assert any("Wrong password" in e.value for e in at.error)
    assert [t.value for t in at.title] == ["🧠 MindSpore Training Studio"]
    at.text_input(key="login_password").input("s3cret team")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["_access"] == "granted"
    give_name(at, "Ann")
    at.switch_page("app_pages/runs.py").run()
    assert at.title[0].value.endswith("Runs")
    assert "You are Ann (in this browser)" in [c.value for c in at.sidebar.caption], "who this browser is"


def test_an_exposed_server_without_a_password_serves_only_instructions(store, exposed):
    at = page("train")
    text = " ".join(e.value for e in at.error)
    assert "other machines can reach it, but no password is set" in text and "STUDIO_PASSWORD" in text
    assert not any(t.value.endswith("Train") for t in at.title)


def test_an_exposed_server_keeps_data_paths_inside_its_roots(store, exposed, monkeypatch, small_mnist):
    monkeypatch.setenv("STUDIO_PASSWORD", "pw")
    at = page("runs")
    at.text_input(key="login_password").input("pw")
    at.button[0].click().run()
    give_name(at, "Ann")
    at.switch_page("app_pages/data.py").run()
    at.radio(key="data_source").set_value("folder").run()
    at.text_input(key="folder_path").input(str(small_mnist)).run()  # a real MNIST folder, but outside
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert any("outside the folders this server lets users read" in e.value for e in at.error)
    assert at.session_state["config"].data_dir is None
    monkeypatch.setenv("STUDIO_DATA_ROOTS", str(Path(small_mnist).parent))  # the admin allows it
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert at.session_state["config"].data_dir == str(small_mnist)


def test_data_roots_and_traversal(tmp_path, monkeypatch):
    monkeypatch.delenv("STUDIO_DATA_ROOTS", raising=False)
    assert data_roots(exposed=False) is None
    roots = data_roots(exposed=True, store_root=tmp_path)
    assert roots == [PROJECT_ROOT / "data", tmp_path / "datasets"]
    inside = PROJECT_ROOT / "data" / "mnist-5k"
    assert check_data_path(inside, roots) == inside
    for escape in (PROJECT_ROOT / "data" / ".." / "core", "/etc", tmp_path / "datasets-evil"):
        with pytest.raises(DataError, match="outside the folders"):
            check_data_path(escape, roots)
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "link").symlink_to("/etc")
    with pytest.raises(DataError, match="outside the folders"):
        check_data_path(tmp_path / "datasets" / "link", roots)


def test_run_ids_never_name_paths(store):
    for bad in ("../x", "/etc/passwd", ".", "", "20261129-153000-a1b2c3/../../x", "20261129-153000-A1B2C3"):
        with pytest.raises(ValueError, match="is not a run id"):
            store.checkpoint_path(bad)
        with pytest.raises(ValueError, match="is not a run id"):
            store.delete(bad)
    assert check_run_id("20261129-153000-a1b2c3")


def test_deleting_a_tampered_row_whose_id_names_a_path_touches_nothing(store):
    """A store whose row has a path for an id ('../victim', written into the database by hand): delete refuses
    it before touching the database or any folder the id would name."""
    run_id = store.create_run(TrainConfig(network="mlp"), name="tampered", status="completed")
    with sqlite3.connect(store.db_path) as db:
        db.execute("UPDATE runs SET id = '../victim' WHERE id = ?", (run_id,))
    victim = store.root / "victim"  # where checkpoints/../victim points
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    assert store.get("../victim") is not None  # the row is really there
    with pytest.raises(ValueError, match="is not a run id"):
        store.delete("../victim")
    assert (victim / "keep.txt").read_text() == "mine" and store.get("../victim") is not None


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not any(is_loopback(a) for a in ("", None, "0.0.0.0", "::", "192.168.1.5", "studio.example.org"))


def test_uploads_are_never_unpickled_and_size_limited(store):
    """An upload crafted as a pickle that would run code is refused as an unreadable checkpoint."""
    import pickle
    from core.app import model_service
    from core.model.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError
    marker = store.root / "pwned"

    class Evil:
        def __reduce__(self):
            return (Path.touch, (marker,))

    with pytest.raises(CheckpointError):
        model_service.import_checkpoint(store, pickle.dumps(Evil()), "evil.ckpt")
    assert not marker.exists()
    with pytest.raises(CheckpointError, match="MB limit"):
        model_service.import_checkpoint(store, b"\0" * (MAX_CHECKPOINT_BYTES + 1), "huge.ckpt")
    assert store.list_runs() == []
    limit = re.search(r"maxUploadSize\s*=\s*(\d+)", (PROJECT_ROOT / ".streamlit" / "config.toml").read_text())
    assert limit and int(limit.group(1)) * 1_000_000 == MAX_CHECKPOINT_BYTES  # one limit, in one unit (MB)


def test_no_shell_strings_are_built():
    """Processes are started from argument lists only: no shell=True, os.system or os.popen anywhere."""
    sources = [p for d in ("core", "app_pages", "ui") for p in (PROJECT_ROOT / d).rglob("*.py")] + [PROJECT_ROOT / "app.py"]
    offenders = [f"{p.relative_to(PROJECT_ROOT)}: {m.group(0)}" for p in sources
                 for m in re.finditer(r"shell\s*=\s*True|os\.system\(|os\.popen\(", p.read_text())]
    assert len(sources) > 20 and offenders == []


def test_the_right_password_during_a_lockout_is_told_to_wait_not_that_it_is_wrong(store, monkeypatch):
    monkeypatch.setenv("STUDIO_PASSWORD", "right one")
    monkeypatch.setattr("ui.gate.THROTTLE", Throttle(free=1, lockout_s=60.0, spacing_s=0.0))
    monkeypatch.setattr("ui.gate.client_address", lambda: "192.0.2.7")  # AppTest's own address is a new mock each run
    at = page("runs")
    at.text_input(key="login_password").input("a guess")  # one wrong try locks this address out (free=1)
    at.button[0].click().run()
    assert any("Wrong password" in e.value for e in at.error) and any("wait" in w.value for w in at.warning)
    at.text_input(key="login_password").input("right one")
    at.button[0].click().run()
    assert not any("Wrong password" in e.value for e in at.error), "the right password is not 'wrong'"
    assert any("Too many wrong passwords" in w.value for w in at.warning)
