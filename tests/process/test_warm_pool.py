"""Warm workers: the app server keeps one process per network with MindSpore loaded; Start hands the run to the
one of its network (its first step then comes without a process start), its output goes to the run's log; after
a completed run the same worker waits for the next, after a stopped one a new warm worker takes its place, and
waiting workers exit when the server lets them go. A process that dispatches without a server (a sweep's command
line) keeps the workers it started the same way, and a run trained by a reused worker trains exactly what a run
in a new process trains."""
from __future__ import annotations


from core.cli.warm_worker import COMPILED_AHEAD, READY
from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.launch.warm_pool import log_path
from core.runs.processes import pid_alive
from tests.support.helpers import wait_for

TAKEN = "this run trains the model compiled before it"  # core.training.prepared.TAKEN (which loads MindSpore)


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
        # Configure shows these settings (its Start button tells the pool): the mlp worker compiles them ahead.
        config = TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist))
        launcher.want_warm_worker(store, config)
        wait_for(lambda: f"{COMPILED_AHEAD} MLP 784-32-10, batch 64" in log_path(store, "mlp").read_text(errors="replace"),
                 120, "the mlp worker to compile the settings the page shows")
        run_id = launcher.start(store, config)
        wait_for(lambda: store.get(run_id).status == "completed", 120, "the run on the warm worker")
        run = store.get(run_id)
        assert run.pid == warm["mlp"], "trained by the warm mlp worker"
        assert TAKEN in store.log_path(run_id).read_text(), "the run trained the model compiled for its settings"
        assert any("handed to a warm worker" in line.message for line in store.logs(run_id))
        assert f"run {run_id}: completed" in store.log_path(run_id).read_text(), "its output is in the run's log"
        wait_for(lambda: pool.ready.get("mlp") is not None and pool.ready["mlp"].pid == warm["mlp"], 30,
                 "the same warm mlp worker waiting again, once its run has completed")
        assert "mlp again (runs trained: 1;" in log_path(store, "mlp").read_text(errors="replace")

        long = launcher.start(store, TrainConfig(network="mlp", hidden=(32,), epochs=500, data_dir=str(small_mnist)))
        wait_for(lambda: store.get(long).status == "running" and store.get(long).step > 0, 120, "the second run")
        assert store.get(long).pid == warm["mlp"], "handed to the worker that trained the first"
        launcher.stop(store, long)
        wait_for(lambda: store.get(long).status == "stopped", 60, "the stop")
        wait_for(lambda: not pid_alive(warm["mlp"]), 30, "the worker of a stopped run to end")
        wait_for(lambda: pool.ready.get("mlp") is not None and pool.ready["mlp"].pid != warm["mlp"]
                 and pool.ready["mlp"].poll() is None, 30, "a new warm mlp worker, once a stopped run has ended")
        assert pool.ready["lenet5"].pid == warm["lenet5"], "the other network's worker still waits"
        waiting = [p for p in pool.ready.values()]
    finally:
        launcher.shutdown(store)
    for proc in waiting:
        proc.wait(30)  # the end of stdin: they exit
        assert proc.returncode == 0


def test_without_a_server_the_worker_of_a_completed_run_trains_the_next_exactly_as_a_new_process(store, small_mnist,
                                                                                                  monkeypatch):
    """The sweep's command line and any other dispatching process: runs of one network, one after another, go to
    the worker that trained the one before; the weights and losses are those of a run in a new process."""
    import subprocess
    import sys

    from core import PROJECT_ROOT
    monkeypatch.setenv("STUDIO_WARM_WORKERS", "0")
    config = TrainConfig(network="mlp", hidden=(32,), epochs=2, data_dir=str(small_mnist), augment=True)
    try:
        first = launcher.start(store, config)
        wait_for(lambda: store.get(first).status == "completed", 120, "the first run")
        second = launcher.start(store, config.with_(learning_rate=0.05))
        wait_for(lambda: store.get(second).status == "completed", 120, "the second run")
        assert store.get(second).pid == store.get(first).pid, "the second run went to the first run's worker"
        assert any("handed to a warm worker" in line.message for line in store.logs(second))
    finally:
        launcher.shutdown(store)
    fresh = store.create_run(config.with_(learning_rate=0.05), source="cli")
    subprocess.run([sys.executable, "-m", "core.cli.worker", fresh, *store.command_args()], cwd=PROJECT_ROOT,
                   check=True, capture_output=True, timeout=300)
    assert store.get(fresh).status == "completed"
    reused, new = ([(e.train_loss, e.train_acc, e.val_loss, e.val_acc) for e in store.epochs(r)] for r in (second, fresh))
    assert len(reused) == 2 and reused == new, "the reused worker trained what a new process trains"
    assert store.get(second).best_val_acc == store.get(fresh).best_val_acc


def test_a_dispatcher_with_reuse_off_starts_a_new_process_per_run(store, small_mnist, monkeypatch):
    monkeypatch.setenv("STUDIO_WARM_WORKERS", "0")
    monkeypatch.setenv("STUDIO_REUSE_WORKERS", "0")
    config = TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist))
    try:
        runs = []
        for _ in range(2):
            runs.append(launcher.start(store, config))
            wait_for(lambda: store.get(runs[-1]).status == "completed", 120, "the run")
        assert store.get(runs[0]).pid != store.get(runs[1]).pid
    finally:
        launcher.shutdown(store)


def test_a_servers_warm_worker_with_reuse_off_trains_one_run_and_a_new_one_takes_its_place(store, small_mnist,
                                                                                          monkeypatch):
    monkeypatch.setenv("STUDIO_WARM_WORKERS", "1")
    monkeypatch.setenv("STUDIO_REUSE_WORKERS", "0")
    launcher.serve(store)
    try:
        pool = launcher._pools[store.key]
        warm = pool.ready["mlp"].pid
        run_id = launcher.start(store, TrainConfig(network="mlp", hidden=(32,), epochs=1, data_dir=str(small_mnist)))
        wait_for(lambda: store.get(run_id).status == "completed", 120, "the run on the warm worker")
        assert store.get(run_id).pid == warm
        wait_for(lambda: not pid_alive(warm), 30, "the worker to end after its one run")
        wait_for(lambda: pool.ready.get("mlp") is not None and pool.ready["mlp"].pid != warm, 30,
                 "a new warm mlp worker in its place")
    finally:
        launcher.shutdown(store)
