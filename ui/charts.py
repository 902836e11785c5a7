"""Chart settings the pages share."""
from __future__ import annotations

__all__ = ["quick_tick_labels", "DIGITS", "digit_axis", "RUN_COLOURS", "LEGEND_ON_TOP", "EPOCH_AXIS",
           "facet_titles_without_names", "accuracy_range", "accuracy_axis"]

DIGITS = [str(d) for d in range(10)]


def quick_tick_labels(fig):
    """Tick labels that Plotly draws without checking each one against the chart's edge (ticklabeloverflow
    "allow"). Its default for numeric axes, "hide past div", measures every label of an axis again after
    drawing each one, each measurement a layout of the whole page: on a live Train page that was half of the
    browser's work (docs/performance.md, "A live page in the browser"). The margins grow to hold the labels
    (automargin), so none reaches past the edge to be hidden."""
    fig.update_xaxes(ticklabeloverflow="allow")
    fig.update_yaxes(ticklabeloverflow="allow")
    return fig


def digit_axis(title: str | None) -> dict:
    """An axis that labels all ten digits, however narrow the chart (Plotly thins category labels by itself:
    at 150 % zoom only 0 and 5 were left, and a student could not find 7)."""
    return dict(title=title, type="category", tickmode="array", tickvals=DIGITS, ticktext=DIGITS)


# One distinct colour per run (Plotly's default sequence starts with two near-identical blues at our sizes).
RUN_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf"]
LEGEND_ON_TOP = dict(orientation="h", yanchor="bottom", y=1.06, xanchor="left", x=0)  # never over axis titles
EPOCH_AXIS = dict(tickmode="linear", tick0=1, dtick=1, tickformat="d")  # epochs are whole numbers


def facet_titles_without_names(fig) -> None:
    """Plotly Express titles facets "metric=train loss" (or "=train loss" with an empty label): keep the value."""
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))


def accuracy_range(accuracy: list[float], least: float = 0.01) -> tuple[float, float]:
    """Where an accuracy axis or colour scale runs: from the lowest to the highest value, at least `least` wide
    and never past 0 or 100 %. Plotly widens a range of one value by half of it each way: runs that all scored
    95.6 % showed a colour bar from 60 % to 140 %."""
    low, high = min(accuracy), max(accuracy)
    if high - low < least:
        middle = min(max((low + high) / 2, least / 2), 1.0 - least / 2)
        low, high = min(low, middle - least / 2), max(high, middle + least / 2)
    return max(low, 0.0), min(high, 1.0)


def accuracy_axis(accuracy: list[float], title: str) -> tuple[dict, dict]:
    """Parallel coordinates' last axis, the accuracy, and their line coloured by it, both over the runs' own range
    (accuracy_range): (dimension, line)."""
    low, high = accuracy_range(accuracy)
    return (dict(label=title, values=accuracy, range=[low, high], tickformat=".1%"),
            dict(color=accuracy, cmin=low, cmax=high, colorscale="Viridis", showscale=True,
                 colorbar=dict(tickformat=".1%", title=title)))
