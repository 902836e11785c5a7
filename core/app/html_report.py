"""A self-contained HTML report of one run, or of several side by side: its curves as interactive Plotly charts
(plotly.js inside the file), the settings (the ones that differ between runs marked), the results, and for one
run with a checkpoint its confusion matrix and most confident mistakes on a split of a MNIST folder. It opens
offline in any browser, without the studio: a report to send to someone who has no access to the server."""
from __future__ import annotations

import base64
import functools
import html
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from PIL import Image

from core.app import model_service
from core.app.confusion_timelapse import frames_of, timelapse_figure
from core.app.mosaic import mosaic_html
from core.app.run_tables import RunTables, stacked
from core.app.smoothing import smooth
from core.config import TrainConfig
from core.data.folders import load_arrays, validate_mnist_dir
from core.i18n import catalogue, text
from core.model.metrics import Report
from core.networks import unused_fields
from core.runs.people.class_round import ClassDrawing, counts
from core.runs.people.finetune import Score
from core.runs.rows import Run
from core.runs.store import RunStore

__all__ = ["Evaluation", "LessonPart", "html_report", "evaluation_of"]

# The epochs' figures as a person reads them in the legend and the hover ("train_loss" is a column's name)
FIGURES = {"train_loss": "train loss", "val_loss": "validation loss", "train_acc": "train accuracy",
           "val_acc": "validation accuracy"}
# Settings a report does not show: the live changes (the curves carry them). A network's shape fields appear
# only for the networks they shape; the data folder and a start checkpoint by their names (_in_words).
NOT_SHOWN = ("setting_changes",)
# plotly.js's cartesian bundle, gzipped (core/app/assets/README.md): 472 KB where the full plotly.js is 4.8 MB
PLOTLY_JS_GZ = Path(__file__).resolve().parent / "assets" / "plotly-cartesian-3.7.0.min.js.gz"
# Unpacks it with the browser's own DecompressionStream and runs it; each chart draws once it has (_figure)
LOADER = """window.plotlyReady = (async () => {
  const packed = Uint8Array.from(atob(document.getElementById('plotly-js-gz').textContent), c => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip'));
  (0, eval)(await new Response(stream).text());
})();"""
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
SMOOTHING = 0.8  # as the Train page's default
MISTAKES_SHOWN = 24


@dataclass(frozen=True)
class Evaluation:
    """A run's checkpoint scored on a split, with the images of its mistakes."""
    report: Report
    split: str                 # test | validation
    folder: str
    images: np.ndarray         # (N, 28, 28) uint8, the split file's images (indexed by report.sample_ids)


@dataclass(frozen=True)
class LessonPart:
    """A class round in the report (core/runs/people/class_round.py): the class's shown drawings with the
    readings of the round's model, and the fine-tune's accuracy before and after (none: not taught yet)."""
    drawings: tuple[ClassDrawing, ...]
    split: str                      # the evaluation split's name, or "none"
    scores: tuple[Score, ...] = ()


def evaluation_of(store: RunStore, run_id: str, data_dir: str | None) -> Evaluation | None:
    """The run's checkpoint on data_dir's test split (its validation split when the folder has no test split);
    None when the run has no checkpoint the studio can read."""
    from core.model.checkpoint import CheckpointError  # deferred: MindSpore, for a report with an evaluation only

    path = store.checkpoint_file(store.existing(run_id))
    if path is None:
        return None
    folder = validate_mnist_dir(data_dir)
    split = "test" if folder.has_test else "validation"
    try:
        report = model_service.evaluate(path, str(folder.root), split)
    except CheckpointError:
        return None  # a script's network of its own: kept, not readable by the studio
    images, _ = load_arrays(folder, "test" if split == "test" else "train")
    return Evaluation(report, split, str(folder.root), images)


def html_report(store: RunStore, run_ids: list[str], evaluation: Evaluation | None = None,
                lesson: LessonPart | None = None) -> str:
    """The report's HTML (one file, no network needed to open it); with `lesson`, a class round's replayable
    record: the curves with every live change marked, each run's confusion matrix epoch by epoch, the class's
    drawings and the before and after."""
    t = stacked(store, run_ids)
    runs = [store.existing(i) for i in run_ids]
    names = {row.run_id: row.name for row in t.runs.itertuples()}
    title = (f"Run {names[run_ids[0]]}" if len(run_ids) == 1
             else "Comparison of " + ", ".join(names[i] for i in run_ids))
    parts = [f"<h1>{_e(title)}</h1>",
             f"<p class='muted'>MindSpore Training Studio · report written {time.strftime('%Y-%m-%d %H:%M %Z')}</p>",
             _tags_and_notes(runs), _results(t, runs), _figure(_curves(t, run_ids, names), "curves"),
             _settings(runs)]
    parts += [_timelapse(store, run_id, names[run_id] if len(run_ids) > 1 else None, f"timelapse-{i}" if i else
                         "timelapse") for i, run_id in enumerate(run_ids)]
    if lesson is not None:
        parts += [_lesson(lesson)]
    if evaluation is not None:
        parts += [_evaluation(evaluation)]
    parts += [_log(store, run_ids[0]) if len(run_ids) == 1 else ""]
    return _page(title, "\n".join(parts))


def _e(value) -> str:
    """A value as the report shows it, escaped: floats to 4 significant digits, nothing as a dash."""
    if value is None or value != value:
        return "–"
    return html.escape(f"{value:.4g}" if isinstance(value, float) else str(value))


def _page(title: str, body: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }} td, th {{ border: 1px solid #ddd; padding: .3em .6em; }}
th {{ background: #f4f4f4; text-align: left; }} tr.differs td {{ background: rgba(242, 153, 74, .35); }}
.muted {{ color: #777; }} pre {{ background: #f7f7f7; padding: 1em; overflow-x: auto; max-height: 30em; }}
.mistakes {{ display: flex; flex-wrap: wrap; gap: .8em; }} .mistakes figure {{ margin: 0; text-align: center; }}
.mistakes img {{ width: 84px; height: 84px; image-rendering: pixelated; border: 1px solid #ccc; }}
</style>
<script id="plotly-js-gz" type="application/octet-stream">{_packed_plotly()}</script>
<script>{LOADER}</script>
</head><body>
{body}
</body></html>
"""


@functools.lru_cache(maxsize=1)
def _packed_plotly() -> str:
    """The bundle as the report's script element holds it (read and encoded once per process)."""
    return base64.b64encode(PLOTLY_JS_GZ.read_bytes()).decode()


def _figure(fig: go.Figure, div_id: str) -> str:
    """A chart's div, drawn by plotly.js once the loader has unpacked it."""
    spec = fig.to_json().replace("</", "<\\/")  # nothing in the data can end the script element
    config = json.dumps({"displaylogo": False, "responsive": True})
    return (f"<div id='{div_id}' class='plotly-graph-div' style='width:100%'></div>\n"
            f"<script>plotlyReady.then(() => {{ const f = {spec}; "
            f"Plotly.newPlot('{div_id}', {{data: f.data, layout: f.layout, frames: f.frames || [], "
            f"config: {config}}}); }});</script>")


def _curves(t: RunTables, run_ids: list[str], names: dict) -> go.Figure:
    fig = make_subplots(rows=1, cols=3, subplot_titles=("step loss", "epoch loss", "accuracy"))
    for i, run_id in enumerate(run_ids):
        colour, name = COLOURS[i % len(COLOURS)], names[run_id]
        steps = t.steps[t.steps.run_id == run_id].dropna(subset=["loss"])
        fig.add_trace(go.Scatter(x=steps.step, y=steps.loss, name=f"{name} · step loss", opacity=.3,
                                 line=dict(color=colour, width=1), legendgroup=run_id), 1, 1)
        fig.add_trace(go.Scatter(x=steps.step, y=smooth(steps.loss.tolist(), SMOOTHING),
                                 name=f"{name} · step loss, smoothed",
                                 line=dict(color=colour), legendgroup=run_id), 1, 1)
        epochs = t.epochs[t.epochs.run_id == run_id]
        for column, col, dash in (("train_loss", 2, "solid"), ("val_loss", 2, "dot"), ("train_acc", 3, "solid"),
                                  ("val_acc", 3, "dot")):
            if epochs[column].notna().any():
                fig.add_trace(go.Scatter(x=epochs.epoch, y=epochs[column], name=f"{name} · {FIGURES[column]}",
                                         mode="lines+markers", line=dict(color=colour, dash=dash),
                                         legendgroup=run_id), 1, col)
    _live_changes(fig, t)
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="epoch", dtick=1, row=1, col=2)
    fig.update_xaxes(title_text="epoch", dtick=1, row=1, col=3)
    fig.update_yaxes(tickformat=".0%", row=1, col=3)
    if not t.epochs[["train_acc", "val_acc"]].notna().any().any():  # a panel with nothing says why
        fig.add_annotation(text="no accuracy recorded:<br>the run ended before<br>its first epoch's end",
                           showarrow=False, xref="x3 domain", yref="y3 domain", x=0.5, y=0.5)
    fig.update_layout(height=420, hovermode="x unified", hoverlabel=dict(namelength=-1),
                      legend=dict(orientation="h", y=-0.2),
                      margin=dict(l=40, r=20, t=40, b=40))
    return fig


def _live_changes(fig: go.Figure, t: RunTables) -> None:
    """A dashed line on the step-loss panel at each step where a live setting changed, labelled as the Train
    page labels it ("lr 0.05 · momentum 0.5")."""
    by_step: dict[int, list[str]] = {}
    for change in t.setting_changes.itertuples():
        by_step.setdefault(int(change.step), []).append(
            text("en", f"train.marker_{change.setting}", value=f"{change.value:g}"))
    for step, labels in sorted(by_step.items()):
        fig.add_vline(x=step, line=dict(color="#d62728", dash="dash", width=1.5), row=1, col=1,
                      annotation=dict(text=" · ".join(labels), font=dict(color="#d62728")),
                      annotation_position="top right")


def _timelapse(store: RunStore, run_id: str, name: str | None, div_id: str) -> str:
    """The validation split's confusion matrix epoch by epoch, playable offline ("" when fewer than two)."""
    frames = frames_of(store.epochs(run_id))
    if len(frames) < 2:
        return ""
    en = functools.partial(text, "en")
    fig = timelapse_figure(frames, lambda f: en("timelapse.title", epoch=f.epoch, acc=f.accuracy),
                           en("evaluate.true"), en("evaluate.predicted"), en("timelapse.epoch"), en("timelapse.play"),
                           en("timelapse.pause"))
    heading = en("timelapse.header") + (f" · {name}" if name else "")
    return f"<h2>{_e(heading)}</h2>" + _figure(fig, div_id)


def _lesson(lesson: LessonPart) -> str:
    """The class's drawings by digit, each with the round's reading (no names: the file leaves the studio), and
    the fine-tune's before and after."""
    en = functools.partial(text, "en")
    shown = list(lesson.drawings)
    out = [f"<h2>The class's drawings ({len(shown)})</h2>"]
    if shown:
        out.append(mosaic_html(shown, counts(shown), lambda c: en("class.row", digit=c.digit, n=c.drawings,
                                                                  right=c.read_right),
                               lambda d: f"#{d.id} → {d.read_as}", names=False))
    if lesson.scores:
        rows = [([en(f"draw.group_{s.group}", n=s.n, split=en(f"runs.split_{lesson.split}")
                     if lesson.split != "none" else ""), _percent(s.before), _percent(s.after),
                  "–" if s.after is None else f"{(s.after - s.before) * 100:+.1f} points"], False)
                for s in lesson.scores]
        out += ["<h2>Before and after the class's handwriting</h2>",
                _table(["images", "before", "after", "change"], rows)]
    return "\n".join(out)


def _table(header: list[str], rows: list[tuple[list, bool]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(f"<tr{' class=differs' if marked else ''}>" + "".join(f"<td>{_e(c)}</td>" for c in cells)
                   + "</tr>" for cells, marked in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _percent(value) -> str | None:
    return None if value is None or value != value else f"{value:.2%}"


def _tags_and_notes(runs: list[Run]) -> str:
    """Each run's tags and note, as its owner keeps them on Runs."""
    lines = [(r.name if len(runs) > 1 else "", ", ".join(r.tags), r.notes) for r in runs if r.tags or r.notes]
    return "".join(f"<p>{f'<b>{_e(name)}</b> · ' if name else ''}"
                   f"{f'tags: {_e(tags)}' if tags else ''}{' · ' if tags and note else ''}"
                   f"{f'note: {_e(note)}' if note else ''}</p>" for name, tags, note in lines)


def _results(t: RunTables, runs: list[Run]) -> str:
    outcomes = [str(r.outcome()) for r in runs]  # how each ended, not where the server keeps its checkpoint
    rows = [([r.name, r.status, r.source, r.owner or None, r.epochs_done, r.steps_done, _percent(r.best_val_acc),
              None if r.best_val_loss != r.best_val_loss else r.best_val_loss, r.best_epoch,
              _duration(r.started, r.finished), outcome], False)
            for r, outcome in zip(t.runs.itertuples(), outcomes, strict=True)]
    return "<h2>Results</h2>" + _table(["run", "status", "source", "owner", "epochs", "steps", "best val acc",
                                         "best val loss", "best epoch", "duration", "how it ended"], rows)


def _duration(started, finished) -> str | None:
    if started is None or finished is None or started != started or finished != finished:
        return None
    s = int(round(finished - started))
    return f"{s // 60}:{s % 60:02d}"


def _settings(runs: list[Run]) -> str:
    settings = [dict(r.params) if r.external and r.params else _studio_settings(r.config) for r in runs]
    keys = list(dict.fromkeys(k for s in settings for k in s))
    rows = []
    for k in keys:
        values = [s.get(k) for s in settings]
        rows.append(([k, *values], len({json.dumps(v, sort_keys=True, default=str) for v in values}) > 1))
    note = "<p class='muted'>Marked: the settings that differ.</p>" if len(settings) > 1 else ""
    return "<h2>Settings</h2>" + note + _table(["setting", *[r.name for r in runs]], rows)


def _studio_settings(config: TrainConfig) -> dict[str, object]:
    """A studio run's settings in people's words (the Configure page's names and labels), without those that
    do not apply to its network and without the server's paths."""
    skipped = set(NOT_SHOWN) | unused_fields(config.network)
    return {text("en", f"configure.f_{name}"): _in_words(name, value)
            for name, value in config.to_dict().items() if name not in skipped}


def _in_words(name: str, value: object) -> object:
    if name == "data_dir":
        return PurePath(str(value)).name if value else "the bundled 5,000 MNIST images"
    if name == "init_checkpoint" and value:
        return value if str(value).startswith("run:") else PurePath(str(value)).name
    if isinstance(value, str) and f"labels.{value}" in catalogue("en"):
        return text("en", f"labels.{value}")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "–"
    return value


def _png(image: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(image.astype(np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _evaluation(ev: Evaluation) -> str:
    r = ev.report
    fig = go.Figure(go.Heatmap(z=r.confusion, x=list(range(10)), y=list(range(10)), colorscale="Blues",
                               text=r.confusion, texttemplate="%{text}", hovertemplate="true %{y} → predicted %{x}:"
                               " %{z}<extra></extra>"))
    fig.update_layout(height=480, width=520, xaxis_title="predicted", yaxis_title="true",
                      yaxis_autorange="reversed", xaxis=dict(dtick=1), yaxis=dict(dtick=1),
                      margin=dict(l=40, r=20, t=20, b=40))
    mistakes = "".join(
        f"<figure><img alt='true {r.labels[p]}, read as {r.predicted[p]}' src='{_png(ev.images[r.sample_ids[p]])}'>"
        f"<figcaption>{r.labels[p]} → {r.predicted[p]} ({r.probabilities[p, r.predicted[p]]:.0%})</figcaption>"
        "</figure>" for p in r.misclassified[:MISTAKES_SHOWN])
    return (f"<h2>Evaluation on the {ev.split} split</h2>"
            f"<p>{_e(PurePath(ev.folder).name)}: accuracy <b>{r.accuracy:.2%}</b>, loss {r.loss:.4f}, "
            f"{len(r.misclassified)} of {len(r.labels)} misread.</p>"
            + _figure(fig, "confusion") + "<h3>Most confident mistakes</h3>"
            + f"<div class='mistakes'>{mistakes}</div>")


def _log(store: RunStore, run_id: str) -> str:
    lines = store.logs(run_id, limit=200)
    text = "\n".join(f"{time.strftime('%H:%M:%S', time.localtime(line.t))}  {line.message}" for line in lines)
    # the server's folders stay on the server: the checkpoint and the data folder by their names
    checkpoint, data = store.checkpoint_path(run_id), store.existing(run_id).config.data_dir
    text = text.replace(str(checkpoint), checkpoint.name).replace(str(store.root), "(the run store)")
    if data:
        text = text.replace(str(data).rstrip("/"), PurePath(data).name)
    return f"<h2>Log</h2><pre>{_e(text)}</pre>"
