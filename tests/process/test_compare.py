"""Compare runs: settings that differ, curves on a common axis, the Compare page, and re-running a run
reproduces it (same seed, same settings: same losses)."""
import json

import numpy as np

from core.runs.launch import launcher
from core.app.comparison import config_differences, curves
from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.training.events import EpochMetrics, EventLog, StepEvent
from core.training.loop import train
from tests.support.apptest import page
from tests.support.helpers import wait_for


def fake_run(store, config, name, losses, accs):
    run_id = store.create_run(config, name=name, source="cli", exclusive=False)
    store.add_steps(run_id, [(i + 1, 1 + i // 10, loss, 0.1 * (i + 1)) for i, loss in enumerate(losses)],
                    step=len(losses))
    for e, acc in enumerate(accs, 1):
        store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1 / e, train_acc=acc, val_loss=1 / e,
                                 val_acc=acc, epoch_seconds=1.0, samples_per_s=100.0, elapsed=float(e)))
    store.update(run_id, best_val_acc=max(accs), best_epoch=len(accs), epoch=len(accs))
    store.finish(run_id, "completed")
    return run_id


def test_differences_and_common_axes(store):
    a = TrainConfig()
    b = a.with_(learning_rate=0.05, optimizer="adam")
    assert config_differences([a, b]) == {"learning_rate", "optimizer"} and config_differences([a, a]) == set()
    ra = fake_run(store, a, "a", [2.0, 1.5, 1.0], [0.8, 0.9])
    rb = fake_run(store, b, "b", [2.2, 1.2], [0.85])
    by_step = curves(store, [ra, rb], "step")
    assert {(r["run"], r["x"]) for r in by_step} == {(ra, 1), (ra, 2), (ra, 3), (rb, 1), (rb, 2)}
    by_epoch = curves(store, [ra, rb], "epoch")
    assert {r["metric"] for r in by_epoch} == {"train_loss", "val_loss", "train_acc", "val_acc"}
    assert max(r["x"] for r in by_epoch if r["run"] == ra) == 2
    by_time = curves(store, [ra], "elapsed")
    assert any(r["metric"] == "step loss" for r in by_time) and any(r["metric"] == "val_acc" for r in by_time)


def test_the_compare_page_highlights_differences_and_re_runs(store, small_mnist):
    cfg = TrainConfig(network="mlp", mode="pynative", epochs=50, batch_size=16, data_dir=str(small_mnist))
    fake_run(store, cfg, "first", [2.0, 1.0], [0.7])
    fake_run(store, cfg.with_(learning_rate=0.05), "second", [2.0, 0.8], [0.8])
    at = page("compare")
    assert not at.exception, [e.value for e in at.exception]
    assert any("differ are highlighted: Learning rate" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 1  # the curves; the parallel coordinates are drawn when asked
    at.toggle(key="compare_parallel").set_value(True).run()
    assert len(at.get("plotly_chart")) == 2
    dims = json.loads(at.get("plotly_chart")[1].proto.spec)["data"][0]["dimensions"]
    assert {d["label"]: d["ticktext"] for d in dims if "ticktext" in d}["Learning rate"] == ["0.01", "0.05"]
    at.radio(key="compare_axis").set_value("epoch").run()
    assert not at.exception
    at.button(key="rerun").click().run()
    rerun = wait_for(lambda: next((r for r in store.list_runs() if r.name.startswith("re-run of")), None),
                     what="the re-run")
    assert rerun.config == cfg.with_(learning_rate=0.05) and rerun.name == "re-run of second"  # the newest
    launcher.stop(store, rerun.id)
    wait_for(lambda: not store.get(rerun.id).active, timeout=30, what="the re-run to stop")


def test_a_re_run_reproduces_the_run(small_mnist):
    """What Re-run relies on: the same config (seed included) gives the same training, step for step."""
    cfg = TrainConfig(network="mlp", mode="graph", epochs=2, augment=True, data_dir=str(small_mnist))
    folder = validate_mnist_dir(small_mnist)
    runs = []
    for _ in range(2):
        events = EventLog()
        result = train(cfg, folder, [events])
        runs.append((np.array([e.loss for e in events.of(StepEvent)]), [h.val_acc for h in result.history]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-5, atol=1e-6)
    assert runs[0][1] == runs[1][1]


def test_the_pages_re_run_trains_the_same_steps_in_a_new_worker_process(store, small_mnist, monkeypatch):
    """What the Compare page's Re-run does for real: a new worker process trains the recorded config, and its
    losses equal the original run's step for step (not two trainings inside one process: workers are not reused
    here; a reused worker's run against a new process's: tests/process/test_warm_pool.py)."""
    monkeypatch.setenv("STUDIO_REUSE_WORKERS", "0")
    cfg = TrainConfig(network="mlp", mode="graph", epochs=2, data_dir=str(small_mnist))
    original = launcher.start(store, cfg, name="original")
    wait_for(lambda: store.get(original).status == "completed", timeout=180, what="the original run")
    fake_run(store, cfg.with_(learning_rate=0.05), "another", [2.0, 1.0], [0.7])  # Compare needs two
    at = page("compare")
    at.selectbox(key="rerun_which").set_value(original).run()
    at.button(key="rerun").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rerun = wait_for(lambda: next((r for r in store.list_runs() if r.name == "re-run of original"), None),
                     what="the re-run")
    done = wait_for(lambda: (r := store.get(rerun.id)).status == "completed" and r, timeout=180, what="the re-run")
    assert done.pid and done.pid != store.get(original).pid  # its own worker process
    before, again = store.steps(original), store.steps(rerun.id)
    assert len(before) == len(again) > 10
    np.testing.assert_allclose([r.loss for r in again], [r.loss for r in before], rtol=1e-6, atol=1e-7)
    assert [e.val_acc for e in store.epochs(rerun.id)] == [e.val_acc for e in store.epochs(original)]


def test_compare_charts_and_table_read_well(store):
    """One distinct colour per run, facet titles without "=", whole epochs on the epoch axis, the legend
    above the charts, and a table that starts with the results, its numbers formatted."""
    import json
    cfg = TrainConfig()
    fake_run(store, cfg, "alpha", [2.0, 1.5, 1.0], [0.81234567, 0.9])
    fake_run(store, cfg.with_(learning_rate=0.2345330992937088), "beta", [2.2, 1.2], [0.85, 0.86])
    at = page("compare")
    at.radio(key="compare_axis").set_value("epoch").run()
    assert not at.exception, [e.value for e in at.exception]
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    colours = {trace["legendgroup"]: trace["line"]["color"] for trace in fig["data"]}
    assert len(set(colours.values())) == len(colours) == 2  # one colour per run, on every line of the run
    assert sorted(trace["name"] for trace in fig["data"] if trace.get("showlegend", True)) == ["alpha", "beta"]
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == ["loss", "accuracy"]  # the accuracy has a panel of its own
    assert fig["layout"]["xaxis"]["dtick"] == 1 and fig["layout"]["legend"]["y"] > 1
    assert fig["layout"]["hovermode"] == "x unified" and fig["layout"]["hoversubplots"] == "axis"  # one hover
    assert fig["layout"]["yaxis2"]["tickformat"] == ".0%"
    table = at.dataframe[0].value
    assert list(table.index[:3]) == ["status", "epochs done", "best val acc"]
    row = table.loc["Learning rate"].tolist()
    assert "0.2345" in row and "0.2345330992937088" not in row and sorted(table.loc["best val acc"]) == ["86.00%", "90.00%"]


def test_the_runs_page_shows_settings_as_a_table_not_raw_json(store):
    fake_run(store, TrainConfig(), "alpha", [2.0], [0.8])
    at = page("runs")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.json  # no collapsed {...}
    settings = at.dataframe[1].value
    assert "Learning rate" in settings.iloc[:, 0].tolist() and len(at.dataframe[0].value.columns) <= 8


def test_compare_by_step_smooths_like_train_puts_the_differences_first_and_offers_the_curves(store):
    import json

    from core.training.events import ValidationEvent
    cfg = TrainConfig(epochs=2)
    alpha = fake_run(store, cfg, "alpha", [2.0, 1.0, 3.0, 1.5], [0.8, 0.9])
    store.update(alpha, total_steps=4)
    store.add_validation(alpha, ValidationEvent(step=1, epoch=1, val_loss=1.9, val_acc=0.5))
    fake_run(store, cfg.with_(batch_size=32), "beta", [2.2, 1.2], [0.85])
    at = page("compare")
    at.slider(key="compare_smoothing").set_value(0.5).run()
    at.toggle(key="compare_log_y").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    smoothed = next(tr for tr in fig["data"] if tr["name"] == "alpha")
    raw = next(tr for tr in fig["data"] if tr["name"] == "alpha · step loss")
    assert raw["opacity"] == 0.3 and smoothed["y"] != raw["y"]  # faint raw under the smoothed line
    acc = [tr for tr in fig["data"] if tr.get("yaxis") == "y2"]
    assert {tr["name"] for tr in acc} == {"alpha · validation accuracy", "alpha · train accuracy"}
    assert fig["layout"]["yaxis"]["type"] == "log"
    table = at.dataframe[0].value
    assert list(table.index[:6]) == ["status", "epochs done", "best val acc", "best val loss", "best epoch",
                                     "duration s"]
    assert table.index[7] == "Batch size"  # the one setting that differs, before the settings that do not
    assert "⬇️ Download these curves (CSV)" in [b.label for b in at.get("download_button")]
