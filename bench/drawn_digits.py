"""Digits drawn the way people draw, through the Draw page's real canvas in Chromium: official test digits traced
into pen strokes (core/data/strokes.py) and drawn with the mouse at different sizes, places and pen widths; the
canvas's own pixels are kept, so a model is then scored on them offline exactly as the page reads a drawing
(core/data/drawing.py, then the model). A benchmark that prints figures, not a test.

    .venv/bin/python -m bench.drawn_digits draw CKPT [--digits 100]  # ~15 min: writes bench/data/drawn_digits.npz
    .venv/bin/python -m bench.drawn_digits score [LABEL=]CKPT ...  # accuracy on them and on the test set
    .venv/bin/python -m bench.drawn_digits draw CKPT --first 100 --out /tmp/heldout.npz   # digits 100-199, to
    .venv/bin/python -m bench.drawn_digits score --drawings /tmp/heldout.npz CKPT ...     # choose settings on

`draw` also keeps the page's own prediction of every 10th digit's small drawing, and `score` checks that its
offline reading of those drawings is the same digit (for the model they were drawn with). Results: bench/results/drawn_digits.json (date, versions).
"""
from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import io
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.data.idx import read_images, read_labels  # noqa: E402
from core.data.strokes import laid_out, pen_ink, strokes  # noqa: E402

DRAWN = ROOT / "bench" / "data" / "drawn_digits.npz"
TEST_DIR = ROOT.parent / "shared" / "data" / "mnist" / "test"
CANVAS = 280
WIDTHS = (8, 22, 40)  # the Draw page's thinnest, default and widest pen
SIZES = ((80, 150), (160, 260))  # a small digit and a large one: its height on the 280 px canvas
SAME_DRAWING = 0.65  # the canvas's ink against the strokes' own (pen_ink): 0.77-0.98 when every stroke arrived
ATTEMPTS = 3  # a drawing whose stroke the canvas lost (0.45-0.5) is cleared and drawn again
READ_EVERY = 10  # the page's own reading of every 10th digit's small drawing is kept


def test_digits(count: int, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    images = read_images(TEST_DIR / "t10k-images-idx3-ubyte")[first:first + count]
    labels = read_labels(TEST_DIR / "t10k-labels-idx1-ubyte")[first:first + count]
    return images, labels


def on_canvas(image: np.ndarray, rng: np.random.Generator, size_range: tuple[int, int]) -> list[list[tuple]]:
    """The digit's strokes in canvas pixels: scaled so that its ink is size_range tall (less if it would not fit
    across), somewhere on the canvas."""
    height = rng.uniform(*size_range)
    return laid_out(strokes(image), height, 24, (rng.uniform(), rng.uniform()), CANVAS)  # 24 px from every edge


def overlap(canvas: np.ndarray, meant: np.ndarray) -> float:
    """Intersection over union of the ink (over half bright) on the canvas and in the drawing meant."""
    a, b = canvas > 127, meant > 127
    return float((a & b).sum() / max((a | b).sum(), 1))


def canvas_pixels(page) -> np.ndarray:
    from PIL import Image
    url = page.locator("canvas.dc-canvas.lower-canvas").first.evaluate("c => c.toDataURL('image/png')")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("L")
    return np.asarray(image.resize((CANVAS, CANVAS)), dtype=np.uint8)


def draw(args) -> int:
    from playwright.sync_api import expect, sync_playwright

    from core.app import model_service
    from core.runs.store import RunStore
    from tests.support.canvas import ink, settled_box
    from tests.support.helpers import wait_for
    from tests.support.server import AS_DEPLOYED, CHROMIUM, CHROMIUM_ARGS, start_server

    images, labels = test_digits(args.digits, args.first)
    rng = np.random.default_rng(args.seed)
    root = Path(tempfile.mkdtemp(prefix="drawn-"))
    store = RunStore(root)
    store.rename(model_service.import_checkpoint(store, Path(args.checkpoint).read_bytes(), "model.ckpt"), "drawn")
    server = start_server(root, extra_env=AS_DEPLOYED)
    kept, meta, page_reads, redrawn = [], [], [], 0
    started = time.perf_counter()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, device_scale_factor=1)
            page.goto(f"{server.url}/draw")
            expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=60_000)
            box = page.get_by_role("combobox", name="Model")
            box.click()
            page.get_by_role("option", name="drawn").first.click()
            expect(box).to_have_value(re.compile("drawn"), timeout=30_000)
            slider = page.get_by_role("slider", name="Stroke width")
            for width in WIDTHS:
                slider.focus()
                page.keyboard.press("Home")
                for _ in range(width - 8):
                    page.keyboard.press("ArrowRight")
                expect(slider).to_have_value(str(width), timeout=30_000)
                wait_for(lambda: page.get_by_test_id("stStatusWidget").count() == 0, 30, "the page to settle")
                box = settled_box(page)
                for i, (image, label) in enumerate(zip(images, labels, strict=True)):
                    for size in SIZES:
                        read = i % READ_EVERY == 0 and size == SIZES[0]
                        if read:  # the reading shown must be this drawing's: start from the empty canvas's line
                            expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=60_000)
                        pixels, tries = drawn_on_canvas(page, box, on_canvas(image, rng, size), width)
                        if pixels is None:
                            raise SystemExit(f"digit {i} (pen {width}, {size[0]} px): the canvas kept other ink "
                                             f"than the strokes drew, {ATTEMPTS} times")
                        redrawn += tries - 1
                        kept.append(pixels)
                        meta.append((args.first + i, int(label), width, size[0]))
                        if read:  # the page's own reading, to check the offline one by
                            reading = page.get_by_text("Prediction:").first
                            expect(reading).to_be_visible(timeout=60_000)
                            page_reads.append((len(kept) - 1, int(reading.inner_text().split(":")[1].split()[0])))
                        page.get_by_role("button", name="Reset canvas & history").click()
                        wait_for(lambda: ink(page) == 0, 30, "the canvas cleared by its 🗑")
                print(f"pen {width}: {len(kept)} drawings ({redrawn} drawn again), "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
            browser.close()
    finally:
        server.stop()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, canvas=np.stack(kept), meta=np.array(meta, dtype=np.int32),
                        page_reads=np.array(page_reads, dtype=np.int32), seed=args.seed,
                        page_model=sha256(Path(args.checkpoint)))
    print(f"{len(kept)} drawings of {len(images)} test digits in {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


def drawn_on_canvas(page, box: dict, lines: list[list[tuple]], width: int) -> tuple[np.ndarray | None, int]:
    """The canvas's pixels once the strokes are drawn on it with the mouse, and how many tries that took: a
    drawing whose ink is not the strokes' own (a stroke the canvas did not take) is cleared and drawn again, up to
    ATTEMPTS times (None: never right)."""
    from tests.support.canvas import ink, stroke
    from tests.support.helpers import wait_for
    for attempt in range(1, ATTEMPTS + 1):
        for line in lines:
            stroke(page, line, box=box, every_px=5)  # a hand's steady speed
        wait_for(lambda: ink(page) > 0, 30, "the drawing on the canvas")
        pixels = canvas_pixels(page)
        if overlap(pixels, pen_ink(lines, width)) >= SAME_DRAWING:
            return pixels, attempt
        page.get_by_role("button", name="Reset canvas & history").click()
        wait_for(lambda: ink(page) == 0, 30, "the canvas cleared by its 🗑")
    return None, ATTEMPTS


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score(args) -> int:
    from core.app import model_service
    from core.data.drawing import readings
    from core.model.shift_reading import averaged_probabilities

    data = np.load(args.drawings)
    canvas, meta = data["canvas"], data["meta"]
    rgba = lambda c: np.repeat(c[:, :, None], 4, axis=2)  # noqa: E731  white ink on black, opaque
    views = np.stack([readings(rgba(c)) for c in canvas])  # (N, 2, 28, 28): evened, as drawn
    all_images, all_labels = test_digits(10_000)
    drawn_digits = np.unique(meta[:, 0])
    images, labels = all_images[drawn_digits], all_labels[drawn_digits]
    rows = []
    for named in args.checkpoints:
        label, _, path = named.rpartition("=")
        probs = [model_service.predict(path, views[:, k]) for k in range(2)]
        page = (probs[0] + probs[1]).argmax(1)  # as the page reads a drawing: both readings averaged
        if sha256(Path(path)) == str(data["page_model"]):
            for index, page_digit in data["page_reads"]:
                if page[index] != page_digit:
                    raise SystemExit(f"the page read drawing {index} as {page_digit}, this score as {page[index]}: "
                                     "the page reads drawings another way than this score does")
        right = page == meta[:, 1]
        read = functools.partial(model_service.predict, path)
        shifted = averaged_probabilities(read, views[:, 0]) + averaged_probabilities(read, views[:, 1])  # the
        # page's reading with its switch "Read each view with its four 1-pixel shifts too" (model_service.read_drawing)
        row = {"label": label or Path(path).parent.name,
               "test_set": accuracy(model_service.predict(path, all_images).argmax(1), all_labels),
               "same_test_digits": accuracy(model_service.predict(path, images).argmax(1), labels),
               "test_set_shifted": accuracy(averaged_probabilities(read, all_images).argmax(1), all_labels),
               "drawn": round(float(right.mean()), 4), "drawn_shifted": accuracy(shifted.argmax(1), meta[:, 1]),
               "drawn_evened": accuracy(probs[0].argmax(1), meta[:, 1]),
               "drawn_as_drawn": accuracy(probs[1].argmax(1), meta[:, 1]), "drawings": len(meta)}
        for column, name in ((2, "pen"), (3, "size")):
            for value in sorted(set(meta[:, column])):
                row[f"drawn_{name}_{value}"] = round(float(right[meta[:, column] == value].mean()), 4)
        rows.append(row)
        print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if Path(args.drawings).resolve() != DRAWN:
        print(f"not recorded: {args.drawings} is not the recorded set ({DRAWN.relative_to(ROOT)})")
        return 0
    pens = ", ".join(str(p) for p in sorted(set(meta[:, 2].tolist())))
    heights = " and ".join(f"{lo}–{hi}" for lo, hi in SIZES)
    save("drawn_digits", {"command": "python -m bench.drawn_digits score " + " ".join(
                              shlex.quote(c) for c in args.checkpoints), **stamp(),
                          "checkpoints": args.made_with,
                          "drawings": f"{len(meta)} drawings of the first {len(drawn_digits)} official test digits (pens of "
                                      f"{pens} px; digits {heights} px tall, anywhere on the {CANVAS} px canvas)",
                          "rows": rows})
    return 0


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    return round(float((predicted == labels).mean()), 4)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("draw", help="draw test digits through the Draw page's canvas")
    d.add_argument("checkpoint", help="any trained checkpoint: the page needs a model to show its canvas")
    d.add_argument("--digits", type=int, default=100, help="N official test digits (default 100)")
    d.add_argument("--first", type=int, default=0,
                   help="from this test digit on (default 0; 100 for a held-out set to choose settings on)")
    d.add_argument("--out", default=str(DRAWN), help=f"where the drawings go (default {DRAWN.relative_to(ROOT)})")
    d.add_argument("--seed", type=int, default=0)
    s = sub.add_parser("score", help="score checkpoints on the drawings and on the same test digits")
    s.add_argument("checkpoints", nargs="+", metavar="[LABEL=]CKPT", help="a checkpoint, named in the table by LABEL")
    s.add_argument("--made-with", default="", help="how the checkpoints were trained (recorded with the figures)")
    s.add_argument("--drawings", default=str(DRAWN),
                   help="the set to score (recorded only for the default, bench/data/drawn_digits.npz)")
    args = ap.parse_args(argv)
    return draw(args) if args.what == "draw" else score(args)


if __name__ == "__main__":
    sys.exit(main())
