"""The run queue: order and fairness, slots, cancel and move to front, one dispatcher per store (two at once,
a SIGKILLed one taken over, ten processes submitting at once), and the command line waiting its turn."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.runs.launch.dispatcher import LEASE_S, Dispatcher
from core.runs.run_queue import RunQueue, dispatch_order
from core.runs.rows import Run
from tests.support.helpers import cli, wait_for

BOTH_DATABASES = True  # every test here runs on SQLite and on a real PostgreSQL (tests/conftest.py)

CONFIG = TrainConfig(network="mlp", epochs=1)


def queued(run_id: str, who: str, order: float) -> Run:
    return Run(id=run_id, name=run_id, source="test", config=CONFIG, status="queued", message="", request="run",
               created=order, started=None, finished=None, heartbeat=None, pid=None, phase="", step=0, total_steps=0,
               epoch=0, samples_per_s=None, eta=None, best_val_acc=None, best_val_loss=None, best_epoch=None,
               checkpoint=None, submitter=who, queue_order=order)


def test_one_persons_sweep_does_not_hold_another_persons_run_behind_all_of_it():
    sweep = [queued(f"a{i}", "alice", i) for i in range(20)]
    order = [r.id for r in dispatch_order(sweep + [queued("b0", "bob", 100)], {})]
    assert order[:4] == ["a0", "b0", "a1", "a2"] and order[-1] == "a19"
    # whoever was served last waits: bob started a run a moment ago, so alice goes first
    assert [r.id for r in dispatch_order([queued("b1", "bob", 1), queued("a0", "alice", 2)], {"bob": 50.0})][0] == "a0"
    front = queued("a7", "alice", -1)  # moved to the front
    assert dispatch_order(sweep[:3] + [front, queued("b0", "bob", 100)], {})[0].id == "a7"


def test_runs_wait_for_a_slot_and_can_be_cancelled_or_moved_to_the_front(store):
    queue = RunQueue(store, slots=1)
    first, second, third = (queue.submit(CONFIG, n, "test", submitter="ann") for n in ("first", "second", "third"))
    assert [w.run.id for w in queue.waiting()] == [first, second, third]
    assert [w.position for w in queue.waiting()] == [1, 2, 3]
    assert queue.claim_next().id == first and store.get(first).status == "starting"
    assert queue.claim_next() is None, "one slot: the second waits"
    assert queue.move_to_front(third) and [w.run.id for w in queue.waiting()] == [third, second]
    assert queue.cancel(second) and store.get(second).status == "cancelled"
    assert not queue.cancel(first), "a run that started is stopped, not cancelled"
    estimate = queue.waiting()[0].starts_in_s
    assert estimate is not None and estimate >= 0
    store.finish(first, "completed")
    assert queue.claim_next().id == third


def test_a_host_without_slots_lists_its_queue_without_an_estimate(store):
    """STUDIO_SLOTS=0 (a Dask cluster trains every run): the queue is listed, nothing is claimed here."""
    queue = RunQueue(store, slots=0)
    run_id = queue.submit(CONFIG, "for the cluster", "test", submitter="ann")
    assert [(w.run.id, w.position, w.starts_in_s) for w in queue.waiting()] == [(run_id, 1, None)]
    assert queue.claim_next() is None


def test_a_data_parallel_run_takes_a_slot_per_worker(store):
    two = RunQueue(store, slots=2)
    single = two.submit(CONFIG, "single", "test", submitter="x")
    pair = two.submit(CONFIG.with_(workers=2), "pair", "test", submitter="y")
    after = two.submit(CONFIG, "after", "test", submitter="z")
    assert two.claim_next().id == single
    assert two.claim_next() is None, "the pair needs both slots, and nothing overtakes it"
    store.finish(single, "completed")
    assert two.claim_next().id == pair and two.claim_next() is None
    store.finish(pair, "completed")
    assert two.claim_next().id == after
    big = two.submit(CONFIG.with_(workers=4), "big", "test", submitter="x")
    assert store.get(big).slots == 2, "more workers than slots: it takes the whole host"
    assert two.claim_next() is None
    store.finish(after, "completed")
    assert two.claim_next().id == big


def test_only_one_of_two_dispatchers_acts_and_a_stopped_ones_lease_passes(store):
    started = []
    spawn = lambda s, run_id: started.append(run_id)  # noqa: E731
    a, b = Dispatcher(store, spawn, RunQueue(store, 1)), Dispatcher(store, spawn, RunQueue(store, 1))
    assert a.holds_lease() and not b.holds_lease() and a.holds_lease()
    run_id = RunQueue(store, 1).submit(CONFIG, "r", "test", submitter="x")
    assert b.tick() == [] and [r.id for r in a.tick()] == [run_id] and started == [run_id]
    a.release()
    assert b.holds_lease()


def actor(*args) -> subprocess.Popen:
    """A queue actor (tests/support/queue_actor.py); a dispatcher dispatches until its stdin is closed."""
    return subprocess.Popen([sys.executable, "-m", "tests.support.queue_actor", *map(str, args)], cwd=PROJECT_ROOT,
                            env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_ten_submitters_and_two_dispatcher_processes_start_every_run_once_in_order(store, tmp_path):
    log = tmp_path / "starts.log"
    dispatchers = [actor("dispatch", store.root, log, 300) for _ in range(2)]
    for d in dispatchers:
        assert d.stdout.readline().strip() == "dispatching"
    submitters = [actor("submit", store.root, f"user{i}", 3) for i in range(10)]
    assert all(p.wait(timeout=60) == 0 for p in submitters)
    wait_for(lambda: all(r.status == "completed" for r in store.list_runs()), timeout=120, what="all 30 runs")
    for d in dispatchers:
        d.stdin.close()  # done: each dispatcher ends
        d.wait(timeout=60)
    starts = [line.split() for line in log.read_text().splitlines()]
    runs = store.list_runs()
    assert len(runs) == 30 and sorted(s[0] for s in starts) == sorted(r.id for r in runs), "every run once"
    by_id = {r.id: r for r in runs}
    for i in range(10):  # each person's runs started in the order they were queued
        mine = [s[0] for s in starts if by_id[s[0]].submitter == f"user{i}"]
        assert [by_id[r].name for r in mine] == [f"user{i}-{k}" for k in range(3)]


def lease_owner(store) -> str:
    holder = store.lease_holder()
    return holder[0] if holder else ""


def test_a_sigkilled_dispatcher_is_taken_over_within_its_lease(store, tmp_path):
    log = tmp_path / "starts.log"
    first = actor("dispatch", store.root, log, 60)
    assert first.stdout.readline().strip() == "dispatching"
    wait_for(lambda: f":{first.pid}:" in lease_owner(store), timeout=5, what="its lease")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    run_id = RunQueue(store).submit(CONFIG, "after the kill", "test", submitter="x")
    killed = time.monotonic()
    second = actor("dispatch", store.root, log, LEASE_S + 5)
    try:
        wait_for(lambda: store.get(run_id).status == "completed", timeout=LEASE_S + 10, what="the take-over")
        assert time.monotonic() - killed < LEASE_S + 3 and f":{second.pid}:" in lease_owner(store)
    finally:
        second.kill()
    assert [line.split()[0] for line in log.read_text().splitlines()] == [run_id]


OPEN_STORES = """
import sys, time
from core.runs.store import RunStore
start = float(sys.argv[1])
time.sleep(max(0.0, start - time.time()))
for root in sys.argv[2:]:
    RunStore(root)
"""


def test_processes_opening_one_new_store_at_once_all_open_it(tmp_path):
    """Two command lines started together create the store together: each used to see the newer columns missing
    and the second ALTER TABLE failed ("duplicate column name"), and switching to WAL answered "locked" at once."""
    roots = [str(tmp_path / f"store{i}") for i in range(25)]
    start = time.time() + 1.0  # every process imported and waiting, then all at once
    procs = [subprocess.Popen([sys.executable, "-c", OPEN_STORES, str(start), *roots], cwd=PROJECT_ROOT,
                              env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    from core.runs.store import RunStore
    assert all(RunStore(root).list_runs() == [] for root in roots)


def test_two_command_lines_at_once_both_train_one_after_the_other(tmp_path, small_mnist):
    store_dir = tmp_path / "store"
    # 3 epochs: long enough that the second is queued before the first ends even on a loaded machine (with 1
    # the first could finish before the second was submitted, and nobody waited)
    args = ["core.cli.train", "--network", "mlp", "--hidden", "32", "--epochs", "3", "--data-dir", str(small_mnist),
            "--store", str(store_dir)]
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    procs = [subprocess.Popen([sys.executable, "-m", *args, "--name", f"cli-{i}"], cwd=PROJECT_ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert any("queued: position 1 of 1" in err for _, err in outs), "one of them waited its turn and said so"
    from core.runs.store import RunStore
    runs = RunStore(store_dir).list_runs()
    assert sorted(r.status for r in runs) == ["completed", "completed"]
    first, second = sorted(runs, key=lambda r: r.started)
    assert second.started >= first.finished - 0.5, "one slot: the second started when the first had finished"


def test_no_wait_queues_and_returns_and_a_dispatcher_trains_it_in_a_worker(tmp_path, small_mnist):
    from core.runs.launch import launcher
    from core.runs.store import RunStore
    p = cli("core.cli.train", "--network", "mlp", "--hidden", "32", "--epochs", "1", "--data-dir", str(small_mnist),
            "--store", str(tmp_path / "store"), "--no-wait")
    assert p.returncode == 0 and "queued" in p.stdout, p.stdout + p.stderr
    store = RunStore(tmp_path / "store")
    (run,) = store.list_runs()
    assert run.status == "queued"
    launcher.dispatcher_for(store).tick()
    done = wait_for(lambda: (r := store.get(run.id)).status == "completed" and r, timeout=120, what="the worker")
    assert done.checkpoint and done.pid != os.getpid()


def test_the_estimate_counts_the_runs_ahead(store):
    queue = RunQueue(store, slots=1)
    first, second, third = (queue.submit(CONFIG.with_(epochs=e), n, "test", submitter="ann")
                            for n, e in (("a", 2), ("b", 4), ("c", 1)))
    queue.claim_next()  # "a" starts: no ETA yet, so its expected length counts
    estimates = {w.run.id: w.starts_in_s for w in queue.waiting()}
    assert estimates[second] == pytest.approx(queue.expected_seconds(CONFIG.with_(epochs=2)))
    assert estimates[third] == pytest.approx(queue.expected_seconds(CONFIG.with_(epochs=2))
                                             + queue.expected_seconds(CONFIG.with_(epochs=4)))
    store.update(first, eta=5.0, status="running")
    assert {w.run.id: w.starts_in_s for w in queue.waiting()}[second] == pytest.approx(5.0)
    # paused, "a" holds its slot for as long as its owner likes: no estimate, and the runs behind it say why
    store.update(first, status="paused")
    assert [(w.run.id, w.starts_in_s, w.held_by) for w in queue.waiting()] == [(second, None, "a"), (third, None, "a")]
    assert [(w.starts_in_s, w.held_by) for w in RunQueue(store, slots=2).waiting()] == [
        (0.0, None), (pytest.approx(queue.expected_seconds(CONFIG.with_(epochs=4))), None)], "another slot is free"
    store.update(first, status="running")
    assert [w.held_by for w in queue.waiting()] == [None, None]


def test_a_runs_expected_length_comes_from_the_real_durations_of_completed_runs_like_it(store):
    queue = RunQueue(store, slots=1)
    before = queue.expected_seconds(CONFIG.with_(epochs=3))  # nothing completed yet: a typical speed
    assert before > 0
    for epochs, seconds in ((2, 10.0), (4, 22.0), (1, 7.0)):  # 5, 5.5 and 7 s per epoch, start to end
        run_id = store.create_run(CONFIG.with_(epochs=epochs), exclusive=False)
        store.update(run_id, status="completed", epoch=epochs, started=1000.0, finished=1000.0 + seconds)
    other = store.create_run(CONFIG.with_(network="lenet5", epochs=1), exclusive=False)  # another network: not it
    store.update(other, status="completed", epoch=1, started=1000.0, finished=1900.0)
    assert queue.expected_seconds(CONFIG.with_(epochs=3)) == pytest.approx(5.5 * 3)  # the median per epoch


def test_move_to_front_by_a_non_admin_reorders_only_their_own_runs(store):
    """The queue's promise (docs/deploy.md) holds against Move to front: Ann moving her runs forward never pushes Bob's single run
    back; an admin's Move to front puts a run before everything."""
    from core.runs.people.actions import Actions
    from core.runs.people.permissions import person
    queue = RunQueue(store, slots=1)
    mine = [queue.submit(CONFIG, f"ann-{i}", "test", submitter="ann") for i in range(30)]
    bobs = queue.submit(CONFIG, "bob-0", "test", submitter="bob")
    position = {w.run.id: w.position for w in queue.waiting()}
    assert position[bobs] == 2
    ann = Actions(store, person("ann", proven=False))
    for run_id in mine[-10:]:
        assert ann.move_to_front(store.get(run_id))
    order = [w.run.id for w in queue.waiting()]
    assert order.index(bobs) == 1, "Bob's run is still second"
    assert order[0] == mine[-1], "Ann's last-moved run is her first"
    admin = Actions(store, person("root", single_user=True))
    assert admin.move_to_front(store.get(mine[5]))
    assert [w.run.id for w in queue.waiting()][:3] == [mine[5], mine[-1], bobs]


def test_one_persons_many_runs_never_make_another_wait_and_are_capped(store, monkeypatch):
    """The dispatcher never waits on a submitter: with 200 runs of Ann's queued (and a 10⁶-setting sweep refused
    at once), Bob's run starts within 2 s of a slot freeing; past STUDIO_MAX_QUEUED_PER_PERSON a person's next
    Start is refused with what to do, an admin's is not."""
    from core.messages import ExplainedValueError
    from core.runs import sweeps
    from core.runs.people.actions import Actions
    from core.runs.people.permissions import person
    monkeypatch.setenv("STUDIO_MAX_QUEUED_PER_PERSON", "200")
    huge = sweeps.SweepSpec(CONFIG, tuple(sweeps.parse_space(f"{n}=" + ",".join(map(str, range(1, 101))))
                                          for n in ("batch_size", "epochs", "patience")), "grid")
    with pytest.raises(ExplainedValueError):
        sweeps.create(store, huge, "ann")
    queue = RunQueue(store, slots=1)
    first = queue.submit(CONFIG, "ann-running", "test", submitter="ann")
    assert queue.claim_next().id == first
    for i in range(200):
        queue.submit(CONFIG, f"ann-{i}", "test", submitter="ann")
    with pytest.raises(ExplainedValueError) as e:
        Actions(store, person("ann", proven=False)).start(CONFIG)
    assert "You already have 200 runs waiting" in str(e.value) and "STUDIO_MAX_QUEUED_PER_PERSON" in str(e.value)
    bobs = queue.submit(CONFIG, "bob-0", "test", submitter="bob")
    started = []
    dispatcher = Dispatcher(store, lambda s, run_id: started.append(run_id), queue)
    store.finish(first, "completed")
    t0 = time.monotonic()
    dispatcher.tick()
    assert started == [bobs] and time.monotonic() - t0 < 2.0, (started, time.monotonic() - t0)
    admin = Actions(store, person("root", single_user=True))
    assert store.get(admin.start(CONFIG)).status == "queued", "an admin is not capped"


def test_the_queue_panel_stays_small_with_one_persons_many_runs(store, monkeypatch):
    """200 queued runs of one person and a sweep's 20: the Train page draws a bounded number of rows and
    buttons (a row per sweep), fast."""
    from core.runs import sweeps
    from tests.support.apptest import page
    monkeypatch.setenv("STUDIO_MAX_QUEUED_PER_PERSON", "500")
    queue = RunQueue(store, slots=1)
    for i in range(200):
        queue.submit(CONFIG, f"ann-{i}", "test", submitter="")
    spec = sweeps.SweepSpec(CONFIG.with_(val_fraction=0.1), (sweeps.parse_space(
        "learning_rate=" + ",".join(f"0.0{i}1" for i in range(30))),), "grid")
    sweeps.create(store, spec, submitter="")
    t0 = time.monotonic()
    at = page("train")
    took = time.monotonic() - t0
    assert not at.exception, [e.value for e in at.exception]
    buttons = [b for b in at.button if b.key and ("_front_" in b.key or "_cancel_" in b.key)]
    assert len(buttons) <= 2 * 24, len(buttons)
    assert any("sweep " in m.value and "20 runs waiting" in m.value for m in at.markdown)
    print(f"Train page with 220 queued runs: {took:.1f} s, {len(buttons)} queue buttons")
