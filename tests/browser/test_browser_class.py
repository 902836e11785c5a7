"""A class with phones, in a real browser (Chromium on 127.0.0.1, a password set as for a room's server):
the teacher signs in once (a reload asks nothing: the server's HttpOnly cookie), starts a slow run and shows
the class link's QR code; a phone (390×844, touch) opens that link without the password, watches the run,
cannot start, pause or change anything, goes to Draw through the drawer (which closes), draws a digit with a
finger, clears it with the canvas's visible reset button, and stays a viewer after a reload."""
import re
import time

import pytest

from core.app import model_service
from core.app.passes import PASS_COOKIE
from core.runs.store import RunStore
from tests.support.canvas import SEVEN, ink, touch_stroke
from tests.support.helpers import settle, wait_for
from tests.support.server import require_chromium, served_browser
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect  # noqa: E402

PASSWORD = "lesson-42"
PHONE = dict(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, device_scale_factor=3,
             user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                        "Chrome/126.0.0.0 Mobile Safari/537.36")  # a phone's browser says "Mobile"


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, trained_ckpt):
    root = tmp_path_factory.mktemp("class-store")
    model_service.import_checkpoint(RunStore(root), trained_ckpt.read_bytes(), "mlp.ckpt")
    with served_browser(root, SHOTS, extra_env={"STUDIO_PASSWORD": PASSWORD}) as served:
        yield served


def enter(page, field: str, value: str) -> None:
    box = page.get_by_label(field, exact=True)
    expect(box).to_be_visible(timeout=60_000)
    box.fill(value)
    page.get_by_role("button", name="Enter").click()


def test_a_phone_watches_through_the_class_link_draws_and_cannot_start(classroom):
    url, store, browser = classroom
    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    teacher = teacher_ctx.new_page()

    # --- the teacher signs in once: the server's cookie keeps them in across a reload --------------------------
    teacher.goto(url + "/train?delay=0.5&network=mlp")
    enter(teacher, "Password", PASSWORD)
    enter(teacher, "Your name", "Teacher")
    expect(teacher.get_by_role("heading", name=re.compile("Train"))).to_be_visible(timeout=60_000)
    access = [c for c in teacher_ctx.cookies() if c["name"] == PASS_COOKIE]
    assert access and access[0]["httpOnly"] and access[0]["sameSite"] == "Lax", access
    assert 11 * 3600 < access[0]["expires"] - time.time() <= 12 * 3600, "it expires"
    wait_for(lambda: any(c["name"] == "studio_person" for c in teacher_ctx.cookies()), what="the name's cookie",
             timeout=15)
    teacher.reload()
    expect(teacher.get_by_role("heading", name=re.compile("🏋️ Train"))).to_be_visible(timeout=60_000)
    assert teacher.get_by_label("Password", exact=True).count() == 0, "a reload asks for no password"

    # --- a slow run, and the class link's code on the teacher's screen ---------------------------------------
    start = teacher.get_by_role("button", name="Start training")
    expect(start).to_be_visible(timeout=90_000)
    assert "delay=0.5" in teacher.evaluate("location.href"), "signing in kept the link's parameters"
    start.click()
    expect(teacher.get_by_role("heading", name=re.compile("— running$"))).to_be_visible(timeout=90_000)
    run = store.active_run()
    assert run.submitter == "Teacher" and run.step_delay == pytest.approx(0.5)
    teacher.get_by_role("button", name=re.compile("Class link")).first.click()
    qr = teacher.locator('.st-key-class_qr img').first  # the sidebar's
    expect(qr).to_be_visible()
    assert qr.bounding_box()["width"] >= 200, "a code the back row's phones can scan"
    link = teacher.locator('.st-key-class_qr [data-testid="stCode"]').first.inner_text().strip()
    assert link.startswith(url + "/train?class=")
    # the test's server listens on 127.0.0.1: the code works on this computer only, and the popover says so
    expect(teacher.get_by_text("No phone can open it").first).to_be_visible()
    shot(teacher, "class_link_qr")

    # --- a phone opens it: no password, the run live, nothing to start or control ---------------------------
    phone_ctx = browser.new_context(**PHONE)
    phone = phone_ctx.new_page()
    phone.goto(link)
    expect(phone.get_by_role("heading", name=re.compile("— running$"))).to_be_visible(timeout=60_000)
    assert phone.get_by_label("Password", exact=True).count() == 0
    assert phone.get_by_label("Your name", exact=True).count() == 0, "a viewer gives no name (nor reserves one)"
    assert str(store.root) not in phone.content(), "a viewer sees no server path"
    expect(phone.get_by_text("The class link lets you watch and draw, not start a run.")).to_be_visible()
    # (retried: a page run's elements drawn before the session knew its viewer could linger a moment)
    expect(phone.get_by_role("button", name=re.compile("Pause|Stop|Start training"))).to_have_count(0)
    curves = phone.locator('[data-testid="stPlotlyChart"]').first
    expect(curves).to_be_visible(timeout=30_000)
    assert curves.locator(".modebar").count() == 0, "no chart toolbar over a phone's legend"
    axes = wait_for(lambda: phone.evaluate("Object.keys(document.querySelector('[data-testid=stPlotlyChart] "
                                           ".js-plotly-plot')?.layout || {}).join(' ')"), what="the chart", timeout=30)
    assert "yaxis2" in axes and "yaxis3" not in axes, "a phone: loss and accuracy, not three charts in a row"
    shot(phone, "phone_train_viewer")

    # --- the teacher's own presentation link on a phone: readable type, nothing wider than the screen -------
    room_on_phone = phone_ctx.new_page()
    room_on_phone.goto(link + "&present=1")
    expect(room_on_phone.get_by_role("heading", name=re.compile("— running$"))).to_be_visible(timeout=60_000)
    wait_for(lambda: room_on_phone.evaluate("getComputedStyle(document.documentElement).fontSize") == "17px",
             what="presentation type for a narrow screen", timeout=15)
    assert room_on_phone.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scrolling"
    room_on_phone.close()

    # --- through the drawer to Draw: the drawer closes, the page is the phone's ------------------------------
    phone.locator('[data-testid="stExpandSidebarButton"]').tap()
    sidebar = phone.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    phone.get_by_role("link", name=re.compile("Draw")).tap()
    expect(phone.get_by_role("heading", name=re.compile("Draw"))).to_be_visible(timeout=60_000)
    expect(sidebar).to_have_attribute("data-collapsed", "true", timeout=15_000)

    # --- a digit drawn with a finger, read; the canvas's reset, visible and finger-sized, clears it -----------
    touch_stroke(phone, SEVEN)
    wait_for(lambda: ink(phone) > 200, what="the finger's stroke on the canvas", timeout=15)
    reading = phone.get_by_role("heading", name=re.compile(r"^Prediction: \d"))
    expect(reading).to_be_visible(timeout=60_000)
    assert reading.bounding_box()["y"] < phone.locator("canvas.upper-canvas").first.bounding_box()["y"], \
        "on a phone the reading is above the canvas, not below it off-screen"
    reset = phone.get_by_role("button", name="Reset canvas & history")
    box = reset.bounding_box()
    assert reset.is_visible() and box["width"] >= 40 and box["height"] >= 40, box
    assert reset.evaluate("b => getComputedStyle(b.closest('.dc-toolbar')).opacity") == "1"
    expect(phone.get_by_role("button", name="Undo")).to_be_visible()
    expect(phone.get_by_role("button", name="Update the app with this drawing")).to_be_hidden()  # it did nothing
    shot(phone, "phone_draw")
    reset.tap()
    wait_for(lambda: ink(phone) == 0, what="the canvas to clear", timeout=15)

    # --- a reload stays in, as a viewer; Configure offers no Start --------------------------------------------
    phone.goto(url + "/configure")
    expect(phone.get_by_role("heading", name=re.compile("Configure"))).to_be_visible(timeout=60_000)
    assert phone.get_by_label("Password", exact=True).count() == 0, "the cookie keeps the phone in"
    expect(phone.get_by_text("The class link lets you watch and draw, not start a run.")).to_be_visible()
    expect(phone.get_by_role("button", name="Start training")).to_have_count(0)
    assert len(store.list_runs()) == 2, "the phone started nothing"
    teacher.goto(url + "/train")
    settle(teacher)  # a click while the page still runs its first script can be lost (docs/testing.md)
    teacher.get_by_role("button", name="⏹️ Stop").click()
    wait_for(lambda: store.get(run.id).status == "stopped", what="the teacher's Stop", timeout=60)
