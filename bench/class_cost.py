"""What a class round costs the app server, per drawing a phone sends, per look a phone takes at its drawings, and
per redraw of the projector's mosaic (figures for docs/teaching.md, not a test):

    .venv/bin/python -m bench.class_cost [--students 30] [--rounds 10]

In the app server's own process, on the code paths the Draw page runs (ui/class_round_view.py), without
Streamlit: a drawing sent is the canvas's 280×280 RGBA made into the 28×28 the network sees (core/data/drawing),
read by the round's model (an MLP trained one epoch on the bundled images) and kept in the store
(core/runs/people/class_round.Lesson.send); a phone's look is the round and its own drawings read from the store
and drawn as HTML; a redraw is every drawing of the lesson read and the mosaic's HTML made. Each is timed in
CPU-seconds of this process (time.process_time), --students students each sending --rounds drawings, the redraw
and the looks after each wave of drawings. Streamlit's own cost of a page or fragment run comes on top: the
websocket clients of bench/server_cost.py measured it per live update (bench/results/server_cost.json).

Records bench/results/class_cost.json (date, versions, machine)."""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.finetune_cost import canvas  # noqa: E402
from bench.record import save, stamp  # noqa: E402
from core.runtime import prepare_process  # noqa: E402


def cpu_ms(act) -> tuple[float, object]:
    t0 = time.process_time()
    out = act()
    return (time.process_time() - t0) * 1000, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=10, help="drawings each student sends")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    prepare_process("mlp")
    from core.app import model_service
    from core.config import TrainConfig
    from core.data.drawing import to_mnist
    from core.runs.people.class_round import Lesson, counts, readings
    from core.runs.people.permissions import LOCAL
    from core.runs.store import RunStore
    from core.runs.worker.execute import execute
    from core.app.mosaic import mosaic_html, strip_html

    store = RunStore(Path(tempfile.mkdtemp(prefix="class-cost-")))
    run_id = store.create_run(TrainConfig(network="mlp", epochs=1, data_dir=args.data_dir), name="model", source="cli")
    assert execute(store, run_id) == "completed"
    checkpoint = store.checkpoint_file(store.existing(run_id))
    assert checkpoint is not None
    lesson = Lesson(store)
    round_ = lesson.open(LOCAL, store.existing(run_id), asked=None)
    rng = np.random.default_rng(args.seed)
    model_service.predict(checkpoint, np.zeros((1, 28, 28), np.uint8))  # the model loaded once, as on a server

    def send(student: str, digit: int) -> None:
        image = to_mnist(canvas(digit, rng))
        read = int(model_service.predict(checkpoint, image[None])[0].argmax())
        lesson.send(round_, student, image, digit, read)

    def look(student: str) -> str:
        lesson.current()
        mine = readings(model_service.predict, None, lesson.drawings(student=student), ())
        return strip_html(mine, lambda r: f"{r.drawing.label} → {r.before}")

    def redraw() -> str:
        shown = lesson.drawings(shown_only=True)
        return mosaic_html(shown, counts(shown), lambda c: f"{c.digit}", lambda d: f"#{d.id} → {d.read_as}")

    sends, looks, redraws, sizes = [], [], [], []
    students = [f"student-{i:02d}" for i in range(args.students)]
    for wave in range(args.rounds):
        for student in students:
            sends.append(cpu_ms(lambda s=student: send(s, int(rng.integers(10))))[0])
        for student in students:
            looks.append(cpu_ms(lambda s=student: look(s))[0])
        ms, html = cpu_ms(redraw)
        redraws.append((len(lesson.drawings()), ms))
        sizes.append(len(html))
        print(f"wave {wave + 1}: {len(lesson.drawings())} drawings; send {statistics.median(sends[-args.students:]):.1f}"
              f" ms, look {statistics.median(looks[-args.students:]):.1f} ms, mosaic {ms:.1f} ms ({len(html):,} bytes)")
    send_ms, look_ms = statistics.median(sends), statistics.median(looks)
    last_n, last_redraw = redraws[-1]
    # on paper: every phone sends a drawing every 5 s and looks every 3 s (PHONE_POLL_S); the mosaic every 2 s
    per_s = {"sends": args.students / 5, "looks": args.students / 3, "redraws": 1 / 2}
    core_share = (per_s["sends"] * send_ms + per_s["looks"] * look_ms + per_s["redraws"] * last_redraw) / 1000
    print(f"median CPU per drawing sent {send_ms:.1f} ms, per phone look {look_ms:.1f} ms; the mosaic of {last_n} "
          f"drawings {last_redraw:.1f} ms ({sizes[-1]:,} bytes). {args.students} phones sending every 5 s and looking "
          f"every 3 s, the mosaic every 2 s: {core_share:.2f} of a core (the studio's code, before Streamlit's own)")
    save("class_cost", {"command": " ".join(["python -m bench.class_cost", *(argv if argv is not None else sys.argv[1:])]),
                        **stamp("streamlit", "sqlalchemy"), "students": args.students, "drawings_each": args.rounds,
                        "model": "MLP, 1 epoch on the bundled images", "cpu_ms_per_send_median": round(send_ms, 2),
                        "cpu_ms_per_send_p90": round(sorted(sends)[int(len(sends) * 0.9)], 2),
                        "cpu_ms_per_look_median": round(look_ms, 2),
                        "cpu_ms_per_mosaic": [[n, round(ms, 2)] for n, ms in redraws],
                        "mosaic_bytes": sizes, "per_second_on_paper": per_s, "cores_on_paper": round(core_share, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
