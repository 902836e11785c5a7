"""Text that came from a user (a run name, a link's parameters, a file or folder name, an error that quotes
them) shown literally: Streamlit renders Markdown, and Plotly some HTML, so a value like
`[Click here](http://…)` or `![](http://…/pixel.png)` would otherwise become a live link or fetch a remote
image inside the app, for everyone who looks."""
from __future__ import annotations

import html
import re

__all__ = ["literal", "code", "plot_text", "URL_VALUE_MAX"]

URL_VALUE_MAX = 80  # a value from a link is shown at most this long
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character, which Markdown may use
# Streamlit's Markdown also turns bare "http://…", "www.…" and e-mail addresses into links (GFM autolinks),
# escapes or not: an invisible zero-width space inside each trigger keeps them text.
_AUTOLINK = re.compile(r"(?i)(?<=htt)(?=ps?\b)|(?<=ft)(?=p\b)|(?<=ww)(?=w\.)|(?=@)")
ZERO_WIDTH_SPACE = "\u200b"


def literal(value: object, limit: int | None = None) -> str:
    """str(value) for a Markdown context, every ASCII punctuation character backslash-escaped (CommonMark
    shows an escaped character as itself); cut to `limit` characters with an ellipsis when given."""
    text = str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return _PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(ZERO_WIDTH_SPACE, text))


def code(value: object) -> str:
    """str(value) as a Markdown code span (a path, an id): shown as it is, whatever backticks it holds."""
    text = str(value)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"  # CommonMark drops one space on each side


def plot_text(value: object) -> str:
    """str(value) for a Plotly label (legend, axis, hover): tags escaped, so that `<a href>` stays text."""
    return html.escape(str(value), quote=False)
