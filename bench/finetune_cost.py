"""What fine-tuning on a person's handwriting costs and gains: a model trained with the best-5k preset on the
bundled 5,000 images (the official test set beside them), fine-tuned (core/runs/people/finetune.py, as the Draw
page's button does) on 20 drawings of one "person", then scored before and after on those 20, on 200 held-out
drawings of the same person and on the official 10,000 test images. Records bench/results/finetune_cost.json.

    .venv/bin/python -m bench.finetune_cost [--data-dir ../shared/data/mnist] [--seed 0]

The person is synthetic, and says so: each digit drawn as the same pen strokes (one hand's habits, see
STROKES; leaning 20°), jittered per drawing (lean, size, position, a wobble of every point, pen width),
rendered on a 280×280 canvas and read by the Draw page's own to_mnist. No human handwriting is stored in the project; a person's own drawings are what the Draw page keeps."""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.runtime import prepare_process  # noqa: E402

SLANT, PEN = 20, (10, 17)  # degrees of lean (±8 per drawing) and pen width range, in canvas pixels
# Strokes per digit on a 280×280 canvas (x, y): this person's way of writing each one — a European 1 (a long
# flag, no foot), a slashed 0, a closed 4, a 2 with a loop, a crossed 7, a 9 with a curled tail.
STROKES = {
    0: [[(140, 45), (100, 70), (90, 140), (100, 210), (140, 235), (180, 210), (190, 140), (180, 70), (140, 45)],
        [(185, 55), (95, 225)]],
    1: [[(80, 120), (160, 45), (150, 240)]],
    2: [[(80, 90), (120, 50), (175, 60), (180, 110), (100, 210), (90, 235), (130, 215), (150, 235), (210, 225)]],
    3: [[(85, 60), (190, 60), (135, 125), (185, 150), (195, 195), (160, 232), (110, 235), (80, 210)]],
    4: [[(160, 45), (75, 165), (200, 165), (160, 45)], [(160, 165), (160, 245)]],
    5: [[(195, 50), (105, 50), (95, 125), (150, 115), (195, 150), (190, 205), (145, 235), (90, 220)]],
    6: [[(185, 45), (130, 110), (110, 200), (130, 235), (160, 215), (150, 185), (115, 200)]],
    7: [[(80, 55), (200, 55), (120, 240)], [(110, 145), (190, 145)]],
    8: [[(140, 135), (95, 100), (110, 55), (170, 55), (185, 100), (140, 135), (90, 180), (110, 232), (170, 232),
         (190, 180), (140, 135)]],
    9: [[(185, 90), (150, 50), (105, 70), (110, 125), (180, 105), (185, 90), (175, 190), (140, 240), (95, 215)]],
}


def draw(digit: int, rng: np.random.Generator) -> np.ndarray:
    """One drawing of digit by the person, as the network sees it (28×28)."""
    from core.data.drawing import to_mnist
    return to_mnist(canvas(digit, rng))


def canvas(digit: int, rng: np.random.Generator) -> np.ndarray:
    """One drawing of digit by the person: RGBA, 280×280, as the Draw page's canvas gives it."""
    angle = np.radians(rng.uniform(SLANT - 8, SLANT + 8))
    scale = rng.uniform(0.8, 1.1)
    shift = rng.uniform(-20, 20, 2)
    c, s = np.cos(angle), np.sin(angle)
    image = Image.new("RGBA", (280, 280), (0, 0, 0, 255))
    pen = ImageDraw.Draw(image)
    width = int(rng.integers(*PEN))
    for stroke in STROKES[digit]:
        p = np.array(stroke, np.float64) - 140
        p = p @ np.array([[c, -s], [s, c]]).T * scale + 140 + shift + rng.normal(0, 5, p.shape)
        points = [tuple(q) for q in p]
        pen.line(points, fill=(255, 255, 255, 255), width=width, joint="curve")
        for q in points:  # round pen ends
            pen.ellipse([q[0] - width / 2, q[1] - width / 2, q[0] + width / 2, q[1] + width / 2], fill=(255, 255, 255, 255))
    return np.asarray(image)


def person(n_per_digit: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.repeat(np.arange(10), n_per_digit)
    return np.stack([draw(int(d), rng) for d in labels]), labels.astype(np.uint8)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    prepare_process("lenet5")
    from core.app import model_service
    from core.presets import PRESETS
    from core.runs.people import finetune
    from core.runs.worker.execute import execute
    from core.runs.people.handwriting import HandwritingSet
    from core.runs.store import RunStore

    rng = np.random.default_rng(args.seed)
    taught, taught_labels = person(2, rng)     # 20 drawings: corrected into "my handwriting"
    held, held_labels = person(20, rng)        # 200 more of the same hand, never trained on
    store = RunStore(Path(tempfile.mkdtemp(prefix="finetune-cost-")))
    base_id = store.create_run(PRESETS["best-5k"].with_(data_dir=args.data_dir), name="best-5k", source="cli")
    t0 = time.perf_counter()
    assert execute(store, base_id) == "completed"
    base_s = time.perf_counter() - t0
    base = store.get(base_id)
    mine = HandwritingSet(store)
    for image, label in zip(taught, taught_labels, strict=False):
        mine.add(image, int(label), run_id=base_id)
    made = finetune.plan(store, base, mine.drawings())
    tuned_id = store.create_run(made.config, name="fine-tune", source=finetune.SOURCE)
    t0 = time.perf_counter()
    assert execute(store, tuned_id) == "completed"
    tune_s = time.perf_counter() - t0
    split, test_images, test_labels = finetune.evaluation_split(base.config)
    scores = finetune.scores(model_service.predict, base.checkpoint, store.get(tuned_id).checkpoint,
                             {"20 drawings trained on": (taught, taught_labels),
                              "200 held-out drawings, same person": (held, held_labels),
                              f"official {split} set": (test_images, test_labels)})
    rows = [{"images": s.group, "n": s.n, "before": s.before, "after": s.after,
             "change_points": round((s.after - s.before) * 100, 2)} for s in scores]
    for r in rows:
        print(f"{r['images']:36s} n={r['n']:>5}  before {r['before']:.2%}  after {r['after']:.2%}  "
              f"({r['change_points']:+.2f} points)")
    print(f"base training {base_s:.0f} s wall; fine-tune {tune_s:.0f} s wall ({made.copies} copies of each drawing, "
          f"{made.config.epochs} epochs, learning rate {made.config.learning_rate:g} cosine)")
    save("finetune_cost", {"command": " ".join(["python -m bench.finetune_cost",
                                                 *(argv if argv is not None else sys.argv[1:])]), **stamp(), "seed": args.seed, "copies": made.copies, "fine_tune_epochs": made.config.epochs,
                            "fine_tune_lr": made.config.learning_rate, "base_wall_s": round(base_s, 1),
                            "fine_tune_wall_s": round(tune_s, 1), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
