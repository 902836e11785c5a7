"""The command line knows who calls it from the OS, and honours the app server's admins only; exports follow the
pages' rule (owner or admin), leave a history line and never overwrite without --force; CSV cells cannot carry
formulas into a spreadsheet."""
from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

from core import PROJECT_ROOT
from core.app.table_files import formula_safe
from core.config import TrainConfig
from core.runs.people.actions import Actions, history
from core.runs.people.permissions import NotAllowed, Person, keep_admins, os_user

STORE_ON_DISK = True  # its command lines are child processes, which open the store
ME = os_user()


def _cli(store, *args, **env):
    full_env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), **env)
    return subprocess.run([sys.executable, "-m", *args, "--store", str(store.root)], cwd=PROJECT_ROOT, env=full_env,
                          capture_output=True, text=True, timeout=300)


def _teachers_run(store, name="Teacher's run"):
    return store.create_run(TrainConfig(network="mlp", epochs=1), name=name, status="queued", exclusive=False,
                            submitter="Teacher")


def test_a_command_line_takes_its_user_from_the_os_not_the_environment(store):
    run_id = _teachers_run(store)
    p = _cli(store, "core.cli.control", "stop", run_id, LOGNAME="Teacher", USER="Teacher", STUDIO_ADMINS=ME)
    assert p.returncode == 3 and "refused" in p.stderr, p.stderr
    assert store.get(run_id).status == "queued"
    line = history(store)[0]
    assert (line.who, line.action, line.allowed) == (ME, "stop", False), "the history names the OS user"


def test_admins_come_from_the_app_servers_list_kept_in_the_store(store, monkeypatch):
    run_id = _teachers_run(store)
    monkeypatch.setenv("STUDIO_ADMINS", ME)  # as the app server was started
    keep_admins(store)
    monkeypatch.delenv("STUDIO_ADMINS")
    p = _cli(store, "core.cli.control", "rename", run_id, "--name", "tidied", STUDIO_ADMINS="")
    assert p.returncode == 0, p.stderr
    assert store.get(run_id).name == "tidied"


def test_exports_follow_the_owner_rule_and_are_recorded(store, tmp_path):
    theirs = _teachers_run(store)
    p = _cli(store, "core.cli.export_run", theirs, "--format", "csv", "--out", str(tmp_path / "out"),
             LOGNAME="Teacher")
    assert p.returncode == 3 and "refused" in p.stderr and not (tmp_path / "out").exists()
    mine = store.create_run(TrainConfig(network="mlp", epochs=1), name="=HYPERLINK(\"http://evil\",\"x\")",
                            status="queued", exclusive=False, submitter=ME)
    p = _cli(store, "core.cli.export_run", mine, "--format", "csv", "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "out" / "runs.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert row["name"] == "'=HYPERLINK(\"http://evil\",\"x\")", "a formula is written as text"
    exports = [(h.who, h.allowed) for h in history(store) if h.action == "export"]
    assert exports == [(ME, True), (ME, False)]
    viewer = Actions(store, Person("Student", viewer=True))
    with pytest.raises(NotAllowed):
        viewer.export_records([store.get(mine)], "csv")


def test_an_export_does_not_overwrite_without_force(store, tmp_path):
    mine = store.create_run(TrainConfig(network="mlp", epochs=1), name="mine", status="queued", exclusive=False,
                            submitter=ME)
    report = tmp_path / "report.html"
    report.write_text("my notes")
    p = _cli(store, "core.cli.export_run", mine, "--format", "html", "--out", str(report))
    assert p.returncode == 2 and "--force" in p.stderr and report.read_text() == "my notes"
    p = _cli(store, "core.cli.export_run", mine, "--format", "html", "--out", str(report), "--force")
    assert p.returncode == 0, p.stderr
    assert report.read_text() != "my notes"


def test_formula_cells_are_defused_and_numbers_kept():
    import pandas as pd
    frame = pd.DataFrame({"name": ["=1+1", "+x", "-y", "@z", "\tt", "plain", None], "loss": [-0.5] * 7})
    safe = formula_safe(frame)
    assert safe["name"].tolist()[:6] == ["'=1+1", "'+x", "'-y", "'@z", "'\tt", "plain"]
    assert safe["loss"].tolist() == [-0.5] * 7
