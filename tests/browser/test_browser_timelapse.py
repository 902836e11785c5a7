"""The confusion matrix's time-lapse in a real browser (Chromium on 127.0.0.1): a run trained three epochs shows
on Evaluate the validation split's matrix of its last epoch; ▶ Play walks through the epochs in the browser
(the title says each epoch's accuracy), the slider goes back to epoch 1, and Train shows the same behind its
switch, on a screen and on the projector (853×480, presentation mode)."""
import re

import pytest

from core.config import TrainConfig
from core.runs.store import RunStore
from core.runs.worker.execute import execute
from tests.support.helpers import settle, wait_for, scroll_to
from tests.support.server import require_chromium, served_browser
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect  # noqa: E402

TITLE = "#eval_timelapse .gtitle, [data-testid=stPlotlyChart] .gtitle"


@pytest.fixture(scope="module")
def lapsed(tmp_path_factory, small_mnist):
    root = tmp_path_factory.mktemp("timelapse-store")
    store = RunStore(root)
    run_id = store.create_run(TrainConfig(network="mlp", epochs=3, val_fraction=0.1, data_dir=str(small_mnist)),
                              name="three epochs", source="cli")
    assert execute(store, run_id) == "completed"
    with served_browser(root, SHOTS) as served:
        yield served


def titles(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('.gtitle')].map(t => t.textContent)")


def test_the_confusion_matrix_plays_through_the_epochs_on_evaluate_and_train(lapsed):
    url, store, browser = lapsed
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url + "/evaluate")
    header = page.get_by_text("The confusion matrix, epoch by epoch (validation split)")
    expect(header).to_be_visible(timeout=120_000)
    last = wait_for(lambda: [x for x in titles(page) if x.startswith("Epoch 3:")], what="the last epoch's matrix",
                    timeout=30)
    assert re.fullmatch(r"Epoch 3: \d+\.\d% of the validation images read right", last[0]), last
    settle(page)  # a click while the page still runs its script is dropped
    page.get_by_text("▶ Play").click()
    seen = set()

    def played() -> bool:
        seen.update(x.split(":")[0] for x in titles(page) if x.startswith("Epoch "))
        return {"Epoch 1", "Epoch 2", "Epoch 3"} <= seen
    wait_for(played, what="the three epochs played in turn", timeout=20, every=0.05)
    wait_for(lambda: any(x.startswith("Epoch 3:") for x in titles(page)), what="the play to end at the last",
             timeout=10)
    # a click on the slider's rail at the step for epoch 1 (the rail's touch area lies over its labels)
    label = page.locator(".slider-group .slider-label", has_text="1").first.bounding_box()
    rail = page.locator(".slider-rail-touch-rect").first.bounding_box()
    page.mouse.click(label["x"] + label["width"] / 2, rail["y"] + rail["height"] / 2)
    wait_for(lambda: any(x.startswith("Epoch 1:") for x in titles(page)), what="epoch 1 from the slider", timeout=10)
    shot(page, "timelapse_evaluate")

    page.goto(url + "/train")
    switch = page.get_by_text("🎞️ The confusion matrix, epoch by epoch")
    expect(switch).to_be_visible(timeout=60_000)
    switch.click()
    wait_for(lambda: any(x.startswith("Epoch 3:") for x in titles(page)), what="the time-lapse on Train", timeout=30)
    expect(page.get_by_text("▶ Play")).to_be_visible()

    # on the projector (853×480 CSS px at 150 %, presentation mode): the same switch under the curves, and Play
    room = browser.new_page(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
    room.goto(url + "/train?present=1")
    switch = room.get_by_text("🎞️ The confusion matrix, epoch by epoch")
    expect(switch).to_be_attached(timeout=60_000)
    scroll_to(switch)
    switch.click()
    wait_for(lambda: any(x.startswith("Epoch 3:") for x in titles(room)), what="the time-lapse in the room", timeout=30)
    play = room.get_by_text("▶ Play")
    scroll_to(play)
    play.click()
    wait_for(lambda: any(x.startswith("Epoch 1:") for x in titles(room)), what="Play in the room", timeout=20,
             every=0.05)
    shot(room, "timelapse_room")
