"""The HTML report's words (core/app/html_report.py), read as its reader would: settings in people's words and
only those that apply to the run's network, no path of the server's, each run's tags and note, legend entries
that say what a line is, and an empty accuracy panel that says why it is empty."""
from core.app.html_report import html_report
from core.config import TrainConfig
from core.messages import Message
from core.training.events import EpochMetrics


def finished_run(store, config, name, epochs=2):
    run_id = store.create_run(config, name=name, source="cli", exclusive=False)
    store.add_steps(run_id, [(i, 1, 2.0 - i / 10, 0.1 * i) for i in range(1, 5)], step=4)
    for e in range(1, epochs + 1):
        store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1 / e, train_acc=0.8, val_loss=1 / e, val_acc=0.85,
                                             epoch_seconds=1.0, samples_per_s=100.0, elapsed=float(e)))
    path = store.checkpoint_path(run_id)
    store.finish(run_id, "completed", Message("with_checkpoint", {"what": Message("finished_epochs", {"n": epochs}),
                                                                  "path": path}))
    return run_id, path


def test_a_lenet5_report_shows_its_settings_in_words_and_no_server_path(store, tmp_path):
    data = tmp_path / "private" / "class-digits"
    run_id, path = finished_run(store, TrainConfig(network="lenet5", data_dir=str(data)), "lenet")
    store.annotate(run_id, ("lesson-3", "baseline"), "the run the class compared against")
    store.log(run_id, f"completed: finished 2 epochs; checkpoint: {path}")  # as the worker logs it
    store.log(run_id, f"read {data}/train-images-idx3-ubyte")
    html = html_report(store, [run_id])
    assert "Hidden layers" not in html, "the MLP's shape is not a LeNet-5's setting"
    assert "<td>Network</td><td>LeNet-5</td>" in html and "<td>Data folder</td><td>class-digits</td>" in html
    assert str(tmp_path) not in html and str(path.parent) not in html, "no path of the server's"
    assert f"checkpoint: {path.name}" in html, "the log names the checkpoint by its file"
    assert "<td>Finished 2 epochs</td>" in html or "finished 2 epochs" in html
    assert "tags: lesson-3, baseline" in html and "note: the run the class compared against" in html
    assert '"name":"lenet \\u00b7 validation accuracy"' in html and '\\u00b7 val_acc"' not in html  # legend, hover
    assert "no accuracy recorded" not in html


def test_an_mlp_report_shows_its_shape_and_a_run_without_epochs_explains_its_empty_accuracy_panel(store):
    run_id, _ = finished_run(store, TrainConfig(network="mlp", hidden=(64, 32)), "short", epochs=0)
    html = html_report(store, [run_id])
    assert "<td>Hidden layers (units per layer)</td><td>64, 32</td>" in html
    assert "the bundled 5,000 MNIST images" in html and "<td>Augment training images</td><td>no</td>" in html
    assert "no accuracy recorded" in html


def test_a_report_of_a_long_run_stays_under_one_megabyte(store):
    """plotly.js's cartesian bundle, gzipped, in place of the full 4.8 MB one (core/app/assets/README.md)."""
    run_id, _ = finished_run(store, TrainConfig(network="mlp"), "long", epochs=10)
    store.add_steps(run_id, [(i, 1 + i // 100, 2.0 / i, 0.01 * i) for i in range(5, 1000)], step=1000)
    html = html_report(store, [run_id])
    assert len(html.encode()) < 1_000_000, len(html.encode())
    assert "plotlyReady.then(" in html and "DecompressionStream('gzip')" in html
