"""The project's own trainer (core.training.loop.train, as the worker runs it) on one configuration, timed the same
way as bench/reference.py: the wall time between consecutive step events, sync every step.

    python bench/project_case.py --network lenet5 --style cell --mode graph --batch 64 [--steps N] [--data DIR]
"""
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.case_args import case_parser  # noqa: E402

from core.runtime import prepare_process  # noqa: E402


class StopAfter:
    def __init__(self, steps):
        self.steps, self.seen = steps, 0

    def paused(self):
        return False

    def stop_requested(self):
        return bool(self.steps) and self.seen >= self.steps


def main() -> None:
    ap = case_parser()
    ap.add_argument("--val-fraction", type=float, default=0.0)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    t_start = time.perf_counter()
    prepare_process(args.network)
    from core.config import TrainConfig
    from core.data.folders import validate_mnist_dir
    from core.training.events import Callback
    from core.training.loop import train

    config = TrainConfig(network=args.network, style=args.style, mode=args.mode, batch_size=args.batch,
                         epochs=args.epochs, val_fraction=args.val_fraction, data_dir=args.data)
    control, marks, state = StopAfter(args.steps), [], {}

    class Marks(Callback):
        def on_step(self, e):
            marks.append(time.perf_counter())
            control.seen = e.step
            if e.step == 1:
                state["cpu0"] = time.process_time()

    t_loop = time.perf_counter()
    train(config, validate_mnist_dir(args.data), [Marks()], control)
    cpu = time.process_time() - state["cpu0"]
    print(json.dumps({"impl": "project", "marks": [m - t_loop for m in marks], "loop_start": t_loop - t_start,
                      "cpu_s_after_first": cpu, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "total_s": time.perf_counter() - t_start, "env_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}))


if __name__ == "__main__":
    main()
