"""The Sweeps page's ranges, chosen under its chart, span what the sweep declared, not only the settings asked
so far: a TPE sweep asks for one setting at a time, and a range chosen while it runs stays as chosen."""
from __future__ import annotations

import pytest

from core.config import TrainConfig
from core.runs import sweeps
from tests.support.apptest import page


def _finish_open_settings(store, sweep_id: str, accuracy: float) -> None:
    """Each queued run of the sweep ends as a training would have it end, then the sweep asks for more (as the
    app server's dispatcher does after each run)."""
    for run in store.sweep_runs(sweep_id):
        if run.status == "queued":
            store.update(run.id, status="completed", best_val_acc=accuracy)
    sweeps.advance(store, sweep_id)


def test_a_range_chosen_while_a_tpe_sweep_asks_for_settings_stays_as_chosen(store):
    spec = sweeps.SweepSpec(TrainConfig(network="mlp", epochs=1),
                            (sweeps.parse_space("learning_rate=1e-3:1e-1:log"),), "tpe", trials=4)
    sweep_id = sweeps.create(store, spec, submitter="")
    assert len(store.sweep_runs(sweep_id)) == 1, "TPE asks for one setting at a time (one slot)"
    _finish_open_settings(store, sweep_id, 0.80)
    assert len(store.sweep_runs(sweep_id)) == 2
    at = page("sweeps")
    assert not at.exception, [e.value for e in at.exception]
    key = f"sel_{sweep_id}_learning_rate"
    chooser = at.slider(key=key)
    assert (chooser.min, chooser.max) == (pytest.approx(1e-3), pytest.approx(1e-1)), "the declared range"
    chooser.set_range(2e-3, 1e-1).run()
    _finish_open_settings(store, sweep_id, 0.85)
    _finish_open_settings(store, sweep_id, 0.90)
    assert len(store.sweep_runs(sweep_id)) == 4
    at.run()  # the page's next poll
    assert not at.exception, [e.value for e in at.exception]
    chosen = at.slider(key=key)
    assert (chosen.min, chosen.max) == (pytest.approx(1e-3), pytest.approx(1e-1))
    assert chosen.value == (pytest.approx(2e-3), pytest.approx(1e-1)), "the range chosen before is kept"
    shown = next(c.value for c in at.caption if c.value.startswith("Curves of"))
    inside = sum(r.config.learning_rate >= 2e-3 - 1e-12 for r in store.sweep_runs(sweep_id))
    assert shown.startswith(f"Curves of {inside} of 4 settings"), shown
