"""Runs out of the studio (python -m core.cli.export_run), each format read back by its own ecosystem's reader:
Parquet by pyarrow, CSV by pandas, TensorBoard event files by TensorBoard's own event reader, the HTML report by
Chromium from a file:// URL with the network cut."""
from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from core.runs.store import RunStore
from tests.support.helpers import cli

EPOCHS, VALIDATE_EVERY, CHANGES = 2, 5, "12:0.02,12:momentum=0.5"


@pytest.fixture(scope="module")
def trained(tmp_path_factory, small_mnist) -> RunStore:
    """A store with two finished MLP runs of the command line: steps, epochs, validations every 5 steps, a
    learning-rate change at step 12, layer statistics and a checkpoint."""
    root = tmp_path_factory.mktemp("export") / "store"
    for name, hidden in (("wide", "64"), ("narrow", "16")):
        p = cli("core.cli.train", "--network", "mlp", "--hidden", hidden, "--epochs", str(EPOCHS), "--data-dir",
                str(small_mnist), "--validate-every", str(VALIDATE_EVERY), "--setting-changes", CHANGES,
                "--name", name, "--store", str(root), timeout=600)
        assert p.returncode == 0, p.stderr
    return RunStore(root)


def export(store: RunStore, *args: str):
    return cli("core.cli.export_run", *args, "--store", str(store.root), timeout=600)


def test_parquet_holds_every_step_epoch_validation_rate_change_and_layer_histogram(trained, tmp_path):
    wide, narrow = sorted(trained.list_runs(), key=lambda r: r.name)[::-1]
    p = export(trained, wide.id, narrow.id, "--format", "parquet", "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    steps = pq.read_table(tmp_path / "out" / "steps.parquet").to_pandas()
    for run in (wide, narrow):
        mine = steps[steps.run_id == run.id]
        assert mine.step.tolist() == list(range(1, run.step + 1))  # every step, not the pages' downsampled curve
        assert mine.loss.tolist() == pytest.approx([s.loss for s in trained.steps(run.id, max_points=10**9)])
    epochs = pq.read_table(tmp_path / "out" / "epochs.parquet").to_pandas()
    assert sorted(epochs[epochs.run_id == wide.id].epoch) == [1, 2]
    assert epochs[epochs.run_id == wide.id].val_acc.tolist() == pytest.approx(
        [e.val_acc for e in trained.epochs(wide.id)])
    validations = pq.read_table(tmp_path / "out" / "validations.parquet").to_pandas()
    assert {VALIDATE_EVERY, 2 * VALIDATE_EVERY} <= set(validations[validations.run_id == wide.id].step)
    changes = pq.read_table(tmp_path / "out" / "setting_changes.parquet").to_pandas()
    assert changes[changes.run_id == wide.id][["step", "setting", "value"]].values.tolist() == [
        [12, "learning_rate", 0.02], [12, "momentum", 0.5]]
    layers = pq.read_table(tmp_path / "out" / "layer_stats.parquet").to_pandas()
    first = layers[(layers.run_id == wide.id) & (layers.kind == "weight")].iloc[0]
    assert len(first.hist_edges) == len(first.hist_counts) + 1 and sum(first.hist_counts) > 0
    runs = pq.read_table(tmp_path / "out" / "runs.parquet").to_pandas()
    assert set(runs.name) == {"wide", "narrow"} and json.loads(runs.config[0])["network"] == "mlp"


def test_csv_and_latest_name_the_newest_run_and_keep_histograms_as_json(trained, tmp_path):
    newest = trained.list_runs()[0]
    p = export(trained, "latest", "--format", "csv", "--out", str(tmp_path / "csv"))
    assert p.returncode == 0, p.stderr
    assert set(pd.read_csv(tmp_path / "csv" / "steps.csv").run_id) == {newest.id}
    layers = pd.read_csv(tmp_path / "csv" / "layer_stats.csv")
    assert len(json.loads(layers.hist_counts[0])) == len(json.loads(layers.hist_edges[0])) - 1


def test_tensorboards_own_reader_reads_scalars_histograms_and_settings(trained, tmp_path):
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    run = trained.list_runs()[0]
    p = export(trained, run.id, "--format", "tensorboard", "--out", str(tmp_path / "tb"))
    assert p.returncode == 0, p.stderr
    keep_all = {"scalars": 0, "histograms": 0, "tensors": 0}  # the reader samples 1 histogram per tag by default
    events = EventMultiplexer(size_guidance=keep_all).AddRunsFromDirectory(str(tmp_path / "tb")).Reload()
    (name,) = events.Runs()  # one folder, one run
    assert name.endswith(run.id)
    tags = events.Runs()[name]
    assert {"loss/step", "epoch/train_loss", "epoch/val_acc", "validation/val_acc", "learning_rate"} <= set(
        tags["scalars"])
    losses = events.Scalars(name, "loss/step")
    assert [e.step for e in losses] == list(range(1, run.step + 1))
    assert [e.value for e in losses] == pytest.approx([s.loss for s in trained.steps(run.id, max_points=10**9)],
                                                      rel=1e-6)
    assert [e.value for e in events.Scalars(name, "learning_rate")] == pytest.approx([0.02])
    assert [e.value for e in events.Scalars(name, "momentum")] == pytest.approx([0.5])
    assert any(t.startswith("weight/") for t in tags["histograms"])
    histogram = events.Histograms(name, next(t for t in tags["histograms"] if t.startswith("weight/")))
    assert [h.step for h in histogram] == [0, 1, 2] and histogram[0].histogram_value.num > 0
    assert "settings/text_summary" in tags["tensors"]
    from tensorboard.plugins.hparams import plugin_data_pb2
    hparams = events.PluginRunToTagToContent("hparams")[name]
    start = plugin_data_pb2.HParamsPluginData.FromString(hparams["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["network"].string_value == "mlp" and start.hparams["epochs"].number_value == EPOCHS
    assert "_hparams_/experiment" in hparams


def test_a_bad_run_id_or_format_is_said_without_a_traceback(trained, tmp_path):
    p = export(trained, "no-such-run", "--format", "csv", "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and "no run 'no-such-run'" in p.stderr and "Traceback" not in p.stderr
    p = export(trained, "latest", "--format", "xlsx", "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_the_runs_page_prepares_each_format_for_download(with_run):
    from core.app.tensorboard_events import run_folder_name
    from tests.support.apptest import page

    store, run_id = with_run
    run = store.get(run_id)
    stem = run_folder_name(run.name, run_id)  # the name made safe for a file, then the id
    assert stem == f"upload_mlp-{run_id}"
    at = page("runs")
    for fmt, name in (("html", f"{stem}-report.html"), ("csv", f"{stem}-csv.zip"), ("tensorboard",
                                                                                  f"{stem}-tensorboard.zip")):
        at.radio(key="records_run_format").set_value(fmt).run()
        at.button(key="records_run_prepare").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert [b.label for b in at.get("download_button") if b.label.startswith("⬇️ Download " + stem)] == [
            f"⬇️ Download {name}"]


def test_the_compare_page_prepares_a_comparison_report(trained, monkeypatch):
    from tests.support.apptest import page

    monkeypatch.setenv("STUDIO_DATA_DIR", str(trained.root))  # the pages open this store
    at = page("compare")
    at.radio(key="records_compare_format").set_value("html").run()
    at.button(key="records_compare_prepare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "⬇️ Download comparison-of-2-runs-report.html" in [b.label for b in at.get("download_button")]


def test_mlflow_reads_back_each_runs_settings_metrics_and_how_it_ended(trained, tmp_path):
    from mlflow import MlflowClient

    from core.app.mlflow_runs import EXPERIMENT
    runs = trained.list_runs()
    db = tmp_path / "mlflow.db"
    p = export(trained, *[r.id for r in runs], "--format", "mlflow", "--out", str(db))
    assert p.returncode == 0, p.stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    found = client.search_runs([client.get_experiment_by_name(EXPERIMENT).experiment_id])
    by_id = {r.data.tags["studio.run_id"]: r for r in found}
    assert set(by_id) == {r.id for r in runs}
    for run in runs:
        mine = by_id[run.id]
        assert mine.info.run_name == run.name and mine.info.status == "FINISHED"
        assert mine.data.params["hidden"] == json.dumps(list(run.config.hidden))
        history = client.get_metric_history(mine.info.run_id, "loss")
        assert sorted(m.step for m in history) == list(range(1, run.step + 1))
        assert [m.value for m in client.get_metric_history(mine.info.run_id, "learning_rate")] == [0.02]
        assert mine.data.metrics["epoch_val_acc"] == pytest.approx(trained.epochs(run.id)[-1].val_acc)
