"""One queue rule for everyone and every route: a sweep's queued runs count toward their person's cap, a person
has a bounded number of sweeps open, and an admin cancels all of one person's queue, each cancel recorded."""
from __future__ import annotations

import pytest

from core.config import TrainConfig
from core.messages import ExplainedValueError
from core.runs import sweeps
from core.runs.people.actions import Actions, history
from core.runs.people.permissions import NotAllowed, Person, person
from core.runs.run_queue import RunQueue

CAP = 30


def _big_sweep(n: int) -> sweeps.SweepSpec:
    return sweeps.SweepSpec(TrainConfig(network="mlp", epochs=1), (sweeps.parse_space("learning_rate=1e-4:1e-1"),),
                            "random", n, 1, False, f"flood {n}")


def test_ten_sweeps_of_200_settings_from_one_person_stay_within_the_cap(store, monkeypatch):
    monkeypatch.setenv("STUDIO_MAX_QUEUED_PER_PERSON", str(CAP))
    monkeypatch.setenv("STUDIO_SLOTS", "0")  # nothing starts: everything asked for stays queued
    made, refused = [], []
    for _ in range(10):
        try:
            made.append(sweeps.create(store, _big_sweep(200), submitter="Mallory"))
        except ExplainedValueError as e:
            refused.append(str(e))
        sweeps.advance_all(store)  # as the dispatcher does, again and again
    assert len(made) == 3 and len(refused) == 7
    assert "cancel one on the Sweeps page" in refused[0] and "STUDIO_MAX_OPEN_SWEEPS_PER_PERSON" in refused[0]
    assert store.queued_count("Mallory") <= CAP
    with pytest.raises(ExplainedValueError, match="your sweeps' queued runs count too"):
        RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), "one more", "dashboard", "Mallory")
    other = RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), "Ann's", "dashboard", "Ann")
    assert store.get(other).status == "queued", "another person still queues"


def test_an_admin_cancels_all_of_one_persons_queue_and_each_cancel_is_recorded(store, monkeypatch):
    monkeypatch.setenv("STUDIO_SLOTS", "0")
    sweep_id = sweeps.create(store, _big_sweep(5), submitter="Mallory")
    for i in range(3):
        RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), f"m{i}", "dashboard", "Mallory")
    anns = RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), "Ann's", "dashboard", "Ann")
    with pytest.raises(NotAllowed):
        Actions(store, person("Ann")).clean_up("Mallory")
    runs, swept = Actions(store, Person("Teacher", admin=True)).clean_up("Mallory")
    assert swept == 1 and runs >= 3
    assert store.queued_count("Mallory") == 0 and store.sweep(sweep_id).status == "cancelled"
    assert store.get(anns).status == "queued", "only that person's"
    lines = [h for h in history(store) if h.who == "Teacher"]
    assert sum(h.action == "cancel" for h in lines) == runs and sum(h.action == "cancel_sweep" for h in lines) == 1
    assert any(h.action == "clean_up" and not h.allowed for h in history(store)), "Ann's refused try is recorded"


def test_the_admin_cleans_up_from_the_runs_page(store, monkeypatch):
    from tests.support.apptest import page
    monkeypatch.setenv("STUDIO_SLOTS", "0")
    sweeps.create(store, _big_sweep(5), submitter="Mallory")
    RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), "m", "dashboard", "Mallory")
    anns = RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), "Ann's", "dashboard", "Ann")
    at = page("runs")  # the one user of a local server: its admin
    at.selectbox(key="runs_queue_clean_who").select("Mallory").run()
    button = at.button(key="runs_queue_clean_up")
    assert "Mallory" in button.label
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert store.queued_count("Mallory") == 0 and store.get(anns).status == "queued"
    assert [s.status for s in store.sweeps()] == ["cancelled"]
