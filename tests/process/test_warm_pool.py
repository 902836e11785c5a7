"""Warm workers: the app server keeps one process per network with MindSpore loaded; Start hands the run to the
one of its network (its first step then comes without a process start), its output goes to the run's log, a
new warm worker takes its place, and waiting workers exit when the server lets them go."""
from __future__ import annotations


from core.cli.warm_worker import READY
from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.launch.warm_pool import log_path
from core.runs.processes import pid_alive
from tests.support.helpers import wait_for


def test_a_run_goes_to_the_warm_worker_of_its_network_and_a_new_one_takes_its_place(store, small_mnist, monkeypatch):
    monkeypatch.setenv("STUDIO_WARM_WORKERS", "1")
    launcher.serve(store)
    try:
        pool = launcher._pools[store.key]
        warm = {n: p.pid for n, p in pool.ready.items()}
        assert set(warm) == {"lenet5", "mlp"} and all(pid_alive(p) for p in warm.values())
        wait_for(lambda: all(log_path(store, n).exists() and READY in log_path(store, n).read_text(errors="replace")
                             for n in warm), 120,
                 "the warm workers to load MindSpore, as they have long done by the time someone presses Start")
        run_id = launcher.start(store, TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist)))
        wait_for(lambda: store.get(run_id).status == "completed", 120, "the run on the warm worker")
        run = store.get(run_id)
        assert run.pid == warm["mlp"], "trained by the warm mlp worker"
        assert any("handed to a warm worker" in line.message for line in store.logs(run_id))
        assert f"run {run_id}: completed" in store.log_path(run_id).read_text(), "its output is in the run's log"
        wait_for(lambda: pool.ready.get("mlp") is not None and pool.ready["mlp"].pid != warm["mlp"]
                 and pool.ready["mlp"].poll() is None, 10, "a new warm mlp worker, once the run has ended")
        assert pool.ready["lenet5"].pid == warm["lenet5"], "the other network's worker still waits"
        waiting = [p for p in pool.ready.values()]
    finally:
        launcher.shutdown(store)
    for proc in waiting:
        proc.wait(30)  # the end of stdin: they exit
        assert proc.returncode == 0
