"""Teams: who may do what to a run (owner or admin; enforced in core, for the command line too), the history of
actions with refusals, display names that belong to one browser, admins only by proven identity, and the
password throttle across sessions and per address (50 parallel wrong attempts)."""
from __future__ import annotations

import threading
import time

import pytest

from core.app.throttle import Throttle
from core.config import TrainConfig
from core.runs.people.actions import Actions, history
from core.runs.people.permissions import NotAllowed, claim_name, person
from tests.support.helpers import cli, let_pass

BOTH_DATABASES = True  # every test here runs on SQLite and on a real PostgreSQL (tests/conftest.py)

CONFIG = TrainConfig(network="mlp", epochs=1)


def test_only_the_owner_or_an_admin_may_control_a_run_and_every_attempt_is_recorded(store, monkeypatch):
    monkeypatch.setenv("STUDIO_ADMINS", "teacher@school.example")
    run_id = store.create_run(CONFIG, name="teacher's run", status="running", exclusive=False,
                              submitter="owner@school.example")
    run = store.get(run_id)
    student = Actions(store, person("Student", "student@school.example"))
    for attempt in (lambda: student.pause(run), lambda: student.stop(run), lambda: student.resume(run),
                    lambda: student.ask(run, "step", 5), lambda: student.ask(run, "step_delay", 0.5),
                    lambda: student.rename(run, "mine"), lambda: student.delete(run),
                    lambda: student.ask(run, "learning_rate", 0.5), lambda: student.ask(run, "momentum", 0.5)):
        with pytest.raises(NotAllowed, match=r"Only the owner of “teacher's run” \(owner@school.example\) or an admin "
                                             r"\(teacher@school.example\)"):
            attempt()
    after = store.get(run_id)
    assert (after.request, after.name, after.step_delay) == ("run", "teacher's run", 0.0)
    assert store.requests(run_id).asked == {}
    refused = [h for h in history(store) if not h.allowed]
    assert len(refused) == 9 and {h.who for h in refused} == {"student@school.example"}
    assert {h.action for h in refused} == {"pause", "stop", "resume", "step", "step_delay", "rename", "delete",
                                          "learning_rate", "momentum"}

    owner = Actions(store, person("Owner", "owner@school.example"))
    assert owner.pause(run).code == "requested" and store.get(run_id).request == "pause"
    admin = Actions(store, person("Teacher", "teacher@school.example"))
    assert admin.person.admin and admin.rename(run, "renamed by the teacher")
    assert store.get(run_id).name == "renamed by the teacher"
    allowed = [(h.who, h.action) for h in history(store) if h.allowed]
    assert allowed[:2] == [("teacher@school.example", "rename"), ("owner@school.example", "pause")]


@pytest.mark.store_on_disk  # it starts a worker process, which opens the store
def test_anyone_may_start_runs_which_they_then_own(store, monkeypatch):
    monkeypatch.setenv("STUDIO_DISPATCH", "0")
    ann = Actions(store, person("Ann", proven=False))
    run_id = ann.start(CONFIG.with_(data_dir="/nonexistent"), name="ann's")  # queued; nothing needs to train
    run = store.get(run_id)
    assert run.submitter == "Ann" and ann.person.may("stop", run)
    assert not Actions(store, person("Bob", proven=False)).person.may("stop", run)
    assert history(store)[0].action == "start" and history(store)[0].who == "Ann"
    ann.cancel(run)


def test_a_display_name_belongs_to_one_browser_and_never_makes_an_admin(store, monkeypatch):
    monkeypatch.setenv("STUDIO_ADMINS", "Teacher, boss@x.example")
    assert claim_name(store, "Ann", "token-1") is None
    assert claim_name(store, "ann ", "token-1") is None, "the same browser, again (case and spaces do not matter)"
    assert claim_name(store, "ANN", "token-2").key == "name_taken"
    assert claim_name(store, "teacher", "token-3").key == "name_reserved"
    assert claim_name(store, "ＴＥＡＣＨＥＲ", "token-3").key == "name_reserved", "full-width letters fold too"
    for bad in ("", " ", "x" * 41, "evil\u202ename", "a\nb"):
        assert claim_name(store, bad, "token-4").key == "name_invalid", repr(bad)
    assert not person("Teacher", proven=False).admin, "a typed name proves nothing"
    assert person("Teacher").admin and person("T", "boss@x.example").admin and not person("Ann").admin
    assert person("ｔｅａｃｈｅｒ").admin and person("T", "BOSS@X.EXAMPLE").admin, "admins are matched as names are"


@pytest.mark.store_on_disk  # its command lines are child processes, which open the store
def test_the_command_line_is_held_to_the_same_rule(store, monkeypatch):
    run_id = store.create_run(CONFIG, name="someone else's", status="stopped", exclusive=False, submitter="alice")
    p = cli("core.cli.control", "rename", run_id, "--name", "taken", "--store", str(store.root))
    assert p.returncode == 3 and "Only the owner of “someone else's” (alice)" in p.stderr, p.stderr
    assert store.get(run_id).name == "someone else's"
    mine = store.create_run(CONFIG, name="mine", status="stopped", exclusive=False, submitter=_me())
    p = cli("core.cli.control", "rename", mine, "--name", "still mine", "--store", str(store.root))
    assert p.returncode == 0 and store.get(mine).name == "still mine", p.stderr
    p = cli("core.cli.control", "delete", mine, "--store", str(store.root))
    assert p.returncode == 0 and store.get(mine) is None
    assert [(h.action, h.allowed) for h in history(store)][:3] == [("delete", True), ("rename", True), ("rename", False)]


def _me() -> str:
    import getpass
    return getpass.getuser()


@pytest.mark.deadline  # a 2-s lockout checked before and after it runs out
def test_fifty_parallel_wrong_passwords_are_throttled_across_sessions_and_the_right_one_gets_in_after():
    throttle = Throttle(free=5, window_s=60, lockout_s=2.0, spacing_s=0.05)
    checked, verdicts, lock = [], [], threading.Lock()

    def wrong():
        with lock:
            checked.append(1)
        return False

    def guess():
        v = throttle.attempt("127.0.0.1", wrong)
        with lock:
            verdicts.append(v)

    threads = [threading.Thread(target=guess) for _ in range(50)]
    started = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    assert len(verdicts) == 50 and not any(v.granted for v in verdicts)
    assert len(checked) == 5, "after 5 wrong ones the address is locked out: the other 45 are not even checked"
    assert sum(v.locked_for_s > 0 for v in verdicts) >= 45
    assert time.monotonic() - started >= 5 * 0.05, "wrong ones were checked one at a time, spaced"
    assert not throttle.attempt("127.0.0.1", lambda: True).granted, "still locked: even the right one waits"
    assert throttle.attempt("10.0.0.7", lambda: True).granted, "another address is not locked out"
    let_pass(2.1, "the lockout runs out")
    assert throttle.attempt("127.0.0.1", lambda: True).granted, "after the lockout the right password gets in"


def test_my_handwriting_is_each_persons_own(store):
    import numpy as np
    from core.runs.people.handwriting import HandwritingSet
    ann, bob = HandwritingSet(store, "ann@x.example"), HandwritingSet(store, "bob@x.example")
    first = ann.add(np.zeros((28, 28), np.uint8), 3)
    bob.add(np.ones((28, 28), np.uint8), 7)
    assert [d.label for d in ann.drawings()] == [3] and [d.label for d in bob.drawings()] == [7]
    bob.delete(first)  # not his: nothing happens
    assert [d.id for d in ann.drawings()] == [first]


def test_names_are_one_name_in_every_way_of_writing_them(store):
    """Unicode case folding and NFKC everywhere: José/JOSÉ, Straße/STRASSE, full-width Ａｎｎ/Ann are one name
    for taking a display name and for owning a run."""
    from core.runs.people.permissions import claim_name, person
    from core.runs.run_queue import RunQueue
    for first, second in (("José", "JOSÉ"), ("Straße", "STRASSE"), ("Ａｎｎ", "ann")):
        assert claim_name(store, first, f"browser of {first}") is None
        refused = claim_name(store, second, "another browser")
        assert refused is not None and refused.key == "name_taken", (first, second)
        run = store.get(RunQueue(store, 1).submit(CONFIG, f"{first}'s", "test", submitter=first))
        assert person(second, proven=False).owns(run), (first, second)
    joses = store.get(RunQueue(store, 1).submit(CONFIG, "x", "test", submitter="José"))
    assert not person("Jose", proven=False).owns(joses), "an accent is not a case"


def test_a_run_name_is_capped_and_clean_on_every_path(store):
    from core.messages import ExplainedValueError
    for bad in ("x" * 81, "two\nlines", "red \x1b[31m"):
        with pytest.raises(ExplainedValueError):
            store.create_run(CONFIG, name=bad, exclusive=False)
    p = cli("core.cli.train", "--network", "mlp", "--name", "evil\x1b[2J", "--no-wait", "--store", str(store.root))
    assert p.returncode == 2 and "without control characters" in p.stderr and "Traceback" not in p.stderr
    assert store.list_runs() == []
