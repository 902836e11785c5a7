"""Sweeps in the browser: the Configure page's Sweep section, and the Sweeps page's pieces (progress, the
settings table, parallel coordinates linked to the curves, seed bands, Promote)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.config import TrainConfig, field_text
from core.messages import Explained
from core.runs.launch import launcher
from core.runs import sweeps
from core.runs.store import RunStore
from ui.charts import EPOCH_AXIS, RUN_COLOURS, accuracy_axis
from ui.identity import actions, refused_here
from ui.language import say, t
from ui.present import for_room
from ui.session import get_store
from ui.text import literal

__all__ = ["sweep_form", "progress", "settings_table", "linked_views", "importance", "promote", "SWEEP_CHOSEN"]

SWEEP_CHOSEN = "sweep_id"


def _default_values(config: TrainConfig, name: str, sampler: str) -> str:
    """A starting point for a field's values, around the current setting, that the search takes as it is: a grid
    takes lists, random and TPE a log range of learning rates."""
    v = getattr(config, name)
    if name == "learning_rate":
        low, high = v / 10, min(v * 10, 10)
        return f"{low:g},{v:g},{high:g}" if sampler == "grid" else f"{low:g}:{high:g}:log"
    if isinstance(v, bool):
        return "true,false"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{field_text(name, v)},{field_text(name, v * 2 if isinstance(v, int) else v / 2)}"
    return field_text(name, v)


def sweep_form(store: RunStore, config: TrainConfig) -> None:
    """Choose the settings to vary and how; Start sweep queues its first settings and opens the Sweeps page."""
    if refused_here("sweep"):
        return
    st.caption(t("sweep.explain"))
    # two settings by default: the page then shows which of them mattered most (parameter importance)
    names = st.multiselect(t("sweep.vary"), sweeps.SWEEPABLE, default=["learning_rate", "batch_size"], key="sweep_vary",
                           format_func=lambda n: t(f"configure.f_{n}"))
    a, b, c, d = st.columns(4)
    sampler = a.selectbox(t("sweep.sampler"), sweeps.SAMPLERS, key="sweep_sampler",
                          format_func=lambda s: t(f"sweep.sampler_{s}"))
    # values per search (their own keys): switching the search offers its own defaults, and keeps what was typed
    texts = {n: st.text_input(t("sweep.values", name=t(f"configure.f_{n}")), value=_default_values(config, n, sampler),
                              key=f"sweep_values_{n}_{sampler}", help=t("sweep.values_help")) for n in names}
    trials = b.number_input(t("sweep.trials"), 0, sweeps.MAX_TRIALS, 0 if sampler == "grid" else 8,
                            key=f"sweep_trials_{sampler}", help=t("sweep.trials_help"))
    if int(trials) == 0:  # said under the box, not in its help alone
        b.caption(t("sweep.trials_every" if sampler == "grid" else "sweep.trials_none"))
    seeds = c.number_input(t("sweep.seeds"), 1, sweeps.MAX_SEEDS, 1, key="sweep_seeds", help=t("sweep.seeds_help"))
    prune = d.checkbox(t("sweep.prune"), key="sweep_prune", help=t("sweep.prune_help"))
    name = st.text_input(t("sweep.name"), key="sweep_name", max_chars=60)
    if st.button("🔍 " + t("sweep.start"), key="sweep_start", type="primary"):
        try:
            spec = sweeps.SweepSpec(config, tuple(sweeps.parse_space(f"{n}={v}") for n, v in texts.items()),
                                    sampler, int(trials), int(seeds), prune, name.strip())
            act = actions()
            sweep_id = sweeps.create(store, spec, submitter=act.person.ident)
            act.did("sweep", target=spec.name or sweep_id, detail=sweep_id)
        except Explained as e:
            st.error(say(e))
            return
        launcher.dispatcher_for(store).tick()
        st.session_state[SWEEP_CHOSEN] = sweep_id
        st.switch_page("app_pages/sweeps.py")


def progress(info: sweeps.SweepInfo, found: list[sweeps.Setting]) -> None:
    counts = {s: sum(x.state == s for x in found) for s in ("completed", "running", "queued", "pruned", "failed")}
    planned = info.spec.planned_trials
    done = counts["completed"] + counts["pruned"] + counts["failed"]
    st.progress(min(done / planned, 1.0) if planned else 0.0,
                text=t("sweep.progress", done=done, planned=planned, seeds=info.spec.seeds, **counts))


def _values_text(values: dict) -> str:
    return ", ".join(f"{k} = {field_text(k, v)}" for k, v in values.items())


def settings_table(found: list[sweeps.Setting]) -> None:
    """Every setting, best first: its values, state, the seeds' mean, min, max and spread."""
    rows = []
    for i, s in enumerate(found):
        spread = s.spread
        rows.append({
            t("sweep.col_rank"): ("⭐ " if i == 0 and s.mean is not None else "") + str(i + 1),
            t("sweep.col_setting"): _values_text(s.values), t("sweep.col_state"): t(f"status.{s.state}"),
            t("sweep.col_mean"): f"{s.mean:.2%}" if s.mean is not None else "–",
            t("sweep.col_min_max"): f"{spread[0]:.2%} – {spread[1]:.2%}" if spread else "–",
            t("sweep.col_std"): f"{spread[2] * 100:.2f}" if spread else "–",
            t("sweep.col_seeds"): f"{len(s.accuracies)}/{len(s.runs)}"})
    st.table(pd.DataFrame(rows).set_index(t("sweep.col_rank")))


def _numeric(values: list) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _selection(info: sweeps.SweepInfo) -> dict[str, tuple]:
    """A range (numbers) or a set (choices) per varied setting, over what the sweep declared (its list or
    range, whether asked for yet or not), chosen with widgets under the chart."""
    chosen: dict[str, tuple] = {}
    cols = st.columns(max(len(info.spec.spaces), 1))
    for col, space in zip(cols, info.spec.spaces, strict=False):
        label = t("sweep.select", name=t(f"configure.f_{space.name}"))
        bounds = _bounds(space)
        if bounds is not None:
            chosen[space.name] = col.slider(label, *bounds, bounds, key=f"sel_{info.id}_{space.name}",
                                            format="%.4g")
        else:
            options = sorted({field_text(space.name, v) for v in space.values})
            chosen[space.name] = tuple(col.multiselect(label, options, default=options,
                                                       key=f"sel_{info.id}_{space.name}"))
    return chosen


def _bounds(space: sweeps.Space) -> tuple[float, float] | None:
    """A numeric setting's range as the sweep declared it (its range, or its list's ends), not only as far as
    the settings asked so far reach: a sweep asks for at most ASK_AT_ONCE settings at a time, and bounds that
    widened as more arrived would make the slider a new widget, dropping the range a person had chosen on it.
    None: choices."""
    if space.low is not None and space.high is not None:  # a range
        return float(space.low), float(space.high)
    values = list(space.values)
    if _numeric(values) and len(set(values)) > 1:
        return float(min(values)), float(max(values))
    return None


def _kept(s: sweeps.Setting, chosen: dict[str, tuple]) -> bool:
    for name, pick in chosen.items():
        v = s.values[name]
        if isinstance(pick, tuple) and len(pick) == 2 and all(isinstance(p, float) for p in pick) and _numeric([v]):
            if not pick[0] - 1e-12 <= v <= pick[1] + 1e-12:
                return False
        elif field_text(name, v) not in pick:
            return False
    return True


def _log_spaced(space: sweeps.Space, values: list) -> bool:
    """A log range, or numbers over two decades or more (0.001, 0.01, 0.1): drawn on a log axis."""
    return space.log or (_numeric(values) and bool(values) and min(values) > 0 and max(values) / min(values) >= 100)


def _log_ticks(values: list) -> tuple[list[float], list[str]]:
    """Decade ticks (log10 positions, their values) covering the values."""
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    return [float(k) for k in range(lo, hi + 1)], [f"{10.0 ** k:g}" for k in range(lo, hi + 1)]


FEW_VALUES = 8  # values tried on a linear axis that are ticked one by one


def _dimension(space: sweeps.Space, done: list[sweeps.Setting], pick) -> dict:
    """One axis of the parallel coordinates: numbers (on a log scale where log-spaced) or named choices."""
    values = [s.values[space.name] for s in done]
    label = t(f"configure.f_{space.name}")
    if not _numeric(values):
        labels = sorted({field_text(space.name, v) for v in values})
        return dict(label=label, tickvals=list(range(len(labels))), ticktext=labels,
                    values=[labels.index(field_text(space.name, v)) for v in values])
    picked = list(pick) if isinstance(pick, tuple) and len(pick) == 2 and isinstance(pick[0], float) else None
    if not _log_spaced(space, values):
        distinct = sorted({float(v) for v in values})
        # a few values tried (a grid's 64 and 128): ticks at them, not Plotly's round 70…120 between them
        ticks = dict(tickvals=distinct, ticktext=[f"{v:g}" for v in distinct]) if len(distinct) <= FEW_VALUES else {}
        return dict(label=label, values=[float(v) for v in values], constraintrange=picked, **ticks)
    tickvals, ticktext = _log_ticks(values)
    return dict(label=label + " (log)", values=[math.log10(v) for v in values], tickvals=tickvals,
                ticktext=ticktext, constraintrange=[math.log10(max(p, 1e-300)) for p in picked] if picked else None)


def _parcoords(info: sweeps.SweepInfo, found: list[sweeps.Setting], chosen: dict) -> go.Figure:
    done = [s for s in found if s.mean is not None]
    if len(info.spec.spaces) == 1:
        return _one_setting(info.spec.spaces[0], done)
    dims = [_dimension(space, done, chosen.get(space.name)) for space in info.spec.spaces]
    means = [s.mean for s in done if s.mean is not None]  # done: each of them has one
    dimension, line = accuracy_axis(means, t("sweep.col_mean"))
    fig = go.Figure(go.Parcoords(line=line, dimensions=[*dims, dimension], labelfont=dict(size=15),
                                 tickfont=dict(size=13)))
    fig.update_layout(height=340, margin=dict(l=60, r=40, t=50, b=20))
    return fig


def _error_bar(setting: sweeps.Setting) -> tuple[float, float]:
    """How far the seeds' worst and best accuracy lie below and above their mean (0, 0: none finished)."""
    mean, spread = setting.mean, setting.spread
    if mean is None or spread is None:
        return 0.0, 0.0
    return mean - spread[0], spread[1] - mean


def _one_setting(space: sweeps.Space, done: list[sweeps.Setting]) -> go.Figure:
    """One varied setting: its values against the seeds' mean accuracy (min to max as error bars), on a log
    axis where the values are log-spaced (parallel coordinates of one setting are two pale axes)."""
    values = [s.values[space.name] for s in done]
    numeric = _numeric(values)
    x = [float(v) if numeric else field_text(space.name, v) for v in values]
    above = [_error_bar(s)[1] for s in done]
    below = [_error_bar(s)[0] for s in done]
    fig = go.Figure(go.Scatter(x=x, y=[s.mean for s in done], mode="markers",
                               marker=dict(size=12, color=RUN_COLOURS[0]),
                               error_y=dict(type="data", symmetric=False, array=above, arrayminus=below)))
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(title=t(f"configure.f_{space.name}"),
                                 type="log" if numeric and _log_spaced(space, values) else None),
                      yaxis=dict(title=t("sweep.col_mean"), tickformat=".1%"))
    return fig


def _curves(store: RunStore, shown: list[sweeps.Setting], best: sweeps.Setting | None) -> go.Figure:
    """Validation accuracy by epoch: each setting's seeds as mean ± std (a band), the best one thicker."""
    fig = go.Figure()
    for i, s in enumerate(shown):
        per_run = [{m.epoch: m.val_acc for m in store.epochs(r.id) if m.val_acc is not None} for r in s.runs]
        epochs = sorted(set().union(*per_run))
        if not epochs:
            continue
        values = [[run[e] for run in per_run if e in run] for e in epochs]
        mean = np.array([np.mean(v) for v in values])
        std = np.array([np.std(v) for v in values])
        colour = RUN_COLOURS[i % len(RUN_COLOURS)]
        name = _values_text(s.values)
        if len(s.runs) > 1 and len(epochs) <= 2:  # a band of one or two points is a faint blot: error bars
            fig.add_trace(go.Scatter(x=epochs, y=mean, mode="markers", name=name, legendgroup=name,
                                     marker=dict(color=colour, size=12 if best is not None and s.trial == best.trial
                                                 else 9),
                                     error_y=dict(type="data", array=std, thickness=2, width=8)))
            continue
        if len(s.runs) > 1:
            fig.add_trace(go.Scatter(x=epochs + epochs[::-1], y=list(mean + std) + list((mean - std)[::-1]),
                                     fill="toself", fillcolor=colour, opacity=0.18, line=dict(width=0),
                                     hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(x=epochs, y=mean, mode="lines+markers", name=name, legendgroup=name,
                                 line=dict(color=colour, width=5 if best is not None and s.trial == best.trial else 2)))
    fig.update_layout(height=380, xaxis=dict(EPOCH_AXIS, title=t("sweep.epoch")),
                      yaxis=dict(title=t("sweep.val_acc"), tickformat=".0%"), margin=dict(l=10, r=10, t=10, b=10))
    return fig


def linked_views(store: RunStore, info: sweeps.SweepInfo, found: list[sweeps.Setting]) -> None:
    """Parallel coordinates of the finished settings and their curves, both following the ranges chosen
    under the chart (a setting outside any range is left out of the curves and dimmed on the axes)."""
    best = next((s for s in found if s.mean is not None), None)
    chart = st.container()
    chosen = _selection(info)
    chart.plotly_chart(for_room(_parcoords(info, found, chosen)), width="stretch", key=f"parcoords_{info.id}")
    shown = [s for s in found if _kept(s, chosen)]
    st.caption(t("sweep.shown", n=len(shown), total=len(found), seeds=info.spec.seeds))
    st.plotly_chart(for_room(_curves(store, shown, best)), width="stretch", key=f"sweep_curves_{info.id}")


@st.cache_data(max_entries=32, show_spinner=False)
def _importances(store_key: str, sweep_id: str, finished: int) -> dict[str, float] | None:
    """Computed once per sweep and number of finished settings (a fit of fANOVA's forests: ~0.1 s)."""
    store = get_store()
    info = next(i for i in sweeps.list_sweeps(store) if i.id == sweep_id)
    return sweeps.importances(store, info)


def importance(store: RunStore, info: sweeps.SweepInfo, found: list[sweeps.Setting]) -> None:
    """Which varied setting mattered most (Optuna's parameter importance), once two or more vary."""
    if len(info.spec.spaces) < 2:
        return
    weights = _importances(store.key, info.id, sum(s.mean is not None for s in found))
    st.subheader(t("sweep.importance"))
    if weights is None:
        st.caption(t("sweep.importance_wait", n=sweeps.MIN_TRIALS_FOR_IMPORTANCE))
        return
    names = [t(f"configure.f_{k}") for k in weights]
    fig = go.Figure(go.Bar(x=list(weights.values()), y=names, orientation="h", texttemplate="%{x:.0%}",
                           textposition="auto", marker_color=RUN_COLOURS[0]))
    fig.update_layout(height=80 + 40 * len(weights), xaxis=dict(tickformat=".0%", range=[0, 1]),
                      yaxis=dict(autorange="reversed"), margin=dict(l=10, r=10, t=10, b=10))
    st.plotly_chart(for_room(fig), width="stretch", key=f"importance_{info.id}")
    st.caption(t("sweep.importance_help"))


def promote(store: RunStore, info: sweeps.SweepInfo, found: list[sweeps.Setting]) -> None:
    """Re-run the best setting with more epochs (a normal queued run)."""
    best = next((s for s in found if s.mean is not None), None)
    if best is None:
        return
    epochs = st.number_input(t("sweep.promote_epochs"), 1, 1000, info.spec.base.epochs * 3, key=f"promote_{info.id}")
    if st.button("🏆 " + t("sweep.promote", setting=_values_text(best.values)), key=f"promote_btn_{info.id}"):
        config = info.spec.base.with_(**best.values, epochs=int(epochs))
        try:
            run_id = actions().start(config, name=t("sweep.promoted_name", name=info.name)[:80])
        except (ValueError, OSError) as e:  # too many of this person's runs waiting, a store that cannot be written
            st.error(t("train.could_not_start", error=say(e)))
            return
        st.session_state["run_id"] = run_id
        st.switch_page("app_pages/train.py")
    st.caption(t("sweep.promote_help", name=literal(info.name)))
