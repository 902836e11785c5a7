"""A SQLite store on a real read-only mount (a tmpfs remounted read-only): its runs are read and exported, and
every write is refused with advice for a file, not for a database server."""
from __future__ import annotations

import subprocess

import pytest

from core.app.run_export import export_runs
from core.config import TrainConfig
from core.runs.people.permissions import os_user
from core.runs.store import DatabaseError, RunStore
from core.runs.store.database import dispose
from tests.support.helpers import cli, small_filesystem


def test_a_store_on_a_read_only_mount_is_read_and_exported_and_refuses_writes(tmp_path):
    folder = tmp_path / "store"
    with small_filesystem(folder, "16m"):
        store = RunStore(folder)
        run_id = store.create_run(TrainConfig(network="mlp", epochs=1), name="kept", status="queued",
                                  exclusive=False, submitter=os_user())
        store.finish(run_id, "stopped", "stopped by request")
        store.server_secret()
        dispose(store.url)  # the pooled connections hold the file
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        try:
            ro = RunStore(folder)
            assert ro.read_only and [r.name for r in ro.list_runs()] == ["kept"]
            assert ro.server_secret() == store.server_secret()
            for fmt in ("csv", "html"):
                out = tmp_path / ("report.html" if fmt == "html" else "tables")
                assert export_runs(ro, [run_id], fmt, out)
            p = cli("core.cli.export_run", run_id, "--format", "csv", "--out", str(tmp_path / "cli-out"),
                    "--store", str(folder))
            assert p.returncode == 0, p.stderr
            with pytest.raises(DatabaseError) as refused:
                ro.update(run_id, name="renamed")
            said = str(refused.value)
            assert "read-only" in said and "copy it" in said and "server runs" not in said, said
            p = cli("core.cli.train", "--network", "mlp", "--no-wait", "--store", str(folder))
            assert p.returncode == 2 and "read-only" in p.stderr and "Traceback" not in p.stderr, p.stderr
            dispose(ro.url)
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True)
