"""Drawing on the Draw page's canvas in a real browser (Playwright): a stroke with the mouse, and the ink on it."""

import math
import time

SEVEN = [(70, 60), (210, 60), (165, 130), (130, 200), (115, 240)]  # a 7: the bar, then the stem

_TOOLBAR_STYLED = ("() => [...document.querySelectorAll('*')].some(h => h.shadowRoot"
                   " && h.shadowRoot.querySelector('style[data-studio-toolbar]'))")


def settled_box(page) -> dict:
    """The canvas's box once the toolbar's style is in (it moves the canvas down) and the box holds still."""
    canvas = page.locator("canvas.upper-canvas").first  # streamlit-drawable-canvas 0.13 renders in the page
    page.wait_for_function(_TOOLBAR_STYLED, timeout=30_000)
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    for _ in range(50):
        time.sleep(0.1)
        again = canvas.bounding_box()
        if again == box:
            return box
        box = again
    raise AssertionError(f"the canvas kept moving: last at {box}")


def stroke(page, points, box: dict | None = None, every_px: float | None = None) -> None:
    """Draw through points given in the canvas's own 280x280 pixels (a single point: a dot). box: the canvas's
    settled box, when the caller has it; every_px: one mouse event per that many pixels of the way (a hand at a
    steady speed), else 12 between each two points."""
    box = box or settled_box(page)
    x0, y0, s = box["x"], box["y"], box["width"] / 280
    page.mouse.move(x0 + points[0][0] * s, y0 + points[0][1] * s)
    page.mouse.down()
    last = points[0]
    for x, y in points[1:] or points:
        steps = 12 if every_px is None else max(1, int(math.hypot(x - last[0], y - last[1]) // every_px))
        page.mouse.move(x0 + x * s, y0 + y * s, steps=steps)
        last = (x, y)
    page.mouse.up()


def ink(page) -> int:
    """Bright pixels on the canvas (what the strokes drew)."""
    return page.locator("canvas.dc-canvas.lower-canvas").first.evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;"
        " for (let i = 0; i < d.length; i += 4) if (d[i] > 128) n++; return n; }")


def touch_stroke(page, points) -> None:
    """The same stroke with a finger: touch events through Chromium's DevTools protocol (a phone context)."""
    box = settled_box(page)
    x0, y0, s = box["x"], box["y"], box["width"] / 280
    cdp = page.context.new_cdp_session(page)
    at = lambda x, y: [{"x": x0 + x * s, "y": y0 + y * s}]  # noqa: E731
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": at(*points[0])})
    for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
        for i in range(1, 13):
            f = i / 12
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": at(xa + (xb - xa) * f,
                                                                                          ya + (yb - ya) * f)})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()
