"""Chart settings the pages share."""
from __future__ import annotations

__all__ = ["DIGITS", "digit_axis"]

DIGITS = [str(d) for d in range(10)]


def digit_axis(title: str | None) -> dict:
    """An axis that labels all ten digits, however narrow the chart (Plotly thins category labels by itself:
    at 150 % zoom only 0 and 5 were left, and a student could not find 7)."""
    return dict(title=title, type="category", tickmode="array", tickvals=DIGITS, ticktext=DIGITS)
