"""The learning-rate schedule as a small chart (Configure) and the rate in force now (Train's live view)."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core.app.model_service import MINDSPORE_LOCK
from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.data.idx import DataError
from core.live_settings import LEARNING_RATE
from core.model.lr_schedules import planned_rates, rate_at, rate_changes, steps_per_epoch
from core.runs.rows import Run
from ui.curves import History
from ui.language import t
from ui.present import for_room

__all__ = ["schedule_chart", "current_learning_rate"]


@st.cache_data(max_entries=64)
def _rates(config: TrainConfig, per_epoch: int) -> list[float]:
    with MINDSPORE_LOCK:  # the schedules come from mindspore.nn (pure Python, imported once)
        return planned_rates(config, per_epoch).tolist()


def schedule_chart(config: TrainConfig) -> None:
    """The rate of every step of the run this config describes (nothing for a constant rate without changes)."""
    if config.lr_schedule == "constant" and not rate_changes(config):
        return
    try:
        per_epoch = steps_per_epoch(config, validate_mnist_dir(config.data_dir).train_count)
    except DataError:
        return  # the Data page says what is wrong with the folder
    rates = _rates(config, per_epoch)
    fig = go.Figure(go.Scatter(x=list(range(1, len(rates) + 1)), y=rates, mode="lines", line=dict(width=2)))
    fig.update_layout(height=170, margin=dict(l=10, r=10, t=10, b=10), xaxis_title=t("configure.step_axis"),
                      yaxis_title=t("configure.lr_axis"))
    st.plotly_chart(for_room(fig), width="stretch", key="lr_schedule_chart", config={"staticPlot": True})
    st.caption(t("configure.schedule_caption", steps=len(rates)))


def current_learning_rate(run: Run, history: History) -> float:
    """The rate of the run's next step: its schedule, with the changes made or replayed so far."""
    changes = tuple((c.step, c.value) for c in history.setting_changes if c.setting == LEARNING_RATE)
    if run.config.lr_schedule == "constant":
        return changes[-1][1] if changes else run.config.learning_rate
    per_epoch = max(run.total_steps // run.config.epochs, 1) if run.total_steps else 1
    with MINDSPORE_LOCK:
        return rate_at(run.config, per_epoch, run.step + 1, changes)
