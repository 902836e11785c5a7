"""Every action a user takes, clicked in a real browser (Chromium) against `python -m ui.serve` on 127.0.0.1,
asserting on what the user sees: Pause, Resume, Stop and Resume from checkpoint by their buttons; a checkpoint
uploaded (valid and invalid), downloaded, exported (MindIR, ONNX) and the file downloaded, renamed, deleted; the
canvas's stroke width and Clear, and a prediction whose checkpoint was deleted; runs chosen on Compare and Runs
staying chosen while their status, accuracy and name change; the language switch on every page;
the Data page's three sources, with a download from a mirror on 127.0.0.1 showing progress and cancelled; Evaluate
on a folder, read with the four 1-pixel shifts."""
import re
from pathlib import Path

import pytest

from core.app import model_service
from core.config import TrainConfig
from core.runs.store import RunStore
from tests.support.canvas import SEVEN, ink, stroke
from tests.support.helpers import let_pass, nav, open_expander, settle, wait_for
from tests.support.mirror import Server
from tests.support.server import launch_chromium, require_chromium, start_server

require_chromium(pytest)

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

PAGES = ("data", "configure", "train", "evaluate", "draw", "compare", "sweeps", "weights", "runs")
TITLES = {"en": {"data": "Data", "configure": "Configure", "train": "Train", "evaluate": "Evaluate",
                 "draw": "Draw & predict", "compare": "Compare", "sweeps": "Sweeps", "weights": "Weights",
                 "runs": "Runs"},
          "zh": {"data": "数据", "configure": "配置", "train": "训练", "evaluate": "评估", "draw": "手写识别",
                 "compare": "对比", "sweeps": "扫描", "weights": "权重", "runs": "运行记录"}}
HEADINGS = {lang: {**names, "compare": {"en": "Compare runs", "zh": "对比运行"}[lang],
                   "weights": {"en": "Weights over time", "zh": "权重随时间的变化"}[lang]}
            for lang, names in TITLES.items()}
# The first archive the download asks for, as large as the real one: served slowly, it can be watched and cancelled.
SLOW_ARCHIVE = {"train-images-idx3-ubyte.gz": bytes(9_912_422)}


@pytest.fixture(scope="module")
def studio(tmp_path_factory):
    mirror = Server(SLOW_ARCHIVE, mode="slow")
    store = tmp_path_factory.mktemp("actions-store")
    srv = start_server(store, extra_env={"STUDIO_MNIST_MIRRORS": mirror.url})
    with sync_playwright() as p:
        browser = launch_chromium(p)
        yield srv.url, RunStore(store), browser
        browser.close()
    srv.stop()
    mirror.close()


def open_page(browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.goto(url)
    return page


def heading(page, title: str):
    return page.get_by_role("heading", name=re.compile(re.escape(title) + "$")).first


def switch_language(page, name: str):
    """Choose `name` in the sidebar's language box once the page has settled; a list that a late rerun closed
    before it showed is opened again (a click on a box the rerun replaces opens nothing)."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').last
    option = page.get_by_role("option", name=name)
    for _ in range(3):
        settle(page)
        box.click()
        try:
            option.wait_for(state="visible", timeout=10_000)
            break
        except PlaywrightTimeout:
            continue
    option.click()


def choose(page, label: str, name: str):
    """Choose the run called `name` in the page's selectbox `label`."""
    box = page.get_by_role("combobox", name=label)
    box.click()
    page.get_by_role("option", name=re.compile(re.escape(name))).first.click()
    expect(box).to_have_value(re.compile(re.escape(name)), timeout=30_000)


def finished_run(store: RunStore, ckpt: Path, name: str) -> str:
    run_id = model_service.import_checkpoint(store, ckpt.read_bytes(), "mlp.ckpt")
    store.rename(run_id, name)
    return run_id


def test_pause_resume_stop_and_resume_from_checkpoint_by_their_buttons(studio):
    url, store, browser = studio
    page = open_page(browser, url + "/configure?epochs=40&network=lenet5")
    expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
    nav(page, "Train")
    page.get_by_role("button", name="Start training").click()
    expect(page.locator("text=/— running/").first).to_be_visible(timeout=60_000)

    settle(page)  # a click while the page still runs its script can be lost (docs/testing.md)
    page.get_by_role("button", name="⏸️ Pause").click()
    expect(page.locator("text=/— paused/").first).to_be_visible(timeout=30_000)
    run = store.active_run()
    assert run.status == "paused"
    step = run.step
    let_pass(2.0, "a paused run takes no step")
    assert store.get(run.id).step == step  # paused means no step is taken
    settle(page)
    page.get_by_role("button", name="▶️ Resume").click()
    expect(page.locator("text=/— running/").first).to_be_visible(timeout=30_000)

    page.wait_for_function("() => document.body.innerText.match(/epoch [2-9]\\/40|epoch [1-9][0-9]\\/40/)",
                           timeout=120_000)  # a finished epoch: a checkpoint to resume from
    settle(page)
    page.get_by_role("button", name="⏹️ Stop").click()
    expect(page.locator("text=/— stopped/").first).to_be_visible(timeout=30_000)
    stopped = store.get(run.id)
    saved = stopped.checkpoint_epoch  # the last finished epoch; stopped.epoch may be the unfinished one after it
    assert stopped.status == "stopped" and stopped.checkpoint and 1 <= saved <= stopped.epoch < 40

    settle(page)  # the stopped run's buttons only: a click during the rerun met two of them
    page.get_by_role("button", name="🔁 Resume from checkpoint").click()
    expect(page.locator("text=/— running/").first).to_be_visible(timeout=60_000)
    resumed = store.get(run.id)
    # The same run, from its checkpoint: at or past the end of the saved epoch (an unfinished epoch's steps are
    # dropped on resuming; a start from scratch would be in epoch 1, near step 0).
    assert resumed.status == "running" and resumed.epoch >= saved
    assert resumed.step >= saved * (stopped.total_steps // 40)
    settle(page)
    page.get_by_role("button", name="⏹️ Stop").click()
    expect(page.locator("text=/— stopped/").first).to_be_visible(timeout=30_000)


def test_a_checkpoint_uploaded_downloaded_exported_renamed_and_deleted_on_the_runs_page(studio, trained_ckpt,
                                                                                       tmp_path):
    url, store, browser = studio
    page = open_page(browser, url + "/runs")
    expect(heading(page, "Runs")).to_be_visible(timeout=60_000)
    open_expander(page, "Upload a checkpoint")  # open already while the store holds no run
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    bad = tmp_path / "notes.ckpt"
    bad.write_bytes(b"these are my notes, not a checkpoint" * 10)
    uploader.set_input_files(str(bad))
    expect(page.locator('[data-testid="stAlertContentError"]').first).to_be_visible(timeout=30_000)
    before = {r.id for r in store.list_runs()}
    assert "notes.ckpt" in page.locator('[data-testid="stAlertContentError"]').first.inner_text()

    uploader.set_input_files(str(trained_ckpt))
    expect(page.get_by_text(re.compile(r"Added as run \S+")).first).to_be_visible(timeout=30_000)
    (run_id,) = {r.id for r in store.list_runs()} - before
    run = store.get(run_id)
    page.reload()  # the run list: the new run is the newest, so it is the one chosen
    expect(page.get_by_text(run_id).first).to_be_visible(timeout=60_000)

    page.get_by_label("Name").fill("my uploaded model")
    page.get_by_role("button", name="Rename").click()
    chosen = page.get_by_role("combobox", name="Run")
    expect(chosen).to_have_value(re.compile("my uploaded model"), timeout=30_000)  # the run's new name
    assert store.get(run_id).name == "my uploaded model"

    with page.expect_download() as got:
        page.get_by_role("button", name="⬇️ Download checkpoint").click()
    ckpt = Path(got.value.path())
    assert got.value.suggested_filename == "my_uploaded_model.ckpt"
    assert ckpt.read_bytes() == Path(run.checkpoint).read_bytes()

    for fmt, runtime in (("MindIR", "MindSpore (ms.load"), ("ONNX", "ONNX Runtime")):
        page.get_by_text(fmt, exact=True).first.click()
        settle(page)  # the format's rerun over: a click on the button it redraws can be lost
        page.get_by_role("button", name="📦 Export").click()
        said = page.get_by_text(re.compile(f"read by {re.escape(runtime)}.*identical predictions")).first
        expect(said).to_be_visible(timeout=120_000)
        m = re.search(r"([\d,]+) of ([\d,]+)", said.inner_text())
        assert m and m.group(1) == m.group(2), said.inner_text()  # every prediction the same
        name = f"my_uploaded_model.{fmt.lower()}"  # named after the run, as the button says
        with page.expect_download() as got:
            page.get_by_role("button", name=f"⬇️ Download {name}").click()
        assert got.value.suggested_filename == name
        assert Path(got.value.path()).read_bytes() == (store.export_dir(run_id) / f"model.{fmt.lower()}").read_bytes()
        expect(page.locator("code").filter(has_text=f'"{name}"').first).to_be_visible()  # predict.py for that file
    import onnx  # deferred: only this check reads the ONNX file
    onnx.checker.check_model(onnx.load(str(store.export_dir(run_id) / "model.onnx")))

    expect(page.get_by_role("button", name="🗑️ Delete")).to_be_disabled()  # until the user says they are sure
    page.get_by_text("Yes, delete this run and its checkpoint").click()
    settle(page)
    page.get_by_role("button", name="🗑️ Delete").click()
    wait_for(lambda: store.get(run_id) is None, 30, "the run deleted")
    expect(page.get_by_text("my uploaded model")).to_have_count(0, timeout=30_000)  # not in the table, not chosen
    assert store.get(run_id) is None and not Path(run.checkpoint).exists()


def test_runs_chosen_on_compare_and_runs_stay_chosen_while_their_status_accuracy_and_name_change(studio):
    """A browser keeps a choice by its label: a run chosen on Compare while it trained fell out of the selection
    when it ended (its label said its status and accuracy), and a run renamed on the Runs page gave way to another."""
    url, store, browser = studio
    oldest, older, newer = (store.create_run(TrainConfig(network="mlp", epochs=3), name=f"chosen {name}",
                                             source="cli", exclusive=False) for name in ("oldest", "older", "newer"))
    for run_id in (oldest, older, newer):
        store.add_steps(run_id, [(1, 1, 2.0, 0.1), (2, 1, 1.5, 0.2)], step=2)
        store.update(run_id, status="running", epoch=1, best_val_acc=0.5)
    store.finish(oldest, "completed")
    store.finish(older, "completed")  # the newer one trains
    page = open_page(browser, url + "/compare")
    chips = page.get_by_role("button", name=re.compile("^Remove "))  # each chosen run's chip has one
    expect(chips).to_have_count(2, timeout=60_000)  # the two newest
    settle(page)
    page.get_by_role("combobox", name="Runs").click()  # the person adds the third: the browser holds the choice
    page.get_by_role("option", name=re.compile("chosen oldest")).click()
    page.keyboard.press("Escape")  # the list closes
    expect(chips).to_have_count(3, timeout=30_000)
    store.update(newer, best_val_acc=0.75)
    store.finish(newer, "completed")
    # The sidebar sees the run end and draws the page again, reading the runs anew.
    expect(page.get_by_text("No run is training.")).to_be_visible(timeout=30_000)
    settle(page)
    expect(chips).to_have_count(3)
    expect(page.get_by_role("button", name=re.compile("^Remove .*chosen newer"))).to_have_count(1)

    page.goto(url + "/runs")
    expect(heading(page, "Runs")).to_be_visible(timeout=60_000)
    settle(page)
    choose(page, "Run", "chosen older")
    expect(page.get_by_text(older).first).to_be_visible(timeout=30_000)
    settle(page)  # the run chosen before keeps its (faded) Name field until the page has drawn the new one
    page.get_by_label("Name").fill("renamed older")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("combobox", name="Run")).to_have_value(re.compile("renamed older"), timeout=30_000)
    expect(page.get_by_text(older).first).to_be_visible()
    for run_id in (oldest, older, newer):
        store.delete(run_id)


def test_the_canvas_stroke_width_clear_and_a_deleted_checkpoint_on_the_draw_page(studio, trained_ckpt):
    url, store, browser = studio
    run_id = finished_run(store, trained_ckpt, "draw me")
    page = open_page(browser, url + "/draw")
    expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=60_000)
    choose(page, "Model", "draw me")

    slider = page.get_by_role("slider", name="Stroke width")
    inks = {}
    for key, width in (("Home", 8), ("End", 40)):
        slider.focus()
        page.keyboard.press(key)
        expect(slider).to_have_value(str(width), timeout=30_000)
        page.wait_for_timeout(1000)  # the canvas is drawn again with the new width
        stroke(page, SEVEN)
        expect(page.get_by_text("Prediction:")).to_be_visible(timeout=60_000)
        inks[width] = ink(page)
        page.get_by_role("button", name="Reset canvas & history").click()  # the canvas's own 🗑
        wait_for(lambda: ink(page) == 0, 30, "the canvas cleared by its 🗑")
    assert inks[40] > 3 * inks[8] > 0, inks  # the wider stroke drew wider
    expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=30_000)  # cleared: nothing to read

    Path(store.get(run_id).checkpoint).unlink()  # deleted on disk while the page is open
    stroke(page, SEVEN)
    expect(page.get_by_text("no longer exists on disk").first).to_be_visible(timeout=60_000)
    assert "Traceback" not in page.inner_text("body")


def test_the_language_switch_on_every_page(studio):
    url, store, browser = studio
    page = open_page(browser, url + "/data")
    for name in PAGES:
        nav(page, TITLES["en"][name])
        expect(heading(page, HEADINGS["en"][name])).to_be_visible(timeout=60_000)
        switch_language(page, "简体中文")
        expect(heading(page, HEADINGS["zh"][name])).to_be_visible(timeout=30_000)
        expect(page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]', has_text=TITLES["zh"]["runs"]))\
            .to_be_visible()  # the sidebar too
        assert "lang=zh" in page.url, page.url
        switch_language(page, "English")
        expect(heading(page, HEADINGS["en"][name])).to_be_visible(timeout=30_000)


def test_the_data_pages_three_sources_a_download_cancelled_and_evaluate_on_a_folder(studio, small_mnist, tmp_path,
                                                                                    trained_ckpt, shared_mnist):
    url, store, browser = studio
    page = open_page(browser, url + "/data")
    expect(page.get_by_text(re.compile(r"In use: .* · 5,000 training images")).first).to_be_visible(timeout=60_000)

    settle(page)  # a click while the page still runs its script is dropped
    page.get_by_text("My MNIST folder").click()
    page.get_by_label("Folder with train/ and test/").fill(str(tmp_path / "nowhere"))
    page.get_by_role("button", name="Use this folder").click()
    expect(page.get_by_text("does not exist").first).to_be_visible(timeout=30_000)
    page.get_by_label("Folder with train/ and test/").fill(str(small_mnist))
    page.get_by_role("button", name="Use this folder").click()
    expect(page.get_by_text(re.compile(r"In use: .* · 1,200 training images")).first).to_be_visible(timeout=30_000)

    page.get_by_text("Download the full MNIST (70,000)").click()
    target = tmp_path / "downloaded"
    page.get_by_label("Download into").fill(str(target))
    page.get_by_role("button", name="⬇️ Download").click()
    progress = page.get_by_text(re.compile(r"file 1/4 train-images-idx3-ubyte.gz: [\d.]+ of 9\.9 MB")).first
    expect(progress).to_be_visible(timeout=30_000)
    first = float(re.search(r": ([\d.]+) of", progress.inner_text()).group(1))
    wait_for(lambda: float(re.search(r": ([\d.]+) of", progress.inner_text()).group(1)) > first, 30,
             "the bar to move while the bytes arrive")
    page.get_by_role("button", name="Cancel download").click()
    expect(page.get_by_text("Download cancelled").first).to_be_visible(timeout=30_000)
    assert (target / ".download" / "train-images-idx3-ubyte.gz.part").stat().st_size > 0  # kept to resume

    page.get_by_text("Bundled 5,000 images (offline)").click()
    expect(page.get_by_text(re.compile(r"In use: .* · 5,000 training images")).first).to_be_visible(timeout=30_000)

    finished_run(store, trained_ckpt, "evaluate me")
    nav(page, "Evaluate")
    choose(page, "Run", "evaluate me")
    expect(page.get_by_text("misclassified").first).to_be_visible(timeout=120_000)
    expect(page.get_by_text(re.compile(r"of 500$")).first).to_be_visible()  # the run's own folder: 500 test images
    page.get_by_role("textbox", name=re.compile("MNIST folder to evaluate on")).fill(str(shared_mnist))
    page.keyboard.press("Enter")
    expect(page.get_by_text(re.compile(r"of 10,000$")).first).to_be_visible(timeout=120_000)  # the official 10,000
    settle(page)
    page.get_by_text("Read each image with its four 1-pixel shifts").click()  # test-time augmentation
    expect(page.get_by_text(re.compile(r"\d\.\d\d points against one reading")).first).to_be_visible(
        timeout=120_000)
    expect(page.get_by_text("cross-entropy of the averaged reading").first).to_be_visible()
    # the rerun after the folder changed keeps the test split: its label, which names the count, changed with it
    expect(page.get_by_role("radio", name="test (10,000 images)")).to_be_checked()
    assert "unknown split" not in page.inner_text("body")
    assert "Traceback" not in page.inner_text("body")
