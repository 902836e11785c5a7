"""The learner's loop in a real browser (Chromium on 127.0.0.1): a click on a confusion-matrix cell opens its
images, "Draw one like this" opens Draw with that digit asked for; two drawings the network reads wrongly are
corrected into "my handwriting", the model is fine-tuned on them and the page shows before/after; and a digit
drawn with a finger on a 390 px phone screen is read."""
import re

import pytest

from core.app import model_service
from core.runs.people.handwriting import HandwritingSet
from core.runs.store import RunStore
from tests.support.helpers import scroll_to, settle
from tests.support.canvas import SEVEN, settled_box, touch_stroke
from tests.support.server import require_chromium, served_browser
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect  # noqa: E402

FOUR = [[(170, 50), (80, 170), (200, 170)], [(160, 110), (160, 250)]]
NINE = [[(190, 80), (140, 50), (95, 85), (110, 130), (180, 120), (190, 80), (175, 250)]]


@pytest.fixture(scope="module")
def learner(tmp_path_factory, trained_ckpt):
    root = tmp_path_factory.mktemp("learner-store")
    model_service.import_checkpoint(RunStore(root), trained_ckpt.read_bytes(), "mlp.ckpt")
    with served_browser(root, SHOTS) as served:
        yield served


def cell_caption(page) -> str:
    return page.get_by_text(" read as ").first.inner_text()


def test_a_click_on_a_confusion_cell_shows_its_images_and_draw_one_like_this_opens_draw(learner):
    url, store, browser = learner
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url + "/evaluate")
    expect(page.get_by_text("misclassified").first).to_be_visible(timeout=120_000)
    matrix = page.locator('[data-testid="stPlotlyChart"]').first
    markers = matrix.locator(".scatterlayer .trace .points path")
    expect(markers).to_have_count(100, timeout=30_000)
    before = cell_caption(page)
    for true, pred in ((4, 9), (3, 3)):  # a mistake's cell, then a diagonal one
        # as a person clicks the next cell: once the page has shown the last click (a click on the chart while
        # it was still being redrawn after the first was lost once in CI, with the 4 → 9 cell still shown)
        expect(page.locator('[data-testid="stElementContainer"][data-stale="true"]')).to_have_count(0, timeout=30_000)
        box = markers.nth(true * 10 + pred).bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(page.get_by_text(f" images of {true} read as {pred}")).to_be_visible(timeout=30_000)
    assert cell_caption(page) != before
    shot(page, "learner-1-cell-clicked")
    page.mouse.click(5, 5)  # away from the chart
    # the caption can show before the gallery below it is redrawn: until then its buttons are the 4 → 9 cell's
    # (faded, data-stale), and clicking the first one asked for a 4 (seen once in CI)
    expect(page.locator('[data-testid="stElementContainer"][data-stale="true"]')).to_have_count(0, timeout=30_000)
    # under the first image of the 3 → 3 cell: the first ✏️ after that cell's caption (the page has other
    # galleries; in CI the first ✏️ of the page was a 5 read as 6)
    page.get_by_text(" images of 3 read as 3").first.locator("xpath=following::button[normalize-space()='✏️'][1]").click()
    asked = page.locator('[data-testid="stMarkdownContainer"]', has_text="like this one")
    expect(asked).to_contain_text("Draw a 3", timeout=60_000)
    expect(page.locator("canvas.upper-canvas").first).to_be_visible(timeout=60_000)
    shot(page, "learner-2-draw-one-like-this")


def test_a_digit_drawn_with_a_finger_on_a_390_px_screen_is_read_without_scrolling_sideways(learner):
    url, store, browser = learner
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    page.goto(url + "/draw")
    canvas = page.locator("canvas.upper-canvas").first
    expect(canvas).to_be_visible(timeout=60_000)
    expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=30_000)
    box = settled_box(page)
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    touch_stroke(page, SEVEN)
    expect(page.get_by_text("Prediction:")).to_be_visible(timeout=60_000)
    scroll_to(page.get_by_text("Prediction:"))
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible(timeout=30_000)
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 390, f"the page is {wide} px wide on a 390 px screen: it scrolls sideways"
    chart = page.locator('[data-testid="stPlotlyChart"]').first.bounding_box()
    assert chart["x"] >= 0 and chart["x"] + chart["width"] <= 390, chart
    shot(page, "learner-3-finger-390px")
    context.close()


def mouse_strokes(page, strokes):
    box = settled_box(page)
    s = box["width"] / 280
    for points in strokes:
        page.mouse.move(box["x"] + points[0][0] * s, box["y"] + points[0][1] * s)
        page.mouse.down()
        for x, y in points[1:]:
            page.mouse.move(box["x"] + x * s, box["y"] + y * s, steps=12)
        page.mouse.up()


def settled_reading(prediction, quiet_s: float = 2.0, timeout_s: float = 60.0) -> int:
    """The digit the page reads once its reading has not changed for quiet_s: the canvas sends its last stroke
    a moment after the mouse is up, later on a loaded machine, and a reading taken before it is not the one
    the drawing is kept with."""
    import time
    last, since, end = None, time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() < end:
        now = int(re.search(r"Prediction: (\d)", prediction.inner_text()).group(1))
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return now
        time.sleep(0.25)
    raise AssertionError("the reading did not settle")


def test_two_wrong_readings_corrected_into_my_handwriting_then_fine_tuned_with_before_and_after(learner):
    url, store, browser = learner
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(url + "/draw")
    expect(page.locator("canvas.upper-canvas").first).to_be_visible(timeout=60_000)
    for n, strokes in enumerate((FOUR, NINE), start=1):
        page.get_by_role("button", name="Reset canvas & history").click()
        mouse_strokes(page, strokes)
        prediction = page.get_by_text("Prediction:")
        expect(prediction).to_be_visible(timeout=60_000)
        settle(page)  # the last stroke's rerun shown (under load the canvas sends it late)
        read = settled_reading(prediction)
        meant = (read + 1) % 10  # whatever it read, this person meant another digit: a wrong reading to correct
        page.get_by_role("combobox", name="It is a").click()
        page.get_by_role("option", name=str(meant), exact=True).click()
        settle(page)  # the choice's rerun over: a click on the button it redraws can be lost
        page.get_by_role("button", name="➕ Add to my handwriting").click()
        # The page keeps the drawing with its own reading at the click: on a loaded machine the canvas once sent
        # its last stroke after the reading above had held for 2 s (the page then read a 9, not the 6 above).
        added = page.get_by_text(re.compile(rf"Added: a {meant} \(read as \d\)"))
        expect(added).to_be_visible(timeout=30_000)
        said_read = int(re.search(r"read as (\d)", added.inner_text()).group(1))
        expect(page.get_by_text(f"My handwriting ({n} drawing{'s' if n > 1 else ''})")).to_be_visible(timeout=30_000)
        newest = HandwritingSet(store).drawings()[-1]  # oldest first
        assert (newest.label, newest.read_as) == (meant, said_read), "the store keeps what the page said it added"
    mine = HandwritingSet(store).drawings()
    assert [d.read_as != d.label for d in mine] == [True, True]
    shot(page, "learner-4-my-handwriting")
    page.get_by_role("button", name="🎯 Fine-tune on 2 drawings").click()
    expect(page.get_by_text("Before and after fine-tuning")).to_be_visible(timeout=180_000)
    table = page.locator('[data-testid="stTable"]').first
    expect(table).to_contain_text("your drawings it trained on (2)")
    expect(table).to_contain_text("the test split (500 images)")
    text = table.inner_text()
    assert "before" in text and "after" in text and "points" in text, text
    (tuned,) = [r for r in store.list_runs() if r.source == "finetune"]
    assert tuned.status == "completed" and tuned.config.init_checkpoint
    scroll_to(table)
    shot(page, "learner-5-fine-tuned")
