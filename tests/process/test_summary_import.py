"""MindSpore summary folders opened in the studio (core/summaries/, core/app/summary_import.py, python -m
core.cli.import_summary): a real Model.train script with SummaryCollector, its losses against what it printed, its
histograms, images, graph and lineage; the same folder imported twice; a folder followed while it grows; corrupt,
truncated, empty and enormous files."""
import json
import re
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core import PROJECT_ROOT
from core.app.summary_import import SETTLE_S, SummaryImport, find_imported
from core.runs.store import RunStore
from core.summaries.mindspore_summary import FolderReader
from core.summaries.training_folders import training_folders
from core.summaries.records import frame, scan_records
from tests.support.helpers import cli, let_pass, wait_for
from tests.support.summaries import half_written

STEPS, EPOCHS = 12, 2


@pytest.fixture(scope="module")
def collected(tmp_path_factory, small_mnist) -> tuple[Path, list[float]]:
    """A summary folder the example script wrote (LeNet-5, Model.train, SummaryCollector), and the losses it
    printed, one a step."""
    folder = tmp_path_factory.mktemp("summaries") / "lenet5-run"
    out = subprocess.run([sys.executable, "examples/lenet5_summary_collector.py", "--data",
                          str(small_mnist / "train"), "--summary-dir", str(folder), "--steps", str(STEPS),
                          "--epochs", str(EPOCHS)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    printed = [float(m.group(1)) for m in re.finditer(r"^step \d+ loss ([0-9.]+)$", out.stdout, re.M)]
    assert len(printed) == STEPS * EPOCHS
    return folder, printed


def test_a_summary_collector_folder_becomes_a_run_whose_losses_match_what_its_script_printed(collected, tmp_path):
    folder, printed = collected
    store = RunStore(tmp_path / "store")
    p = cli("core.cli.import_summary", str(folder.parent), "--store", str(tmp_path / "store"), timeout=120)
    assert p.returncode == 0, p.stderr
    assert f"{STEPS * EPOCHS} new steps, last step {STEPS * EPOCHS}; training ended" in p.stdout, p.stdout
    (run,) = store.list_runs()
    assert (run.name, run.source, run.status, run.step, run.epoch) == ("lenet5-run", "summary", "completed",
                                                                       STEPS * EPOCHS, EPOCHS)
    assert [s.loss for s in store.steps(run.id)] == pytest.approx(printed, abs=1e-6)
    assert [s.epoch for s in store.steps(run.id)] == [1] * STEPS + [2] * STEPS
    params = run.params
    assert (params["optimizer"], params["batch_size"], params["epochs"], params["network"]) == (
        "Momentum", 32, EPOCHS, "LeNet5")
    assert params["summary_dir"] == str(folder.resolve()) and params["train_dataset_size"] == STEPS * 32
    assert (run.config.optimizer, run.config.batch_size, run.config.epochs) == ("momentum", 32, EPOCHS)
    assert run.config.learning_rate == pytest.approx(0.01)
    stats = store.layer_stats(run.id)
    assert {(s.epoch, s.param) for s in stats} == {(e, p) for e in (1, 2) for p in ("conv1.weight", "conv2.weight")}
    assert all(sum(s.hist_counts) == 150 for s in stats if s.param == "conv1.weight")  # 6×1×5×5 weights
    image = store.file(run.id, "summary-image-input_data.png")
    assert image is not None and image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    graph = json.loads(store.file(run.id, "summary-graph.json").read_text())
    assert any(n["scope"] == "Default/network-WithLossCell/_backbone-LeNet5/conv1-Conv2d" and n["op_type"] == "Conv2D"
               for n in graph), sorted({(n["scope"], n["op_type"]) for n in graph})

    again = cli("core.cli.import_summary", str(folder), "--store", str(tmp_path / "store"), timeout=120)
    assert again.returncode == 0 and "0 new steps" in again.stdout, again.stdout + again.stderr
    assert [r.id for r in store.list_runs()] == [run.id], "the same folder imported twice is one run"


def test_a_folder_still_being_written_is_followed_to_its_last_step(collected, tmp_path):
    """Records arrive in pieces, a record cut in half by the writer's buffer included: the run stays running
    with the steps so far, the half record waits, and the run completes when the training lineage arrives."""
    source, printed = collected
    (events,) = source.glob("*_MS")
    (lineage,) = source.glob("*_lineage")
    data = events.read_bytes()
    records = scan_records(events).records
    folder = tmp_path / "live"
    folder.mkdir()
    cut = len(b"".join(frame(r) for r in records[:len(records) // 2])) + 20  # inside the next record
    (folder / events.name).write_bytes(data[:cut])
    store = RunStore(tmp_path / "store")
    follow = SummaryImport(store, folder)
    first = follow.update(final=False)
    run = store.get(first.run_id)
    assert run.status == "running" and 0 < run.step < STEPS * EPOCHS and first.skipped == 0
    assert [s.loss for s in store.steps(run.id)] == pytest.approx(printed[:run.step], abs=1e-6)
    (folder / events.name).write_bytes(data)
    (folder / lineage.name).write_bytes(lineage.read_bytes())
    grown = follow.update(final=False)
    assert not grown.ended and store.get(run.id).status == "running", "the lineage alone does not end it"
    let_pass(SETTLE_S + 0.1, "the files stay quiet after the lineage arrived")
    last = follow.update(final=False)
    assert last.ended and store.get(run.id).status == "completed"
    assert [s.loss for s in store.steps(run.id)] == pytest.approx(printed, abs=1e-6)
    assert find_imported(store, folder).id == run.id


def _damaged(collected, tmp_path: Path, damage) -> tuple[RunStore, str, list[str]]:
    source, _ = collected
    folder = tmp_path / "damaged"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("ckpt_dir"))
    for f in folder.iterdir():
        f.chmod(0o600)  # SummaryRecord leaves its files read-only
    (events,) = folder.glob("*_MS")
    events.write_bytes(damage(events.read_bytes()))
    store = RunStore(tmp_path / "store")
    report = SummaryImport(store, folder).update(final=True)
    return store, report.run_id, [line.message for line in store.logs(report.run_id)]


def _record_starts(data: bytes) -> list[int]:
    starts, at = [], 0
    while at < len(data):
        starts.append(at)
        at += 16 + struct.unpack("<Q", data[at:at + 8])[0]
    return starts


def test_a_corrupt_record_is_skipped_and_said_the_others_imported(collected, tmp_path):
    def flip(data: bytes) -> bytes:
        at = _record_starts(data)[5] + 30  # inside the sixth record's data
        return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
    store, run_id, log = _damaged(collected, tmp_path, flip)
    assert len(store.steps(run_id)) == STEPS * EPOCHS - 1, "one step's record lost, every other one kept"
    assert any("its checksum does not match" in line for line in log), log


def test_a_truncated_file_imports_what_is_whole_and_says_where_it_ends(collected, tmp_path):
    store, run_id, log = _damaged(collected, tmp_path, lambda data: data[:_record_starts(data)[8] + 40])
    assert 0 < len(store.steps(run_id)) < STEPS * EPOCHS
    assert any("the file ends inside a record (cut short)" in line for line in log), log


def test_a_corrupt_length_or_an_enormous_one_ends_that_file_and_nothing_raises(collected, tmp_path):
    def enormous(data: bytes) -> bytes:  # a record claiming a terabyte, with a length checksum that holds
        at = _record_starts(data)[8]
        return data[:at] + frame(b"x")[:0] + _header(10 ** 12) + data[at:]
    store, run_id, log = _damaged(collected, tmp_path, enormous)
    assert 0 < len(store.steps(run_id)) < STEPS * EPOCHS
    assert any("a record's length is impossible" in line for line in log), log


def _header(length: int) -> bytes:
    from core.summaries.records import masked_crc32c
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc32c(header))


def test_an_empty_summary_file_and_a_folder_without_any_are_said_not_raised(tmp_path):
    folder = tmp_path / "empty-run"
    folder.mkdir()
    (folder / "events.out.events.summary.1.host_MS").write_bytes(b"")
    assert training_folders(tmp_path) == [folder]
    content = FolderReader(folder).read()
    assert (content.records, content.skipped, content.scalars) == (0, [], {})
    store = RunStore(tmp_path / "store")
    report = SummaryImport(store, folder).update(final=True)
    assert store.get(report.run_id).status == "stopped" and report.new_steps == 0
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    p = cli("core.cli.import_summary", str(nothing), "--store", str(tmp_path / "store"), timeout=60)
    assert p.returncode == 2 and "no MindSpore summary files" in p.stderr
    p = cli("core.cli.import_summary", str(tmp_path / "missing"), "--store", str(tmp_path / "store"), timeout=60)
    assert p.returncode == 2 and "no such folder" in p.stderr


def test_scalars_the_pages_do_not_show_are_named(tmp_path):
    import numpy as np
    from mindspore import Tensor
    from mindspore.train.summary import SummaryRecord
    folder = tmp_path / "recorded"
    with SummaryRecord(str(folder)) as record:
        for step in (1, 2, 3):
            record.add_value("scalar", "loss", Tensor(np.float32(1.0 / step)))
            record.add_value("scalar", "accuracy", Tensor(np.float32(0.5 + step / 10)))
            record.add_value("scalar", "gpu_temperature", Tensor(np.float32(60.0)))
            record.add_value("tensor", "weights", Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
            record.record(step)
    store = RunStore(tmp_path / "store")
    report = SummaryImport(store, folder).update(final=True)
    assert report.not_shown == ["scalar gpu_temperature (3)", "tensor weights (3)"]
    assert [v.val_acc for v in store.validations(report.run_id)] == pytest.approx([0.6, 0.7, 0.8])
    assert [s.loss for s in store.steps(report.run_id)] == pytest.approx([1.0, 0.5, 1 / 3])


def test_the_runs_page_opens_a_summary_folder_within_the_allowed_folders_only(store, collected, tmp_path,
                                                                             monkeypatch):
    from tests.support.apptest import page
    folder, printed = collected
    monkeypatch.setenv("STUDIO_DATA_ROOTS", str(tmp_path / "elsewhere"))
    at = page("runs")
    at.text_input(key="summary_folder").input(str(folder.parent)).run()
    at.button(key="summary_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("outside the folders this server lets users read" in e.value for e in at.error), [e.value for e in at.error]
    assert store.list_runs() == [], "nothing read outside the allowed folders"

    monkeypatch.setenv("STUDIO_DATA_ROOTS", str(folder.parent))
    at = page("runs")
    at.text_input(key="summary_folder").input(str(folder.parent)).run()
    at.button(key="summary_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"{STEPS * EPOCHS} steps read" in s.value for s in at.success), [s.value for s in at.success]
    (run,) = store.list_runs()
    assert run.imported and [s.loss for s in store.steps(run.id)] == pytest.approx(printed, abs=1e-6)
    assert any(h.action == "import_summary" for h in store.history())


def test_the_runs_page_follows_a_folder_while_its_training_writes_and_ends_it_with_the_lineage(
        store, collected, tmp_path, monkeypatch):
    """Runs' follow switch: the server reads the folder again by itself (no second click), so the run grows while
    its files grow, and it completes once the training lineage has arrived and the files stay quiet. A second
    Open of the same folder shares the one follower."""
    from core.app import summary_follow
    from tests.support.apptest import page
    source, printed = collected
    folder = tmp_path / "followed" / "live"
    events, lineage = half_written(source, folder)
    monkeypatch.setenv("STUDIO_DATA_ROOTS", str(tmp_path / "followed"))
    monkeypatch.setattr(summary_follow, "FOLLOWERS", summary_follow.Followers(every_s=0.2))
    monkeypatch.setattr("ui.summary_view.FOLLOWERS", summary_follow.FOLLOWERS)
    at = page("runs")
    at.text_input(key="summary_folder").input(str(folder)).run()
    at.toggle(key="summary_follow").set_value(True).run()
    at.button(key="summary_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("followed while its training writes" in s.value for s in at.success), [s.value for s in at.success]
    (run,) = store.list_runs()
    half = run.step
    assert run.status == "running" and 0 < half < STEPS * EPOCHS
    assert summary_follow.FOLLOWERS.following() == [folder.resolve()]

    at.button(key="summary_open").click().run()  # opened again while followed: the same follower
    assert any("is followed already" in i.value for i in at.info), [i.value for i in at.info]
    assert len(store.list_runs()) == 1

    (folder / events.name).write_bytes(events.read_bytes())  # the training writes on; nobody clicks
    wait_for(lambda: store.get(run.id).step == STEPS * EPOCHS, 30, "the followed run to reach the last step")
    assert store.get(run.id).status == "running", "no lineage yet: the training may go on"
    (folder / lineage.name).write_bytes(lineage.read_bytes())
    wait_for(lambda: store.get(run.id).status == "completed", 30, "the lineage to end the followed run")
    assert [s.loss for s in store.steps(run.id)] == pytest.approx(printed, abs=1e-6)
    wait_for(lambda: summary_follow.FOLLOWERS.following() == [], 10, "its follower to end")


def test_a_followed_folder_that_goes_quiet_without_a_lineage_ends_as_stopped_and_says_why(store, collected,
                                                                                          tmp_path):
    from core.app.summary_follow import Followers
    source, _ = collected
    (events,) = source.glob("*_MS")
    folder = tmp_path / "crashed"
    folder.mkdir()
    (folder / events.name).write_bytes(events.read_bytes())  # its script died before the lineage
    followers = Followers(every_s=0.1, quiet_limit_s=0.5)
    first = followers.follow(store, folder, who="ann")
    assert first is not None and store.get(first.run_id).status == "running"
    wait_for(lambda: store.get(first.run_id).status == "stopped", 30, "the quiet folder's run to end")
    assert any("no training lineage: followed no more" in line.message for line in store.logs(first.run_id))
    with pytest.raises(ValueError, match="already follows 0 summary folders: open this one without following it"):
        Followers(most=0).follow(store, folder, who="ann")


def test_a_long_first_read_holds_up_no_one_elses_follow(store, collected, tmp_path, monkeypatch):
    """One person's Follow of a folder whose first read is slow: a second person's Follow of another folder, and a
    third Follow of the same folder, answer at once; a first read that fails frees its place."""
    from core.app import summary_follow
    source, _ = collected
    slow, quick = tmp_path / "slow", tmp_path / "quick"
    for folder in (slow, quick):
        shutil.copytree(source, folder)
    reading, release = threading.Event(), threading.Event()
    real_update = SummaryImport.update

    def update(self, final=False):
        if self.folder.name == "slow" and not release.is_set():
            reading.set()
            assert release.wait(30), "the test never released the slow read"
        return real_update(self, final)

    monkeypatch.setattr(SummaryImport, "update", update)
    followers = summary_follow.Followers(every_s=60, most=2)
    first: list = []
    slow_follow = threading.Thread(target=lambda: first.append(followers.follow(store, slow, who="ann")))
    slow_follow.start()
    assert reading.wait(30), "the slow folder's first read began"
    assert followers.follow(store, quick, who="bob") is not None
    assert followers.follow(store, slow, who="cy") is None  # already being started: one thread per folder
    assert slow_follow.is_alive(), "the other Follows answered only after the slow first read had ended"
    release.set()
    slow_follow.join(30)
    assert first and first[0] is not None and followers.following() == sorted([slow.resolve(), quick.resolve()])
    broken = summary_follow.Followers(every_s=60, most=1)
    monkeypatch.setattr(SummaryImport, "update", lambda self, final=False: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        broken.follow(store, slow, who="ann")
    monkeypatch.setattr(SummaryImport, "update", real_update)
    assert broken.follow(store, quick, who="ann") is not None, "the failed first read left its place free"


def test_an_imported_run_shows_its_curve_images_and_graph_by_scope_on_train(store, collected):
    from tests.support.apptest import page
    folder, _ = collected
    report = SummaryImport(store, folder).update(final=True)
    at = page("train", {"run": report.run_id})
    assert not at.exception, [e.value for e in at.exception]
    assert any("Read from the summary folder" in i.value for i in at.info), [i.value for i in at.info]
    assert not [b for b in at.button if b.key in ("pause", "stop", "step")], "no control reaches an imported run"
    assert any("The last image the script recorded" in c.value for c in at.caption)
    assert len(at.get("image")) >= 1, "the input samples' last image is drawn"
    (tree,) = [h.proto.body for h in at.get("html") if "data-scope" in h.proto.body]
    conv = tree.index("data-scope='Default/network-WithLossCell/_backbone-LeNet5/conv1-Conv2d'")
    assert "Conv2D" in tree[conv:tree.index("</details>", conv)], "the conv scope lists its Conv2D operator"
    assert "<details open data-scope='Default'>" in tree and tree.count("<details open") == 1


def test_a_tensorboardx_log_imports_and_compares_against_a_studio_run(store, small_mnist, tmp_path):
    """A log folder tensorboardX wrote (as PyTorch's SummaryWriter does): its loss by step, the learning rate
    where it changed, histograms, an image; a text it holds is named, not dropped; then Compare draws it beside a
    run the studio trained."""
    import numpy as np
    from tensorboardX import SummaryWriter
    from tests.support.apptest import page
    logs = tmp_path / "tb" / "torch-run"
    with SummaryWriter(str(logs)) as w:
        for step in range(1, 31):
            w.add_scalar("loss", 2.0 / step, step)
            w.add_scalar("lr", 0.1 if step < 15 else 0.01, step)
            if step % 10 == 0:
                w.add_histogram("fc.weight", np.random.default_rng(step).normal(size=200), step)
                w.add_scalar("val_acc", {10: 0.5, 20: 0.8, 30: 0.7}[step], step)
        w.add_image("sample", np.random.default_rng(0).random((3, 8, 8)), 30)
        w.add_text("note", "a text", 30)
    p = cli("core.cli.import_summary", str(tmp_path / "tb"), "--store", str(tmp_path / "store"), timeout=120)
    assert p.returncode == 0, p.stderr
    assert "30 new steps, last step 30" in p.stdout and "not shown: text (note/text_summary) (1)" in p.stdout, p.stdout
    (imported,) = store.list_runs()
    assert [s.loss for s in store.steps(imported.id)] == pytest.approx([2.0 / s for s in range(1, 31)])
    assert [(c.step, c.value) for c in store.setting_changes(imported.id)] == [(1, pytest.approx(0.1)),
                                                                              (15, pytest.approx(0.01))]
    assert [s.param for s in store.layer_stats(imported.id)] == ["fc.weight"] * 3
    assert sum(store.layer_stats(imported.id)[0].hist_counts) == 200
    assert store.file(imported.id, "summary-image-sample.png").read_bytes()[:4] == b"\x89PNG"
    assert imported.status == "stopped" and imported.said.key == "summary_no_end"
    assert imported.best_val_acc == pytest.approx(0.8), "its best accuracy, as a studio run's"

    trained = cli("core.cli.train", "--network", "mlp", "--hidden", "16", "--epochs", "1", "--data-dir",
                  str(small_mnist), "--store", str(tmp_path / "store"), timeout=300)
    assert trained.returncode == 0, trained.stderr
    at = page("compare")
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.multiselect(key="compare_runs").value) == {r.id for r in store.list_runs()}
    figure = at.get("plotly_chart")[0].proto.spec
    assert "torch-run" in figure and "step loss" in figure
    at.toggle(key="compare_parallel").set_value(True).run()  # both have an accuracy: both are lines there
    (lines,) = [json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["data"][0]["type"] == "parcoords"]
    assert sorted(lines["line"]["color"]) == sorted(r.best_val_acc for r in store.list_runs())
    network = next(d for d in lines["dimensions"] if d["label"] == "Network")
    assert network["ticktext"] == ["mlp", "not stated"], "a TensorBoard log states no network: never the default's"


def test_imported_histograms_play_back_on_weights_without_false_alarms(store, collected):
    from tests.support.apptest import page
    folder, _ = collected
    report = SummaryImport(store, folder).update(final=True)
    stats = store.layer_stats(report.run_id)
    assert all(s.std > 0 and s.norm > 0 for s in stats), "estimated from the buckets, never NaN"
    at = page("weights")
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="weights_run").value == report.run_id
    # (the sidebar's class-link popover warns that no phone reaches a server on 127.0.0.1: not about the run)
    alarms = [w.value for w in at.warning if not w.value.startswith("No phone can open it")]
    assert not alarms, alarms
    spec = at.get("plotly_chart")[0].proto.spec
    assert "conv1.weight" in spec and "conv2.weight" in spec


def test_the_command_line_watches_a_training_while_it_runs_and_stops_when_it_ends(small_mnist, tmp_path):
    """`--watch` started before the script: it waits for the folder's files, follows them, and returns once the
    training lineage says the training ended, with every step the script printed."""
    folder = tmp_path / "summaries" / "live"
    folder.mkdir(parents=True)
    script = subprocess.Popen([sys.executable, "examples/lenet5_summary_collector.py", "--data",
                               str(small_mnist / "train"), "--summary-dir", str(folder), "--steps", "10",
                               "--epochs", "2"], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        wait_for(lambda: any(folder.glob("*_MS")), 120, "the script's first summary file")
        watch = cli("core.cli.import_summary", str(folder), "--store", str(tmp_path / "store"), "--watch",
                    "--every", "0.2", timeout=300)
        printed, _ = script.communicate(timeout=300)
    finally:
        script.kill()
    assert watch.returncode == 0, watch.stderr
    assert watch.stdout.strip().splitlines()[-1].endswith("last step 20; training ended"), watch.stdout
    store = RunStore(tmp_path / "store")
    (run,) = store.list_runs()
    losses = [float(m.group(1)) for m in re.finditer(r"^step \d+ loss ([0-9.]+)$", printed, re.M)]
    assert run.status == "completed" and [s.loss for s in store.steps(run.id)] == pytest.approx(losses, abs=1e-6)
