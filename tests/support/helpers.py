"""Helpers for tests that run the project's programs as separate processes."""
import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from core import PROJECT_ROOT


def cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def wait_for(predicate, timeout=60.0, what="condition", every=0.1):
    """predicate()'s first true value, asked every `every` seconds; AssertionError naming `what` after timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def scroll_to(locator, timeout_s: float = 30.0) -> None:
    """Scroll the element into view, again if a live view redrew it meanwhile (Playwright then says "not
    attached to the DOM"): the locator finds the new one. Any other error, or none attached in time, is raised."""
    end = time.monotonic() + timeout_s
    while True:
        try:
            locator.scroll_into_view_if_needed(timeout=timeout_s * 1000)
            return
        except PlaywrightError as e:
            if "not attached" not in str(e) or time.monotonic() > end:
                raise


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the page has shown its last script run: no element is left faded from the one before
    (data-stale) and Streamlit's running indicator is gone. A click made before that can land on a widget of
    the run that is going away, and Streamlit drops it (a Start lost so in CI). Then until no finite animation
    runs: an expander opens over 500 ms, moving what it holds, and a click on a button still moving can miss it
    without an error (a Start in a "Next run" just opened, 1 in 12 here)."""
    expect(page.locator('[data-testid="stElementContainer"][data-stale="true"]')).to_have_count(0, timeout=timeout_ms)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_ms)
    page.wait_for_function(_NO_FINITE_ANIMATION, timeout=timeout_ms)


# Spinners loop for ever; an expander's opening or a transition ends
_NO_FINITE_ANIMATION = """() => document.getAnimations().every(
    a => a.playState !== "running" || a.effect === null || a.effect.getComputedTiming().iterations === Infinity)"""


def _click_until(page, done, click, confirm) -> None:
    """Once the page has settled, click() unless done(); confirm(timeout_ms) checks that the click took. A rerun
    can lose a click (one made while the page still ran its script lands on a widget that is going away): then
    click again, three times at most, and confirm once more with Playwright's own time-out."""
    for _ in range(3):
        settle(page)
        if done():
            return
        click()
        try:
            confirm(10_000)
            return
        except AssertionError:
            continue
    confirm(None)


def open_expander(page, label) -> None:
    """Open the expander whose header shows `label` (a string or a pattern); never clicks one already open. Then
    settles, so its opening (500 ms) no longer moves what it holds."""
    details = page.locator("details").filter(has=page.locator("summary").filter(has_text=label)).first
    _click_until(page, lambda: details.get_attribute("open") is not None, details.locator("summary").first.click,
                 lambda ms: expect(details).to_have_attribute("open", re.compile(".*"), timeout=ms))
    settle(page)


def switch_on(page, label: str) -> None:
    """Turn the toggle `label` on; never clicks a toggle that is already on."""
    toggle = page.get_by_role("switch", name=label, exact=True)
    _click_until(page, toggle.is_checked,
                 page.locator("label").filter(has=toggle).click,  # the toggle's own label: the text may be elsewhere too
                 lambda ms: expect(toggle).to_be_checked(timeout=ms))


def nav(page, title: str) -> None:
    """Open a page from the sidebar as a person does: click its link, then wait until that page is shown and
    settled (Configure has a Start training button too: a click made at once hit it while Train loaded)."""
    page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=title).first.click()
    expect(page.get_by_role("heading", level=1, name=re.compile(re.escape(title)))).to_be_visible(timeout=60_000)
    settle(page)


def steady(read, quiet_s: float, timeout=60.0, what="a steady value"):
    """read()'s value once it has stayed the same for quiet_s (a paused run's last step report is in)."""
    end = time.monotonic() + timeout
    value, since = read(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        again = read()
        if again != value:
            value, since = again, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return value
    raise AssertionError(f"timed out waiting for {what}")


def let_pass(seconds: float, why: str) -> None:
    """A stretch of time the test needs to pass, named: there is nothing to wait for. Either something must
    not happen within it (a paused run takes no step; the assertion after it checks), or a rate or a clock
    is measured over it. A wait for something that happens is wait_for's."""
    assert why, "say what must (not) happen in this time"
    time.sleep(seconds)


@contextmanager
def small_filesystem(folder: Path, size: str = "4m"):
    """A real filesystem of `size` (a tmpfs) mounted on folder: a write beyond it fails with the kernel's own
    ENOSPC. Mounting needs root (CI runs as root). Without that permission the test is skipped, saying why;
    with $STUDIO_REQUIRE_REAL_FAULTS set (as .ci/run sets it) it fails instead: never a fake fault in its place."""
    import pytest  # deferred: only tests that mount need it
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        why = f"a real full disk needs permission to mount a {size} tmpfs (root): {mounted.stderr.strip()}"
        if os.environ.get("STUDIO_REQUIRE_REAL_FAULTS"):
            raise AssertionError(why)
        pytest.skip(why)
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
