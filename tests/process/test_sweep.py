"""Sweeps with Optuna (ask-and-tell): settings to vary, a grid with a seed group per setting from the command
line (JSON), pruning of a bad setting after its first epoch, and a sweep carried on from its stored study."""
from __future__ import annotations

import json

import optuna
import pytest

from core.config import TrainConfig
from core.messages import ExplainedValueError
from core.runs import sweeps
from core.runs.sweeps import lifecycle
from core.runs.store import RunStore
from tests.support.helpers import cli

BOTH_DATABASES = True  # every test here runs on SQLite and on a real PostgreSQL (tests/conftest.py)

TINY = ["--network", "mlp", "--hidden", "32", "--epochs", "1"]


def test_settings_to_vary_are_lists_or_ranges_and_bad_ones_are_explained():
    assert sweeps.parse_space("learning_rate=0.1,0.01") == sweeps.Space("learning_rate", (0.1, 0.01))
    assert sweeps.parse_space("learning-rate=1e-4:1e-1:log") == sweeps.Space("learning_rate", low=1e-4, high=0.1, log=True)
    assert sweeps.parse_space("hidden=64,64;128").values == ((64, 64), (128,))
    assert sweeps.parse_space("optimizer=adam,sgd").values == ("adam", "sgd")
    for bad, words in (("learning_rate", "name=a,b,c"), ("seed=1,2", "cannot be varied"), ("learning_rate=0.1:0.01", "low below high"),
                       ("batch_size=64,x", "batch_size")):
        with pytest.raises(ExplainedValueError, match=words):
            sweeps.parse_space(bad)
    spec = sweeps.SweepSpec(TrainConfig(), (sweeps.parse_space("learning_rate=1e-3:1e-1"),), "grid")
    assert any(m.key == "sweep_grid_needs_lists" for m in spec.errors())
    assert any(m.key == "sweep_needs_validation"
               for m in sweeps.SweepSpec(TrainConfig(val_fraction=0.0), spec.spaces, "random", 3).errors())
    assert sweeps.SweepSpec(TrainConfig(), (sweeps.parse_space("learning_rate=0.1,0.2,0.3"),
                                            sweeps.parse_space("batch_size=32,64")), "grid").planned_trials == 6


def test_a_grid_with_two_seeds_per_setting_runs_from_the_command_line_and_prints_json(store, small_mnist):
    store_dir = store.root  # and its database: $STUDIO_DATABASE_URL (set by the fixture on PostgreSQL)
    p = cli("core.cli.sweep", *TINY, "--grid", "learning_rate=0.1,0.01", "--seeds", "2", "--data-dir", str(small_mnist),
            "--store", str(store_dir), "--json", timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    trials = out["trials"]
    assert len(trials) == 4 and {t["status"] for t in trials} == {"completed"}
    assert sorted((t["config"]["learning_rate"], t["seed"]) for t in trials) == [(0.01, 42), (0.01, 43), (0.1, 42), (0.1, 43)]
    assert all(0 < t["best_val_acc"] <= 1 for t in trials)
    study = optuna.load_study(study_name=out["sweep"], storage=store.url)  # the study is in the store's database
    values = sorted(t.value for t in study.trials)
    by_lr = {}
    for t in trials:
        by_lr.setdefault(t["config"]["learning_rate"], []).append(t["best_val_acc"])
    assert values == pytest.approx(sorted(sum(v) / 2 for v in by_lr.values())), "Optuna is told each seed group's mean"
    runs = RunStore(store_dir).list_runs()
    assert {r.source for r in runs} == {"sweep"} and {r.sweep for r in runs} == {out["sweep"]}


def test_a_setting_far_below_the_others_is_pruned_after_an_epoch(store, small_mnist):
    store_dir = store.root
    p = cli("core.cli.sweep", "--network", "mlp", "--hidden", "32", "--epochs", "3", "--data-dir", str(small_mnist),
            "--grid", "learning_rate=0.1,0.05,0.000001,0.000002", "--prune", "--store", str(store_dir), "--json",
            timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    pruned = [t for t in out["trials"] if t["status"] == "pruned"]
    assert pruned and all(t["config"]["learning_rate"] < 1e-5 for t in pruned)
    assert all(len(store.epochs(t["run_id"])) < 3 for t in pruned), "pruned before its last epoch"
    study = optuna.load_study(study_name=out["sweep"], storage=store.url)
    assert sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials) == len(pruned)


def test_a_sweep_carries_on_from_its_stored_study_after_a_restart(store, small_mnist):
    """Created, then the process that made it is gone: a later process (an app server, or --resume) asks
    Optuna for the next settings from the stored study and finishes it."""
    spec = sweeps.SweepSpec(TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist)),
                            (sweeps.parse_space("learning_rate=1e-3:1e-1:log"),), "tpe", trials=3, seeds=1)
    sweep_id = sweeps.create(store, spec, submitter="ann")
    assert len(store.list_runs()) == 1, "TPE asks one setting per slot, learning from the finished ones"
    p = cli("core.cli.sweep", "--resume", sweep_id, "--store", str(store.root), "--json", timeout=600)
    assert p.returncode == 0, p.stderr
    trials = json.loads(p.stdout)["trials"]
    assert [t["trial"] for t in trials] == [0, 1, 2] and {t["status"] for t in trials} == {"completed"}
    assert len({t["config"]["learning_rate"] for t in trials}) == 3


def test_the_sweeps_page_shows_settings_best_first_with_their_seed_spread_and_promotes_the_best(store, small_mnist):
    """A finished sweep (trained here), then the page: progress, the table with ⭐ on the best, the linked
    charts, and Promote queueing the best setting with more epochs."""
    from core.runs.launch import launcher
    from tests.support.apptest import page
    from tests.support.helpers import wait_for
    spec = sweeps.SweepSpec(TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist)),
                            (sweeps.parse_space("learning_rate=0.1,0.000001"),), "grid", seeds=2)
    sweep_id = sweeps.create(store, spec, submitter="ann")
    dispatcher = launcher.dispatcher_for(store)
    wait_for(lambda: dispatcher.tick() is not None and sweeps.is_done(store, sweep_id), timeout=300, what="the sweep")
    at = page("sweeps")
    assert not at.exception, [e.value for e in at.exception]
    (bar,) = at.get("progress")
    assert bar.value == 100 and "2 of 2 settings done (seeds each: 2) · completed 2" in bar.proto.text
    table = at.table[0].value
    assert list(table.index)[0].startswith("⭐") and "learning_rate = 0.1" in table.iloc[0, 0]
    assert table.iloc[0]["seeds done"] == "2/2" and "–" in table.iloc[0]["seeds: min – max"]
    assert table.index.name == "rank", "the table's number is a rank, best first, not the setting's number"
    named = {r.name.split(" learning_rate=")[0].rsplit(" ", 1)[-1] for r in store.list_runs()}
    assert named == {"#1", "#2"}, "run names count the settings from 1"
    assert len(at.get("plotly_chart")) == 2  # parallel coordinates + curves
    next(b for b in at.button if b.label.startswith("🏆")).click().run()
    promoted = next(r for r in store.list_runs() if r.source == "dashboard")
    assert promoted.config.learning_rate == 0.1 and promoted.config.epochs == 3 and promoted.config.seed == 42


def test_advancers_at_once_never_ask_for_more_settings_than_planned(store, monkeypatch):
    """The app server's dispatcher, the page that created the sweep and a waiting command line all advance it
    (seen in Chromium before the lock: 6 settings for a planned 4)."""
    import threading
    spec = sweeps.SweepSpec(TrainConfig(network="mlp"), (sweeps.parse_space("learning_rate=1e-3:1e-1:log"),),
                            "random", trials=4)
    with monkeypatch.context() as m:
        m.setattr(lifecycle, "advance", lambda *a, **k: None)  # created, nothing asked yet
        sweep_id = sweeps.create(store, spec, submitter="ann")
    assert store.list_runs() == []
    threads = [threading.Thread(target=sweeps.advance, args=(store, sweep_id)) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    runs = store.list_runs()
    assert len(runs) == 4 and sorted(r.trial for r in runs) == [0, 1, 2, 3]


def test_a_grid_too_big_is_refused_and_a_sweep_can_be_cancelled_by_its_owner_only(store, monkeypatch):
    """10⁶ combinations are refused with what to do (the cap applies to a full grid too); a sweep holds at most
    ASK_AT_ONCE settings open, so it never floods the queue; Cancel closes it: queued runs cancelled, nothing
    more asked, and only its owner or an admin may."""
    from core.runs.people.actions import Actions
    from core.runs.people.permissions import NotAllowed, person
    spaces = tuple(sweeps.parse_space(f"{n}=" + ",".join(str(v) for v in range(1, 101)))
                   for n in ("batch_size", "epochs"))
    huge = sweeps.SweepSpec(TrainConfig(network="mlp"), spaces + (sweeps.parse_space(
        "learning_rate=" + ",".join(f"0.0{i:02d}1" for i in range(100))),), "grid")
    with pytest.raises(ExplainedValueError) as e:
        sweeps.create(store, huge, submitter="ann")
    assert "1,000,000 combinations" in str(e.value) and "at most 200" in str(e.value)
    assert store.sweeps() == [] and store.list_runs() == []
    big = sweeps.SweepSpec(TrainConfig(network="mlp"), (sweeps.parse_space(
        "learning_rate=" + ",".join(f"0.{i:03d}1" for i in range(150))),), "grid", seeds=2)
    sweep_id = sweeps.create(store, big, submitter="ann")
    assert len(store.list_runs()) == sweeps.ASK_AT_ONCE * 2, "a bounded number of settings queued at once"
    sweeps.advance(store, sweep_id)
    assert len(store.list_runs()) == sweeps.ASK_AT_ONCE * 2, "no more while those are open: the queue is not flooded"
    info = next(s for s in sweeps.list_sweeps(store) if s.id == sweep_id)
    with pytest.raises(NotAllowed):
        Actions(store, person("bob", proven=False)).cancel_sweep(info)
    assert Actions(store, person("ann", proven=False)).cancel_sweep(info) == sweeps.ASK_AT_ONCE * 2
    assert {r.status for r in store.list_runs()} == {"cancelled"} and store.sweep(sweep_id).status == "cancelled"
    sweeps.advance_all(store)
    assert len(store.list_runs()) == sweeps.ASK_AT_ONCE * 2, "a cancelled sweep asks for nothing more"
    assert [(h.who, h.action, h.allowed) for h in store.history()][:2] == [("ann", "cancel_sweep", True),
                                                                          ("bob", "cancel_sweep", False)]


def test_the_sweeps_page_cancels_an_open_sweep(store):
    """Cancel sweep on its page: queued runs cancelled, the sweep shown as cancelled, the button gone."""
    spec = sweeps.SweepSpec(TrainConfig(network="mlp"), (sweeps.parse_space("learning_rate=0.1,0.05,0.02"),), "grid")
    sweep_id = sweeps.create(store, spec, submitter="")
    from tests.support.apptest import page
    at = page("sweeps")
    at.button(key="cancel_sweep").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert store.sweep(sweep_id).status == "cancelled" and {r.status for r in store.list_runs()} == {"cancelled"}
    assert not any(b.key == "cancel_sweep" for b in at.button)


@pytest.mark.parametrize("sampler", ["grid", "random", "tpe"])
def test_configures_sweep_section_starts_with_its_own_defaults_for_every_search(store, sampler):
    from tests.support.apptest import page

    at = page("configure")
    at.selectbox(key="sweep_sampler").set_value(sampler).run()
    at.button(key="sweep_start").click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    (sweep,) = store.sweeps()
    runs = store.sweep_runs(sweep.id)
    assert runs and {r.config.learning_rate for r in runs} <= {0.001, 0.01, 0.1} if sampler == "grid" else runs
    if sampler == "grid":
        assert sorted({r.config.learning_rate for r in runs}) == [0.001, 0.01, 0.1]


def test_a_sweep_over_two_settings_shows_which_mattered_most_on_a_log_axis(store, small_mnist):
    """Optuna's parameter importance on the Sweeps page once two settings vary: a learning rate that cannot
    learn (1e-6) against one that does (0.1), and a batch size that matters far less; the rates, five decades
    apart, on a log axis. (Configure's own defaults, started in a browser: tests/browser/test_browser_queue.py.)"""
    import json as json_

    from core.runs.launch import launcher
    from tests.support.apptest import page
    from tests.support.helpers import wait_for
    spec = sweeps.SweepSpec(TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist)),
                            (sweeps.parse_space("learning_rate=0.1,0.000001"), sweeps.parse_space("batch_size=32,64")),
                            "grid", seeds=1)
    sweep_id = sweeps.create(store, spec, submitter="ann")
    dispatcher = launcher.dispatcher_for(store)
    # a tick a second, as the app's dispatcher does (ticking ten times a second held SQLite's write lock often
    # enough to slow the runs' own writes several times over)
    wait_for(lambda: dispatcher.tick() is not None and sweeps.is_done(store, sweep_id), timeout=300,
             what="the sweep", every=1.0)
    info = next(i for i in sweeps.list_sweeps(store) if i.id == sweep_id)
    weights = sweeps.importances(store, info)
    assert set(weights) == {"learning_rate", "batch_size"} and sum(weights.values()) == pytest.approx(1)
    assert weights["learning_rate"] > weights["batch_size"]
    at = page("sweeps")
    assert not at.exception, [e.value for e in at.exception]
    assert "Which setting mattered most" in [h.value for h in at.subheader]
    charts = [json_.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")]
    rate_axis = next(c for c in charts if c["type"] == "parcoords")["dimensions"][0]
    assert rate_axis["label"] == "Learning rate (log)" and rate_axis["ticktext"][0] == "1e-06"
    batch_axis = next(c for c in charts if c["type"] == "parcoords")["dimensions"][1]
    assert (batch_axis["tickvals"], batch_axis["ticktext"]) == ([32.0, 64.0], ["32", "64"]), "ticked at the values tried"
    bars = next(c for c in charts if c["type"] == "bar")
    assert bars["y"][0] == "Learning rate"  # largest first
    assert not any("#" in str(rank) for rank in at.table[0].value.index), "named by values, not trial numbers"
