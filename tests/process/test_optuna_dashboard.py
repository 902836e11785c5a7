"""Optuna's own dashboard reads the studio's sweeps: optuna-dashboard started on 127.0.0.1 over the run store's
database (the sweeps' Optuna storage) lists the sweep's study and shows its trials (docs/export.md)."""
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from core.runs.store import RunStore
from tests.support.helpers import cli, wait_for
from tests.support.server import free_port


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_optuna_dashboard_lists_a_sweeps_study_and_its_trials(tmp_path, small_mnist):
    root = tmp_path / "store"
    p = cli("core.cli.sweep", "--network", "mlp", "--hidden", "16", "--epochs", "1", "--grid",
            "learning_rate=0.1,0.01", "--seeds", "1", "--data-dir", str(small_mnist), "--sweep-name", "rates",
            "--store", str(root), timeout=600)
    assert p.returncode == 0, p.stderr
    store = RunStore(root)
    port = free_port()
    command = Path(sys.executable).with_name("optuna-dashboard")  # the command pip installs beside python
    dashboard = subprocess.Popen([str(command), store.url, "--host", "127.0.0.1",
                                  "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        studies = wait_for(lambda: _studies(base), timeout=60, what="optuna-dashboard to answer")
        (study,) = studies
        assert study["study_name"] == store.sweeps()[0].id
        detail = get(f"{base}/api/studies/{study['study_id']}")
        trials = detail["trials"]
        assert len(trials) == 2 and {t["state"] for t in trials} == {"Complete"}
        # a list's setting is Optuna's categorical of its indices (the studio's values may be tuples: hidden);
        # each trial carries the value itself as a user attribute, which the dashboard shows
        rates = [next(a["value"] for a in t["user_attrs"] if a["key"] == "learning_rate") for t in trials]
        assert sorted(float(r) for r in rates) == [0.01, 0.1]
        assert all(0 <= t["values"][0] <= 1 for t in trials)  # each setting's validation accuracy
        with urllib.request.urlopen(f"{base}/dashboard", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
    finally:
        dashboard.terminate()
        out, _ = dashboard.communicate(timeout=20)
    assert "127.0.0.1" in out


def _studies(base: str):
    try:
        return get(f"{base}/api/studies")["study_summaries"]
    except OSError:
        return None
