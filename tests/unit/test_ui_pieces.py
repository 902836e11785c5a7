"""UI helpers that hold logic of their own, without a page: the shared live view, runs' labels in a list."""
import threading
import time

import numpy as np
import pytest
from tests.support.helpers import let_pass

from core.config import TrainConfig
from ui.format import run_choices
from ui.live import SharedView

# Views age and threads wait against a clock here (pytest.ini's `deadline`): ./test.sh runs these in phase 1.
pytestmark = pytest.mark.deadline


def test_a_shared_view_is_built_once_for_every_viewer_while_fresh():
    view, builds = SharedView(max_age_s=0.2), []

    def build():
        builds.append(time.monotonic())
        return len(builds)

    assert [view.get("run", build) for _ in range(5)] == [1] * 5
    let_pass(0.25, "the view grows older than its max age")
    assert view.get("run", build) == 2 and len(builds) == 2  # stale: rebuilt once
    assert view.get("other", build) == 3  # each key its own view


def test_while_one_viewer_rebuilds_the_others_get_the_previous_view_at_once():
    view = SharedView(max_age_s=0.0)
    view.get("run", lambda: "old")
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return "new"

    builder = threading.Thread(target=view.get, args=("run", slow))
    builder.start()
    started.wait(5)
    t = time.monotonic()
    assert view.get("run", lambda: pytest.fail("a second build while one is under way")) == "old"
    assert time.monotonic() - t < 0.1  # no queueing behind the rebuild
    release.set()
    builder.join(5)
    assert view.get("run", lambda: "newer") == "newer"  # max_age 0: the finished rebuild is stale at once


def test_a_new_version_is_built_once_while_the_others_get_the_previous_one():
    """The curves' version is the run's step count: each new step used to be a new key with nothing to hand
    out, so every viewer polling during the build built the same figure again."""
    view = SharedView(max_age_s=60.0)
    assert view.get("curves", lambda: "step 1", version=1) == "step 1"
    assert view.get("curves", lambda: pytest.fail("fresh and the same version"), version=1) == "step 1"
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return "step 2"

    builder = threading.Thread(target=view.get, args=("curves", slow, 2))
    builder.start()
    started.wait(5)
    assert view.get("curves", lambda: pytest.fail("a second build of version 2"), version=2) == "step 1"
    release.set()
    builder.join(5)
    assert view.get("curves", lambda: pytest.fail("version 2 is built"), version=2) == "step 2"


def test_a_failed_build_does_not_block_the_next_one():
    view = SharedView(max_age_s=0.0)
    view.get("run", lambda: "old")
    with pytest.raises(RuntimeError):
        view.get("run", lambda: (_ for _ in ()).throw(RuntimeError("store locked")))
    assert view.get("run", lambda: "again") == "again"


def test_views_nobody_asks_for_are_dropped():
    view = SharedView(max_age_s=0.0, keep_s=0.05)
    view.get("gone", lambda: 1)
    let_pass(0.1, "the view goes unasked for longer than it is kept")
    view.get("live", lambda: 2)
    assert set(view.entries) == {"live"}


def test_the_pipeline_preview_shows_rescale_and_normalize_differently():
    """Each image scaled to its own range made Rescale and Normalize look identical; on one scale they differ."""
    from core.app import model_service
    from core.data.folders import load_arrays, validate_mnist_dir
    from ui.pipeline_view import on_common_scale
    images, _ = load_arrays(validate_mnist_dir(None), "train")
    steps = model_service.pipeline_steps(images[0])
    names = [n for n, _ in steps]
    views, (lo, hi) = on_common_scale(steps)
    rescale, normalize = views[names.index("Rescale")], views[names.index("Normalize")]
    assert abs(float(rescale.mean()) - float(normalize.mean())) > 0.02 and not np.allclose(rescale, normalize)
    assert lo < -0.4 and hi > 2.8  # Normalize's range, shared by every float step
    assert np.allclose(views[0], images[0] / 255.0)  # the raw image on its own 0-255 scale
    assert all(v.min() >= 0.0 and v.max() <= 1.0 for v in views)


def test_curves_smooth_band_downsampled_runs_mark_learning_rate_changes_and_present_a_lesson_screen():
    from core.runs.rows import StepRow
    from core.training.events import EpochMetrics, SettingEvent, ValidationEvent
    from ui.curves import CurveOptions, History, curves, downsampling_note, smooth

    assert smooth([1.0, 1.0, 1.0], 0.9) == pytest.approx([1.0, 1.0, 1.0])  # debiased: no pull towards 0
    assert smooth([2.0, 0.0], 0.5)[1] == pytest.approx((0.5 * 0.5 * 2.0) / (1 - 0.25))
    steps = [StepRow(step=10 * i, epoch=1, loss=1.0 / i, elapsed=float(i), loss_min=0.5 / i, loss_max=2.0 / i,
                     count=10) for i in range(1, 21)]
    history = History(steps, [EpochMetrics(1, 0.5, 0.8, 0.4, 0.85)], [ValidationEvent(100, 1, 0.6, 0.8),
                      ValidationEvent(200, 1, 0.4, 0.85)], [SettingEvent(120, "learning_rate", 0.05)], steps_per_epoch=200)
    fig = curves(history, CurveOptions(smoothing=0.8, log_y=True))
    names = [trace.name for trace in fig.data]
    assert "smoothed" in names and any(trace.fill == "tonexty" for trace in fig.data), names
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "log" and fig.layout.yaxis3.type != "log"
    assert [s.x0 for s in fig.layout.shapes] == [120]
    assert any(a.text == "lr 0.05" for a in fig.layout.annotations)
    assert fig.layout.xaxis2.title.text == "step"  # validated every N steps: loss and accuracy by step
    assert "mean of 10 consecutive steps" in downsampling_note(history)
    raw = curves(history, CurveOptions(smoothing=0.0))
    assert "smoothed" not in [trace.name for trace in raw.data]
    present = curves(history, CurveOptions(present=True, log_y=True))
    assert "yaxis3" not in present.layout.to_plotly_json(), "presenting: loss and accuracy, side by side"
    loss_panel = {tr.name for tr in present.data if tr.xaxis == "x"}
    assert {"step loss", "smoothed", "train loss", "validation loss"} <= loss_panel, loss_panel
    assert all(not tr.showlegend for tr in present.data if tr.xaxis == "x2"), "one legend row: colours shared"
    assert present.layout.yaxis.type == "log" and present.layout.yaxis2.tickformat == ".0%"
    assert present.layout.height <= 300 and present.layout.xaxis.tickfont.size == 20
    assert [s.x0 for s in present.layout.shapes] == [120]
    for fig_ in (fig, present):  # accuracy axes fit their points and stay within 0-100 %
        axis = fig_.layout.yaxis3 if "yaxis3" in fig_.layout.to_plotly_json() else fig_.layout.yaxis2
        assert (axis.autorangeoptions.minallowed, axis.autorangeoptions.maxallowed) == (0.0, 1.02)
    for options in (CurveOptions(), CurveOptions(present=True)):  # before the first step: said, no bare axes
        empty = curves(History([], [], [], [], None), options)
        assert [a.text for a in empty.layout.annotations][-1] == "The curves start with the first step."
        assert empty.layout.yaxis.showticklabels is False and empty.layout.xaxis.showticklabels is False
    for options, panel in ((CurveOptions(present=True), "xaxis2"), (CurveOptions(), "xaxis3")):
        early = curves(History(steps[:3], [], [], [], 200), options)  # steps, no accuracy yet
        said = [a for a in early.layout.annotations if a.text.startswith("Accuracy comes with the<br>")]
        left, right = early.layout[panel].domain
        assert len(said) == 1 and said[0].xref == "paper" and left < said[0].x < right, "once, in the accuracy panel"


def test_the_live_poll_interval_grows_at_once_and_shrinks_only_with_room():
    """ui/poll_interval.py: 60 viewers polling every second froze every view; a symmetric rule swung between steps."""
    from ui.poll_interval import SERVER_CPU_BUDGET, _choose, _Pace
    pace = _Pace()
    pace.viewers = {f"s{i}": 0.0 for i in range(60)}
    assert _choose(pace, now=0.0) >= 2.0, "a class arriving together starts from a guess, not from 1 s"
    pace.viewers = {"s0": 0.0}
    assert _choose(pace, now=0.0) == 1.0, "one viewer: every second"
    pace.interval, pace.changed, pace.cpu_share, pace.update_s = 2.0, 0.0, SERVER_CPU_BUDGET * 1.1, 0.1
    assert _choose(pace, now=1.0) == 2.0, "the last change has not shown in the CPU share yet"
    assert _choose(pace, now=10.0) == 4.0, "over the budget: one step longer"
    pace.cpu_share = SERVER_CPU_BUDGET * 0.45  # twice this is over 0.85 of the budget: no room
    assert _choose(pace, now=60.0) == 2.0
    pace.cpu_share = SERVER_CPU_BUDGET * 0.3
    assert _choose(pace, now=5.0) == 2.0, "shorter only some time after a change"
    assert _choose(pace, now=60.0) == 1.0
    pace.update_s = 1.0  # updates take a second: polls every 2 s would cut them short
    assert _choose(pace, now=60.0) == 4.0


def _callbacks_of_widgets_no_longer_drawn():
    """An AppTest script: each on_change callback of the studio's widgets, run with its widget's key missing
    from the session, as Streamlit ran one after a page change (start pace's toggle raised a KeyError in CI)."""
    import streamlit as st

    from ui import pacing, present
    from ui.callback_state import keep
    for widget, kept in [("start_paused", "kept_paused"), ("lang_choice", "lang"), ("_present_toggle", present._KEY)]:
        keep(widget, kept)  # start pace, language and presentation switches
    pacing.set_delay(None, "delay_gone", 0.0)  # returns before reading the run: nothing changed
    kept = [k for k in ("kept_paused", "lang", "present") if k in st.session_state]
    st.write("kept: " + (", ".join(kept) or "nothing"))


def test_a_callback_whose_widget_is_no_longer_drawn_does_nothing():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_function(_callbacks_of_widgets_no_longer_drawn).run(timeout=30)
    assert not at.exception, [e.value for e in at.exception]
    assert at.markdown[0].value == "kept: nothing"


def test_a_runs_label_in_a_list_stays_the_same_while_it_trains_and_tells_two_alike_apart(store):
    """A browser keeps a chosen run by its label: one that changed with the status dropped it from Compare."""
    first = store.create_run(TrainConfig(network="mlp"), name="same", source="cli", exclusive=False)
    second = store.create_run(TrainConfig(network="mlp"), name="same", source="cli", exclusive=False)
    other = store.create_run(TrainConfig(), name="other", source="cli", exclusive=False)
    before = run_choices(store.list_runs())
    store.update(first, status="running", epoch=2, best_val_acc=0.9)
    store.finish(second, "completed")
    store.update(other, best_val_acc=0.97)
    after = run_choices(store.list_runs())
    assert after == before
    assert len(set(after.values())) == 3 and after[first] != after[second]
    assert after[first].endswith(first[-6:]) and after[other].startswith("other (lenet5 · ")


def test_at_full_speed_the_curves_wait_for_their_refresh_but_firsts_settings_and_paced_steps_show_at_once(store):
    """The live Train view's figure is kept CURVES_REFRESH_S while curve_version holds: a browser draws the
    same figure once (drawing the curves again at every poll was most of Chromium's work on a live page)."""
    from dataclasses import replace
    from core.runs.rows import StepRow
    from core.training.events import EpochMetrics, SettingEvent, ValidationEvent
    from ui.curves import History
    from ui.train_view import RunView, curve_version

    run = replace(store.get(store.create_run(TrainConfig(network="mlp", epochs=50))), status="running")

    def version(run, steps=0, epochs=0, validations=0, changes=0):
        h = History([StepRow(i + 1, 1, 1.0, float(i)) for i in range(steps)],
                    [EpochMetrics(e + 1, 0.5, 0.8, 0.4, 0.85) for e in range(epochs)],
                    [ValidationEvent(10 * (v + 1), 1, 0.5, 0.8) for v in range(validations)],
                    [SettingEvent(c + 1, "learning_rate", 0.01) for c in range(changes)], 100)
        return curve_version(RunView(run, h, "", None, {}, {}))

    full_speed = version(run, steps=5, epochs=1)
    # more steps, epochs and validations at full speed: the same figure until it is CURVES_REFRESH_S old
    assert version(run, steps=500, epochs=7) == full_speed
    assert version(run, steps=5, epochs=1, validations=1) == version(run, steps=500, epochs=7, validations=9)
    # shown at once: the first step, the first epoch, a changed setting, another status or pace
    assert version(run) != version(run, steps=1)
    assert version(run, steps=5) != full_speed
    assert version(run, steps=5, epochs=1, changes=1) != full_speed
    assert version(replace(run, status="paused"), steps=5, epochs=1) != full_speed
    assert version(replace(run, step_delay=0.5), steps=5, epochs=1) != full_speed
    # paused (Step) or in slow motion a person watches every step and epoch
    for paced in (replace(run, status="paused"), replace(run, step_delay=0.5)):
        assert version(paced, steps=5, epochs=1) != version(paced, steps=6, epochs=1)
        assert version(paced, steps=5, epochs=1) != version(paced, steps=5, epochs=2)

    views, builds = SharedView(max_age_s=60.0), []
    figure = views.get("curves", lambda: builds.append(1) or "figure at step 5", full_speed)
    assert views.get("curves", lambda: "figure at step 500", version(run, steps=500, epochs=7)) == figure
    assert views.get("curves", lambda: "after the change", version(run, steps=5, epochs=1, changes=1)) \
        == "after the change"


def test_a_schedules_moving_rate_leaves_the_train_header_as_drawn_but_a_rate_someone_sets_draws_it_again(store):
    """The Train page draws its heading and buttons again when header_state changes. A schedule moves the rate at
    every step: were it part of that state, the whole page (Stop with it) would be drawn at every poll, and a
    click on a button being drawn again can be lost."""
    from dataclasses import replace
    from core.training.events import SettingEvent
    from ui.curves import History
    from ui.train_view import RunView, header_state
    from ui.live_knobs import held_values, live_values

    def state(run, step, changes=(), asked=None):
        run = replace(run, status="running", step=step, total_steps=1000)
        h = History([], [], [], [SettingEvent(s, "learning_rate", v) for s, v in changes], 100)
        values = live_values(run, h, asked)
        return header_state(RunView(run, h, "", None, values, held_values(values, run, h, asked)))

    cosine = store.get(store.create_run(TrainConfig(network="mlp", epochs=10, lr_schedule="cosine", optimizer="momentum")))
    assert live_values(replace(cosine, step=10, total_steps=1000), History([], [], [], [], 100))["learning_rate"] \
        != live_values(replace(cosine, step=500, total_steps=1000), History([], [], [], [], 100))["learning_rate"]
    assert state(cosine, 10) == state(cosine, 500)  # the schedule's rate moved; the header did not
    assert state(cosine, 500, asked={"learning_rate": 0.02}) != state(cosine, 500)  # asked: drawn again
    assert state(cosine, 500, asked={"momentum": 0.5}) != state(cosine, 500)
    assert state(cosine, 600, changes=[(550, 0.02)]) != state(cosine, 600)  # taken: the rate holds from then on
    assert state(cosine, 600, changes=[(550, 0.02)]) == state(cosine, 900, changes=[(550, 0.02)])
    constant = store.get(store.create_run(TrainConfig(network="mlp", epochs=10), exclusive=False))
    assert state(constant, 10) == state(constant, 500)
    assert state(constant, 600, changes=[(550, 0.5)]) != state(constant, 600)

    # the lesson bar's button, drawn with the header: it says the schedule moves the rate, not a number gone stale
    from ui.lesson_bar import rate_label

    def label(run, step, changes=()):
        run = replace(run, status="running", step=step, total_steps=1000)
        h = History([], [], [], [SettingEvent(s, "learning_rate", v) for s, v in changes], 100)
        values = live_values(run, h)
        return rate_label(values, held_values(values, run, h))

    assert label(cosine, 10) == label(cosine, 500) == "📈 rate: on its schedule"
    assert label(cosine, 600, changes=[(550, 0.02)]) == "📈 rate 0.02"
    assert label(constant, 500) == f"📈 rate {constant.config.learning_rate:g}"
