"""UI helpers that hold logic of their own, without a page: the shared live view."""
import threading
import time

import numpy as np
import pytest

from ui.live import SharedView


def test_a_shared_view_is_built_once_for_every_viewer_while_fresh():
    view, builds = SharedView(max_age_s=0.2), []

    def build():
        builds.append(time.monotonic())
        return len(builds)

    assert [view.get("run", build) for _ in range(5)] == [1] * 5
    time.sleep(0.25)
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


def test_a_failed_build_does_not_block_the_next_one():
    view = SharedView(max_age_s=0.0)
    view.get("run", lambda: "old")
    with pytest.raises(RuntimeError):
        view.get("run", lambda: (_ for _ in ()).throw(RuntimeError("store locked")))
    assert view.get("run", lambda: "again") == "again"


def test_views_nobody_asks_for_are_dropped():
    view = SharedView(max_age_s=0.0, keep_s=0.05)
    view.get("gone", lambda: 1)
    time.sleep(0.1)
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
    assert all(0.0 <= v.min() and v.max() <= 1.0 for v in views)
