"""A class round in a real browser (Chromium on 127.0.0.1, a password set as for a room's server): the teacher
opens Draw in presentation mode at 853×480 (a 1280×720 projector at 150 %) and asks for a 7; two phones (390×844,
touch) on the class link see the ask above their canvas, draw with a finger and send; the projector's mosaic shows
each drawing with the model's reading as it arrives; the teacher hides one, teaches the model the class's
handwriting (a fine-tune run), reads before and after, and each phone shows its own drawings before and after;
the lesson file opens offline with the class's drawings (no names) and the before and after; End lesson wipes
every drawing."""
import re
import zipfile

import pytest

from core.app import model_service
from core.data.idx import read_images, read_labels
from core.runs.people.class_round import Lesson
from core.runs.store import RunStore
from tests.support.canvas import SEVEN, ink, touch_stroke
from tests.support.helpers import settle, wait_for
from tests.support.server import require_chromium, served_browser
from tests.browser.test_browser import SHOTS, shot
from tests.browser.test_browser_class import PASSWORD, PHONE, enter

require_chromium(pytest)

from playwright.sync_api import expect  # noqa: E402

ROOM = dict(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
# another hand's two 7s (a shifted copy of one is the same 28×28 image once centred, and is sent once only)
SEVEN_WIDE = [(50, 70), (230, 60), (160, 150), (120, 250)]
SEVEN_CROSSED = [(80, 50), (200, 55), (150, 150), (140, 240)]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, trained_ckpt):
    root = tmp_path_factory.mktemp("class-round-store")
    model_service.import_checkpoint(RunStore(root), trained_ckpt.read_bytes(), "mlp.ckpt")
    with served_browser(root, SHOTS, extra_env={"STUDIO_PASSWORD": PASSWORD}) as served:
        yield served


def class_link(teacher, url: str) -> str:
    """The class link, as the teacher's popover shows it."""
    teacher.goto(url + "/train")
    expect(teacher.get_by_role("heading", name="🏋️ Train")).to_be_visible(timeout=60_000)
    teacher.get_by_role("button", name=re.compile("Class link")).first.click()
    code = teacher.locator('.st-key-class_qr [data-testid="stCode"]').first
    expect(code).to_be_visible(timeout=60_000)
    link = code.inner_text().strip()
    assert "class=" in link, link
    teacher.keyboard.press("Escape")
    return link


SAYS = {"en": {"ask": "✋ Everyone: draw a 7", "send": "📤 Send my 7 to the class", "sent": r"Sent: your 7, read as \d",
               "mine": r"Your drawings in this lesson: 2", "after": r"^7: read \d, now \d$",
               "empty": "The canvas is empty"},
        "zh": {"ask": "✋ 请大家写一个 7", "send": "📤 把我的 7 发给全班", "sent": r"已发送：你的 7，识别为 \d",
               "mine": r"你本节课的手写图：2 张", "after": r"^7：之前 \d，现在 \d$", "empty": "画布是空的"}}


def send_a_seven(phone, points, lesson: Lesson, sent_before: int, says: dict) -> None:
    """Draw a 7 with a finger, send it, and clear the canvas for the next."""
    touch_stroke(phone, points)
    wait_for(lambda: ink(phone) > 200, what="the finger's stroke", timeout=15)
    send = phone.get_by_role("button", name=says["send"])
    expect(send).to_be_visible(timeout=60_000)
    assert send.bounding_box()["y"] < phone.locator("canvas.upper-canvas").first.bounding_box()["y"], \
        "on a phone Send is above the canvas, beside the reading"
    send.tap()
    expect(phone.get_by_text(re.compile(says["sent"])).last).to_be_visible(timeout=30_000)
    wait_for(lambda: len(lesson.drawings()) == sent_before + 1, what="the drawing in the store", timeout=15)
    phone.get_by_role("button", name="Reset canvas & history").tap()
    wait_for(lambda: ink(phone) == 0, what="the canvas to clear", timeout=15)
    expect(phone.get_by_text(says["empty"])).to_be_visible(timeout=30_000)  # in the phone's language


def mosaic_tiles(page) -> int:
    return page.locator(".class-mosaic img").count()


def test_a_class_round_from_the_phones_to_the_projector_taught_and_wiped(classroom, tmp_path):
    url, store, browser = classroom
    teacher_ctx = browser.new_context(**ROOM)
    teacher = teacher_ctx.new_page()
    teacher.goto(url + "/draw?present=1")
    enter(teacher, "Password", PASSWORD)
    enter(teacher, "Your name", "Teacher")
    wait_for(lambda: any(c["name"] == "studio_person" for c in teacher_ctx.cookies()), what="the name's cookie",
             timeout=15)
    link = class_link(teacher, url)

    # --- the teacher asks for a 7, on the projector ------------------------------------------------------------
    teacher.goto(url + "/draw?present=1")
    expect(teacher.get_by_text("No round yet")).to_be_visible(timeout=60_000)
    teacher.get_by_label("Ask the class for").click()
    teacher.get_by_role("option", name="7", exact=True).click()
    settle(teacher)  # the choice's rerun over: a click on the button it redraws can be lost
    teacher.get_by_role("button", name="▶️ Start a round").click()
    expect(teacher.get_by_text("Round 1")).to_be_visible(timeout=30_000)
    lesson = Lesson(store)
    assert lesson.current().open and lesson.current().asked == 7

    # --- two phones on the class link: the ask above the canvas; each sends its 7s ------------------------------
    phones = []
    for strokes, lang in (([SEVEN], "en"), ([SEVEN_WIDE, SEVEN_CROSSED], "zh")):  # the second phone in Chinese
        phone = browser.new_context(**PHONE).new_page()
        phone.goto(link)
        expect(phone.get_by_role("heading", name="🏋️ Train")).to_be_visible(timeout=60_000)
        phone.goto(url + f"/draw?lang={lang}")
        ask = phone.get_by_role("heading", name=SAYS[lang]["ask"])
        expect(ask).to_be_visible(timeout=60_000)
        assert ask.bounding_box()["y"] < phone.locator("canvas.upper-canvas").first.bounding_box()["y"]
        for points in strokes:
            send_a_seven(phone, points, lesson, len(lesson.drawings()), SAYS[lang])
        phones.append(phone)
    drawings = lesson.drawings()
    assert len(drawings) == 3 and {d.label for d in drawings} == {7}
    students = {d.student for d in drawings}
    assert len(students) == 2 and all(s.startswith("student-") for s in students), "a display name, no more"
    expect(phones[1].get_by_text(re.compile(SAYS["zh"]["mine"]))).to_be_visible(timeout=30_000)
    shot(phones[1], "class_round_phone")

    # --- the projector's mosaic: every drawing, with its reading, by digit -------------------------------------
    wait_for(lambda: mosaic_tiles(teacher) == 3, what="the three drawings on the projector", timeout=30)
    expect(teacher.get_by_text(re.compile(r"^7: 3 drawings, \d read right$"))).to_be_visible()
    for d in drawings:
        expect(teacher.get_by_text(f"#{d.id} → {d.read_as}", exact=True)).to_be_visible()
    shot(teacher, "class_round_mosaic")

    # --- the teacher hides one: off the screen, out of the fine-tune -----------------------------------------
    hidden = drawings[-1]
    number = teacher.get_by_label("Drawing #", exact=True)
    number.fill(str(hidden.id))
    number.press("Enter")
    expect(teacher.get_by_text(re.compile(f"^#{hidden.id}: a 7, student-"))).to_be_visible(timeout=30_000)
    teacher.get_by_role("button", name="🙈 Hide").click()
    wait_for(lambda: mosaic_tiles(teacher) == 2, what="the hidden drawing to leave the mosaic", timeout=30)
    assert [d.id for d in lesson.drawings() if d.hidden] == [hidden.id]

    # --- teach it our handwriting: a fine-tune run, then before and after --------------------------------------
    teach = teacher.get_by_role("button", name="🎓 Teach it 1 drawing (1 held out)")
    expect(teach).to_be_visible(timeout=30_000)
    teach.click()
    expect(teacher.get_by_text("Before and after the class's handwriting")).to_be_visible(timeout=240_000)
    expect(teacher.get_by_text("the class's drawings held out (1)")).to_be_visible()
    tuned = store.get(lesson.current().finetune_run)
    assert tuned.status == "completed" and tuned.name.endswith("+ our handwriting")
    shot(teacher, "class_round_taught")

    # --- each phone: its own drawings, before → after ---------------------------------------------------------
    for phone, lang in zip(phones, ("en", "zh"), strict=True):
        expect(phone.get_by_text(re.compile(SAYS[lang]["after"])).first).to_be_visible(timeout=60_000)
    shot(phones[0], "class_round_phone_after")

    # --- the lesson file: one HTML file that replays the lesson offline, without names -----------------------
    teacher.get_by_role("button", name="📤 Make the lesson file (HTML)").click()
    download = teacher.get_by_role("button", name=re.compile(r"^⬇️ Download lesson-\d{4}-\d\d-\d\d\.html$"))
    expect(download).to_be_visible(timeout=60_000)
    shot(teacher, "class_round_lesson_file_ready")
    with teacher.expect_download() as got:
        download.click()
    lesson_file = tmp_path / got.value.suggested_filename
    got.value.save_as(lesson_file)
    assert lesson_file.name.startswith("lesson-") and lesson_file.stat().st_size < 1_000_000
    offline = browser.new_context(offline=True).new_page()
    offline.goto(lesson_file.as_uri())
    expect(offline.get_by_text("The class's drawings (2)")).to_be_visible(timeout=30_000)
    expect(offline.locator(".class-mosaic img")).to_have_count(2)
    expect(offline.get_by_text("Before and after the class's handwriting")).to_be_visible()
    expect(offline.locator("#curves .main-svg").first).to_be_visible(timeout=30_000)  # plotly.js, unpacked offline
    assert "student-" not in offline.content() and str(store.root) not in offline.content()
    shot(offline, "class_round_lesson_file")

    # --- the drawings out as MNIST IDX files: the two shown, their digits, no names --------------------------
    teacher.get_by_role("button", name="📤 Export the drawings (MNIST IDX, no names)").click()
    with teacher.expect_download() as got:
        teacher.get_by_role("button", name="⬇️ Download class-handwriting.zip").click()
    with zipfile.ZipFile(got.value.path()) as z:
        z.extractall(tmp_path)
    folder = tmp_path / "class-handwriting" / "train"
    assert list(read_labels(folder / "train-labels-idx1-ubyte")) == [7, 7]
    assert read_images(folder / "train-images-idx3-ubyte").shape == (2, 28, 28)

    # --- End lesson: every drawing wiped --------------------------------------------------------------------
    teacher.get_by_role("button", name="🧹 End the lesson").click()
    expect(teacher.get_by_text("No round yet")).to_be_visible(timeout=30_000)
    assert lesson.drawings() == [] and lesson.rounds() == []
