"""What a script (core.track) hands the studio: its NaN and ±inf kept in its epochs, never its best, and every export of
the run writes them (TensorBoard used to crash on a NaN validation loss, and inf was stored as the best)."""
from __future__ import annotations

import math

from core.app.run_export import export_runs
from core.track import track_run

BOTH_DATABASES = True


def test_every_export_of_a_run_that_logged_nan_and_inf_is_written(store, tmp_path):
    with track_run("diverged", {"lr": 10.0}, store=store) as run:
        run.log_step(1.0)
        run.log_validation(math.nan, 0.5)
        run.log_step(2.0)
        run.log_epoch(val_loss=math.inf, val_acc=math.inf)
        run.log_step(math.nan)
        run.log_epoch(val_loss=0.9, val_acc=0.7)
    run_id = store.list_runs()[0].id
    row = store.get(run_id)
    assert row.best_val_acc == 0.7 and row.best_val_loss == 0.9, "only finite values are a run's best"
    for fmt in ("tensorboard", "csv", "parquet", "html"):
        out = tmp_path / (f"{fmt}.html" if fmt == "html" else fmt)
        written = export_runs(store, [run_id], fmt, out)
        assert written and all(p.exists() for p in written), fmt
    epochs_csv = (tmp_path / "csv" / "epochs.csv").read_text()
    assert "inf" in epochs_csv, "±inf is written as a value"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(next((tmp_path / "tensorboard").iterdir()))).Reload()
    assert math.isinf(events.Scalars("epoch/val_acc")[0].value)
    assert abs(events.Scalars("epoch/val_acc")[1].value - 0.7) < 1e-6


def test_a_scripts_settings_are_bounded(store):
    import pytest
    from core.messages import ExplainedValueError
    with pytest.raises(ExplainedValueError, match="at most 64 KB"), \
            track_run("huge", {"blob": "x" * (20 * 1024 * 1024)}, store=store):
        pass
    with pytest.raises(ExplainedValueError, match="at most 500"), \
            track_run("many", {f"k{i}": i for i in range(501)}, store=store):
        pass
    assert store.list_runs() == [], "nothing was recorded"
    with track_run("fine", {f"k{i}": i for i in range(500)}, store=store):
        pass
    assert len(store.list_runs()) == 1
