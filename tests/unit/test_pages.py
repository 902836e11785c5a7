"""Every page through Streamlit's AppTest, against a real run store and real MindSpore."""
import json
import re

import pytest

from core.config import TrainConfig
from core.training.events import EpochMetrics
from tests.support.apptest import page, seen
from tests.support.helpers import wait_for


@pytest.mark.parametrize("name", ["data", "configure", "train", "evaluate", "draw", "runs"])
def test_every_page_renders(with_run, name):
    at = page(name)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.endswith({"data": "Data", "configure": "Configure", "train": "Train",
                                       "evaluate": "Evaluate", "draw": "Draw & predict", "runs": "Runs"}[name])


def test_configure_widgets_change_the_config_and_the_url(store):
    at = page("configure")
    at.selectbox(key="cfg_network").select("mlp").run()
    at.text_input(key="cfg_learning_rate").input("0.05").run()
    at.selectbox(key="cfg_optimizer").select("adam").run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert (cfg.network, cfg.learning_rate, cfg.optimizer) == ("mlp", 0.05, "adam")
    assert at.query_params["network"] == "mlp" and at.query_params["learning_rate"] == "0.05"
    assert [m.value for m in at.metric if m.label == "Trainable parameters"] == ["669,706"]
    at.checkbox(key="cfg_drawn_look").check().run()  # Basic settings: train on drawn-looking digits too
    assert at.session_state["config"].drawn_look is True and at.query_params["drawn_look"] == "true"


def test_the_sweep_form_says_what_zero_settings_to_try_means(store):
    """Said under the box, not only in its help: a grid's 0 tries every combination; a random search's tries none."""
    at = page("configure")
    captions = [c.value for c in at.caption]
    assert "0: every combination of the values." in captions, captions
    at.selectbox(key="sweep_sampler").select("random").run()
    at.number_input(key="sweep_trials_random").set_value(0).run()
    assert "0: nothing to try. A random or TPE search needs 1 or more." in [c.value for c in at.caption]
    at.number_input(key="sweep_trials_random").set_value(3).run()
    assert not [c.value for c in at.caption if c.value.startswith("0:")]


@pytest.mark.store_on_disk  # it starts a worker process, which opens the store
@pytest.mark.deadline  # the worker's first steps within 60 s
def test_start_creates_a_run_and_stop_stops_it(store, small_mnist):
    at = page("train")
    at.session_state["config"] = TrainConfig(network="mlp", mode="pynative", epochs=100, batch_size=16,
                                             data_dir=str(small_mnist))
    at.run()
    at.button[0].click().run()  # Start
    assert not at.exception, [e.value for e in at.exception]
    (run,) = store.list_runs()
    assert run.source == "dashboard" and at.session_state["run_id"] == run.id
    wait_for(lambda: store.get(run.id).step > 3, what="training steps")
    at.run()  # what a fragment tick does
    assert any("Pause" in b.label for b in at.button) and any("Stop" in b.label for b in at.button)
    assert not at.exception
    next(b for b in at.button if "Stop" in b.label).click().run()
    stopped = wait_for(lambda: (r := store.get(run.id)).status == "stopped" and r, timeout=30, what="stop")
    assert stopped.checkpoint
    at.run()
    assert any("Stopped" in w.value for w in at.warning)


def test_evaluate_shows_metrics(with_run, small_mnist):
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(small_mnist)).run()
    assert not at.exception, [e.value for e in at.exception]
    labels = {m.label: m.value for m in at.metric}
    assert labels["accuracy"].endswith("%") and float(labels["accuracy"][:-1]) > 50
    assert "of 500" in labels["misclassified"]


def test_evaluate_reads_with_shifts_and_says_the_gain_against_one_reading(with_run, small_mnist):
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(small_mnist)).run()
    plain = {m.label: m for m in at.metric}
    assert not plain["accuracy"].delta and "loss" in plain
    at.toggle(key="eval_shifts").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    shifted = {m.label: m for m in at.metric}
    assert "loss" not in shifted and "cross-entropy of the averaged reading" in shifted
    gain = float(shifted["accuracy"].value[:-1]) - float(plain["accuracy"].value[:-1])  # k/500: exact in 2 places
    assert shifted["accuracy"].delta == f"{gain:+.2f} points against one reading"
    at.toggle(key="eval_shifts").set_value(False).run()
    assert {m.label: m.value for m in at.metric}["accuracy"] == plain["accuracy"].value


def test_evaluate_on_the_validation_split_says_which_of_two_accuracies_it_shows(with_run, small_mnist):
    store, run_id = with_run
    store.update(run_id, best_val_acc=0.9512, best_epoch=2, checkpoint_epoch=3)
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(small_mnist)).run()
    assert not [c for c in at.caption if "best validation accuracy" in c.value], "the test split needs no word"
    at.radio(key="eval_split").set_value("validation").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [c.value for c in at.caption if "validation split" in c.value]
    assert said == ["This is the checkpoint's accuracy on the validation split (saved at epoch 3). The Runs page "
                    "lists its best validation accuracy during training, 95.12% (epoch 2): a checkpoint from "
                    "another epoch reads differently."], [c.value for c in at.caption]


def test_draw_offers_a_run_still_training_by_its_newest_checkpoint(with_run):
    """A class draws for the teacher's run while it trains: its checkpoint from the last finished epoch."""
    store, run_id = with_run
    store.update(run_id, status="running", checkpoint_epoch=2, heartbeat=__import__("time").time(),
                 pid=__import__("os").getpid())
    at = page("draw")
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="draw_run").value.id == run_id
    assert any("Still training: this is its checkpoint from the end of epoch 2" in c.value for c in at.caption)


def test_draw_asks_for_a_drawing_when_the_canvas_is_empty(with_run):
    at = page("draw")
    assert not at.exception
    assert any("canvas is empty" in i.value for i in at.info)


def test_runs_page_renames(with_run):
    store, run_id = with_run
    at = page("runs")
    at.text_input(key=f"name_{run_id}").input("my best model").run()
    next(b for b in at.button if b.label == "Rename").click().run()
    assert store.get(run_id).name == "my best model"


def _figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_digit_axes_label_all_ten_digits_and_the_confusion_matrix_has_square_cells(with_run):
    """Plotly thins category labels on narrow charts (only 0 and 5 at 150 % zoom); every digit axis lists
    all ten, and the confusion matrix's cells are square."""
    evaluate = page("evaluate")
    assert not evaluate.exception, [e.value for e in evaluate.exception]
    confusion = _figures(evaluate)[0]["layout"]
    for axis in ("xaxis", "yaxis"):
        assert confusion[axis]["tickvals"] == [str(d) for d in range(10)] and confusion[axis]["tickmode"] == "array"
    assert confusion["yaxis"]["scaleanchor"] == "x"
    data = page("data")
    assert _figures(data)[0]["layout"]["xaxis"]["tickvals"] == [str(d) for d in range(10)]


def test_an_ended_run_shows_no_speed_or_eta(store):
    run_id = store.create_run(TrainConfig(network="mlp"), source="cli")
    store.add_steps(run_id, [(1, 1, 2.3, 0.1)], step=40, total_steps=100, epoch=1, samples_per_s=900.0, eta=12.0)
    store.finish(run_id, "interrupted", "the worker was killed")
    at = page("train")
    assert not at.exception, [e.value for e in at.exception]
    (bar,) = at.get("progress")
    assert "step 40/100" in bar.proto.text and "ETA" not in bar.proto.text and "samples/s" not in bar.proto.text


def test_a_finished_runs_checkpoint_path_is_said_once(store):
    from core.messages import Message
    run_id = store.create_run(TrainConfig(network="mlp", epochs=1), source="cli")
    path = store.checkpoint_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"weights")
    store.update(run_id, checkpoint=str(path), epoch=1)
    store.finish(run_id, "completed", Message("with_checkpoint", {"what": Message("finished_epochs", {"n": 1}),
                                                                  "path": path}))
    at = page("train", {"run": run_id})
    assert not at.exception, [e.value for e in at.exception]
    shown = [seen(e.value) for e in [*at.success, *at.caption, *at.markdown, *at.info]]
    assert any("Finished 1 epoch" in v for v in shown), shown
    assert sum(path.name in v for v in shown) == 1, shown  # in the checkpoint's caption, not in the outcome too


@pytest.mark.parametrize("name, key", [("evaluate", "eval_run"), ("draw", "draw_run")])
def test_a_run_deleted_elsewhere_is_reported_not_silently_replaced(with_run, trained_ckpt, name, key):
    from core.app import model_service
    store, first = with_run
    second = model_service.import_checkpoint(store, trained_ckpt.read_bytes(), "second.ckpt")
    at = page(name)
    at.selectbox(key=key).set_value(store.get(second)).run()
    # (the sidebar's class-link popover warns that phones cannot reach a server on 127.0.0.1: not about the run)
    assert at.selectbox(key=key).value.id == second and not [w for w in at.warning if "no longer exists" in w.value]
    store.delete(second)  # in another tab
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("second" in w.value and "no longer exists" in w.value for w in at.warning)
    assert at.selectbox(key=key).value.id == first


def test_start_while_a_run_trains_queues_the_run_and_says_where(store):
    """A Start while another run trains is never refused: the run joins the queue, the page says its position,
    lists the queue with who queued it, and Cancel takes it out."""
    busy = store.create_run(TrainConfig(network="mlp"), name="the running one", source="dashboard")
    store.update(busy, status="running", heartbeat=__import__("time").time(), pid=__import__("os").getpid())
    at = page("train")
    next(b for b in at.button if "Start" in b.label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    queued = next(r for r in store.list_runs() if r.id != busy)
    assert queued.status == "queued"
    assert any("Queued: position 1" in t_.value for t_ in at.toast)
    assert any("Queue: 1 run waiting" in m.value for m in at.markdown)
    assert any("queued by dashboard" in m.value for m in at.markdown)
    next(b for b in at.button if "Cancel" in b.label).click().run()
    assert store.get(queued.id).status == "cancelled"
    store.finish(busy, "stopped", "test over")


def test_every_status_on_the_train_page_says_the_same(store):
    """While paused: heading, progress and sidebar say paused; the run selector says no status at all (it
    would go stale while the view polls)."""
    run_id = store.create_run(TrainConfig(network="mlp"), name="lesson", source="cli")
    store.update(run_id, status="paused", heartbeat=__import__("time").time(), step=40, total_steps=213, epoch=1)
    at = page("train")
    assert not at.exception, [e.value for e in at.exception]
    assert any("lesson" in s.value and "paused" in s.value for s in at.subheader)
    sidebar_progress = [p.proto.text for p in at.sidebar.get("progress")]
    assert sidebar_progress and all(text.startswith("paused") for text in sidebar_progress)
    options = at.selectbox[0].options
    assert options and not any(word in o for o in options for word in ("running", "starting", "paused"))
    store.finish(run_id, "stopped", "test over")


def test_every_chart_leaves_its_tick_labels_unchecked_against_the_edge(with_run):
    """ui.charts.quick_tick_labels on every Plotly chart of the pages: Plotly's default for numeric axes ("hide
    past div") measures each tick label again after drawing every other one, half of a live Train page's cost in
    the browser (docs/performance.md, "A live page in the browser")."""
    store, _ = with_run
    run_id = store.create_run(TrainConfig(network="mlp"), source="cli")
    store.add_steps(run_id, [(i, 1, 2.0 - i / 10, 0.1 * i) for i in range(1, 5)], step=4)
    for e in (1, 2):
        store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1 / e, train_acc=0.8, val_loss=1 / e, val_acc=0.85))
    checked = {}
    for name in ("data", "train", "evaluate"):
        at = page(name)
        assert not at.exception, [e.value for e in at.exception]
        for figure in _figures(at):
            axes = [v for k, v in figure["layout"].items() if re.fullmatch(r"[xy]axis\d*", k)]
            assert axes and all(a.get("ticklabeloverflow") == "allow" for a in axes), (name, axes)
            checked[name] = checked.get(name, 0) + 1
    assert checked == {"data": 2, "train": 1, "evaluate": 1}, checked


def test_the_train_pages_log_is_plain_text_without_the_code_highlighter(with_run):
    """The log is shown as text: st.code makes the browser fetch and evaluate a 1.5 MB syntax highlighter on every
    Train page it opens, which held a Start's first step back (docs/performance.md, "Start → first live step")."""
    store, run_id = with_run
    store.log(run_id, "epoch 1: train loss 0.5  <b>not markup</b>")
    at = page("train")
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.text if "epoch 1: train loss 0.5  <b>not markup</b>" in t.value], \
        [t.value for t in at.text]
    assert not [c.value for c in at.code if "epoch 1" in c.value]


def test_configure_sends_its_valid_settings_to_the_warm_worker_only_while_nothing_trains(store, monkeypatch):
    """Configure's Start button has the server's warm worker compile the settings shown (core/runs/launch): only
    valid ones, and not while a run trains here, whose steps that compilation would slow."""
    from core.runs.launch import launcher
    sent: list[TrainConfig] = []
    monkeypatch.setattr(launcher, "want_warm_worker", lambda _store, config: sent.append(config))
    at = page("configure", {"network": "mlp", "batch_size": "32"})
    assert sent and sent[-1].network == "mlp" and sent[-1].batch_size == 32, sent
    sent.clear()
    at.text_input(key="cfg_learning_rate").input("-1").run()
    assert not at.exception and any(b.disabled for b in at.button if "Start" in b.label), "refused settings"
    assert not sent, "refused settings are not compiled ahead"
    at.text_input(key="cfg_learning_rate").input("0.02").run()
    assert sent and sent[-1].learning_rate == 0.02
    busy = store.create_run(TrainConfig(network="mlp"), name="training", source="dashboard")
    store.update(busy, status="running", heartbeat=__import__("time").time(), pid=__import__("os").getpid())
    sent.clear()
    at.text_input(key="cfg_learning_rate").input("0.03").run()
    assert not at.exception and not sent, "nothing is compiled ahead beside a run that trains"
