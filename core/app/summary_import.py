"""Summary folders into the run store: each training folder (core/summaries/: MindSpore summaries, TensorBoard event
files) becomes one run with source "summary", its folder in params["summary_dir"], found again by that folder, so
importing it twice updates one run. What the studio's pages show is written into the tables they read: the loss by
step (steps), the learning rate where it changed (setting_changes), histograms at each epoch's end (layer_stats, for
Weights), the last images of each tag and the graph (the run's files), the lineage as the run's settings (params,
and the studio's config where a setting is one of its own). Every other tag is named in the run's log, not dropped
silently.

A watched folder (SummaryImport.update again and again) stays `running` while its training writes; it ends
`completed` when the training lineage has arrived (Model.train writes it on returning) and the files have stayed quiet
for SETTLE_S."""
from __future__ import annotations

import json
import math
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.i18n import counted
from core.messages import Message
from core.runs.rows import SUMMARY, Run
from core.runs.store import RunStore
from core.summaries.content import FolderContent, HistogramPoint
from core.summaries.training_folders import reader_for
from core.foreign_settings import lineage_settings, studio_config
from core.training.events import SettingEvent, ValidationEvent
from core.training.layer_stats import LayerStat

__all__ = ["SummaryImport", "ImportReport", "find_imported", "LOSS_TAGS", "RATE_TAGS", "INDEX",
           "SETTLE_S", "GRAPH"]

LOSS_TAGS = ("loss", "train_loss", "loss/train", "Loss")
RATE_TAGS = ("learning_rate", "lr", "learning rate", "learning_rate/train")
ACC_TAGS = ("accuracy", "acc", "val_acc", "eval_acc", "Accuracy", "accuracy/eval", "val_accuracy")
VAL_LOSS_TAGS = ("val_loss", "eval_loss", "loss/eval", "validation_loss")
# The lineage file is written when Model.train returns, while SummaryRecord's writer process may still hold the
# last steps' records: a watched training is ended once its files have also stayed quiet this long (CI saw the
# lineage read with 18 of 20 steps in the summary file).
SETTLE_S = 1.0
INDEX, GRAPH = "summary-index.json", "summary-graph.json"  # the run's files: what it holds, and its graph


@dataclass
class ImportReport:
    """What one update brought in."""
    run_id: str
    name: str
    new_steps: int = 0
    last_step: int = 0
    skipped: int = 0
    not_shown: list[str] = field(default_factory=list)
    ended: bool = False

    def line(self) -> str:
        said = f"{self.name} ({self.run_id}): {counted(self.new_steps, 'new step')}, last step {self.last_step}"
        if self.skipped:
            said += f"; {counted(self.skipped, 'unreadable record')} skipped (see the run's log)"
        if self.not_shown:
            said += f"; not shown: {', '.join(self.not_shown)}"
        return said + ("; training ended" if self.ended else "")


def find_imported(store: RunStore, folder: Path) -> Run | None:
    """The run already imported from this folder, if any."""
    wanted = str(folder.resolve())
    return next((r for r in store.list_runs() if r.imported and (r.params or {}).get("summary_dir") == wanted),
                None)


class SummaryImport:
    """One training folder and its run: update() reads what is new and writes it into the store."""

    def __init__(self, store: RunStore, folder: Path, who: str = ""):
        self.store, self.folder, self.who = store, folder.resolve(), who
        self.reader = reader_for(self.folder)
        self.run_id: str | None = None
        self.written = {"steps": 0, "skips": 0, "images": 0, "epochs": 0, "graph": 0}
        self.rates_seen: float | None = None
        self.said_not_shown: list[str] = []
        self.records_seen, self.name, self.last_new = -1, "", 0.0

    def update(self, final: bool = True) -> ImportReport:
        """Read the folder's new records and write them. final: no more is coming (a one-off import): a training
        that wrote no lineage ends as `stopped`, its files saying nothing of how it ended."""
        content = self.reader.read(final=final)
        if self.run_id is not None and content.records == self.records_seen and not final:
            self.store.update(self.run_id, heartbeat=time.time())  # nothing new: still followed, says the beat
            quiet = ImportReport(self.run_id, self.name, last_step=content.steps, skipped=len(content.skipped))
            if content.ended and time.monotonic() - self.last_new >= SETTLE_S:
                self.store.finish(self.run_id, "completed", Message("summary_ended"))
                quiet.ended = True
            return quiet
        self.records_seen, self.last_new = content.records, time.monotonic()
        run_id = self._run(content, final)
        self.name = self.store.existing(run_id).name
        report = ImportReport(run_id, self.name, skipped=len(content.skipped))
        report.new_steps = self._steps(run_id, content)
        report.last_step = content.steps
        self._rates(run_id, content)
        self._validations(run_id, content)
        self._histograms(run_id, content)
        self._files(run_id, content)
        self._skips(run_id, content)
        report.not_shown = not_shown(content)
        if report.not_shown and report.not_shown != self.said_not_shown:
            self.store.log(run_id, "recorded but shown on no page: " + ", ".join(report.not_shown))
            self.said_not_shown = report.not_shown
        report.ended = content.ended and final  # watched: ended once the files stay quiet (SETTLE_S)
        self._status(run_id, content, final)
        return report

    # --- the run ------------------------------------------------------------------------------------------
    def _run(self, content: FolderContent, final: bool) -> str:
        if self.run_id is None:
            existing = find_imported(self.store, self.folder)
            if existing is not None:
                self.run_id = existing.id
                self.written["steps"] = existing.step
            else:
                self.run_id = self.store.create_run(
                    studio_config(lineage_settings(content.lineage)), name=self.folder.name[:80] or "summary",
                    source=SUMMARY, status="running", exclusive=False, submitter=self.who,
                    params=json.dumps(self._params(content), default=str), started=time.time(),
                    pid=os.getpid(), host=socket.gethostname())
                self.store.log(self.run_id, f"imported from the summary folder {self.folder}")
        if content.lineage:
            self.store.update(self.run_id, params=json.dumps(self._params(content), default=str),
                              config=studio_config(lineage_settings(content.lineage)).to_json())
        return self.run_id

    def _params(self, content: FolderContent) -> dict:
        return {"summary_dir": str(self.folder), **content.lineage}

    # --- records -------------------------------------------------------------------------------------------
    def _steps(self, run_id: str, content: FolderContent) -> int:
        points = loss_points(content)
        per_epoch = steps_per_epoch(content)
        first_wall = points[0].wall_time if points else 0.0
        new = [p for p in points if p.step > self.written["steps"]]
        rows = [(p.step, epoch_of(p.step, per_epoch), p.value, max(p.wall_time - first_wall, 0.0)) for p in new]
        total = per_epoch * int(content.lineage.get("epochs") or 0) if per_epoch else 0
        last = max((p.step for p in points), default=0)
        progress = dict(step=last, epoch=epoch_of(last, per_epoch) if last else 0,
                        total_steps=max(total, last), heartbeat=time.time())
        self.store.add_steps(run_id, rows, **progress)
        self.written["steps"] = max(self.written["steps"], last)
        return len(rows)

    def _rates(self, run_id: str, content: FolderContent) -> None:
        tag = next((t for t in RATE_TAGS if t in content.scalars), None)
        for point in content.scalars.get(tag, []) if tag else []:
            if self.rates_seen is None or not math.isclose(point.value, self.rates_seen, rel_tol=1e-6):
                self.store.add_setting_change(run_id, SettingEvent(point.step, "learning_rate", point.value))
                self.rates_seen = point.value

    def _validations(self, run_id: str, content: FolderContent) -> None:
        """An accuracy and a validation loss by step (a metric the script recorded), as the validation curve."""
        acc = _by_step(content, ACC_TAGS)
        loss = _by_step(content, VAL_LOSS_TAGS)
        per_epoch = steps_per_epoch(content)
        for step in sorted(set(acc) | set(loss)):
            self.store.add_validation(run_id, ValidationEvent(step, epoch_of(step, per_epoch), loss.get(step),
                                                              acc.get(step)))
        self._best(run_id, content, acc, loss, per_epoch)

    def _best(self, run_id: str, content: FolderContent, acc: dict[int, float], loss: dict[int, float],
              per_epoch: int) -> None:
        """The best accuracy and loss it recorded, as a studio run's (the lists, Compare's parallel coordinates):
        from the accuracy scalars, else from the evaluation lineage (Model.eval's metrics)."""
        best: dict = {}
        if acc:
            step = max(acc, key=lambda s: (acc[s], -s))  # the highest; the earliest of equals
            best.update(best_val_acc=acc[step], best_epoch=epoch_of(step, per_epoch) or None)
        elif (evaluated := _lineage_accuracy(content.lineage)) is not None:
            best.update(best_val_acc=evaluated)
        if loss:
            best.update(best_val_loss=min(loss.values()))
        if best:
            self.store.update(run_id, **best)  # one write

    def _histograms(self, run_id: str, content: FolderContent) -> None:
        """One histogram a tag and epoch (its last record in the epoch), as the Weights page shows a run's."""
        per_epoch = steps_per_epoch(content)
        stats: list[LayerStat] = []
        for tag, points in content.histograms.items():
            by_epoch: dict[int, HistogramPoint] = {}
            for i, p in enumerate(points, start=1):
                by_epoch[epoch_of(p.step, per_epoch) if per_epoch else i] = p
            stats += [layer_stat(epoch, tag, p) for epoch, p in sorted(by_epoch.items())]
        self.store.add_layer_stats(run_id, stats)

    def _files(self, run_id: str, content: FolderContent) -> None:
        """The last image of each tag, and the graph, as the run's files, listed in INDEX (its page reads them)."""
        images = {}
        for tag, points in content.images.items():
            name = "summary-image-" + "".join(ch if ch.isalnum() else "_" for ch in tag) + ".png"
            self._write(run_id, name, points[-1].png)
            images[tag] = {"file": name, "step": points[-1].step, "count": content.image_counts[tag]}
        if content.graph and len(content.graph) != self.written["graph"]:
            self._write(run_id, GRAPH, json.dumps([vars(n) for n in content.graph]).encode())
            self.written["graph"] = len(content.graph)
        index = {"images": images, "graph": GRAPH if content.graph else None}
        self._write(run_id, INDEX, json.dumps(index).encode())

    def _write(self, run_id: str, name: str, data: bytes) -> None:
        path = self.store.file_path(run_id, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.store.keep_file(run_id, name)

    def _skips(self, run_id: str, content: FolderContent) -> None:
        for s in content.skipped[self.written["skips"]:]:
            self.store.log(run_id, f"skipped {counted(s.skip.length, 'byte')} of {s.file} at byte {s.skip.offset}: "
                                   f"{SKIP_WORDS[s.skip.reason]}")
        self.written["skips"] = len(content.skipped)

    def _status(self, run_id: str, content: FolderContent, final: bool) -> None:
        if content.ended and final:
            self.store.finish(run_id, "completed", Message("summary_ended"))
        elif final:
            self.store.finish(run_id, "stopped", Message("summary_no_end"))


SKIP_WORDS = {"data_crc": "its checksum does not match (corrupt data); the records after it were read",
              "length_crc": "a record's length is corrupt; nothing after it in that file can be read",
              "too_long": "a record's length is impossible; nothing after it in that file can be read",
              "truncated": "the file ends inside a record (cut short)"}


def loss_points(content: FolderContent):
    tag = next((t for t in LOSS_TAGS if t in content.scalars), None)
    if tag is None:
        return []
    by_step = {p.step: p for p in content.scalars[tag]}  # a step recorded twice (step and epoch end): the last
    return [by_step[s] for s in sorted(by_step)]


def _by_step(content: FolderContent, tags: tuple[str, ...]) -> dict[int, float]:
    tag = next((t for t in tags if t in content.scalars), None)
    return {p.step: p.value for p in content.scalars[tag]} if tag else {}


def steps_per_epoch(content: FolderContent) -> int:
    """From the lineage's dataset size (SummaryCollector counts samples: 20 batches of 32 are 640) and batch
    size; 0: not known (no lineage yet)."""
    size, batch = int(content.lineage.get("train_dataset_size") or 0), int(content.lineage.get("batch_size") or 0)
    return size // batch if size > 0 and batch > 0 else 0


def epoch_of(step: int, per_epoch: int) -> int:
    return (step - 1) // per_epoch + 1 if per_epoch else 1


def layer_stat(epoch: int, tag: str, p: HistogramPoint) -> LayerStat:
    """A recorded histogram as the Weights page's statistics: its exact mean, min and max; its standard deviation
    and L2 norm estimated from the bucket centres (the values themselves are not in the file); the share of
    zeros unknown (NaN)."""
    kind = "grad" if "grad" in tag.lower() else "weight"
    counts = [float(c) for c in p.counts]
    centres = [(a + b) / 2 for a, b in zip(p.edges, p.edges[1:], strict=False)]
    total = sum(counts)
    mean = p.sum / p.count if p.count else (sum(c * x for c, x in zip(counts, centres, strict=False)) / total
                                            if total else math.nan)
    std = math.sqrt(sum(c * (x - mean) ** 2 for c, x in zip(counts, centres, strict=False)) / total) if total \
        else math.nan
    norm = math.sqrt(sum(c * x * x for c, x in zip(counts, centres, strict=False)))
    return LayerStat(epoch, tag, kind, mean, std, p.min, p.max, norm, math.nan, p.edges, tuple(int(c) for c in counts))


def _lineage_accuracy(lineage: dict) -> float | None:
    """Model.eval's accuracy in the evaluation lineage ("eval_accuracy", "eval_Accuracy"), if it is a fraction."""
    for key, value in lineage.items():
        if key.lower() in ("eval_accuracy", "eval_acc") and isinstance(value, int | float) and 0 <= value <= 1:
            return float(value)
    return None


def not_shown(content: FolderContent) -> list[str]:
    """Tags read but shown on no page, each with its kind and count."""
    shown = {next(t for t in tags if t in content.scalars) for tags in (LOSS_TAGS, RATE_TAGS, ACC_TAGS, VAL_LOSS_TAGS)
             if any(t in content.scalars for t in tags)}
    out = [f"scalar {t} ({len(p)})" for t, p in content.scalars.items() if t not in shown]
    out += [f"tensor {t} ({len(p)})" for t, p in content.tensors.items()]
    out += [f"{kind} ({n})" for kind, n in content.unknown.items()]
    return out
