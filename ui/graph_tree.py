"""An imported graph's name scopes as a tree the reader opens and closes (HTML <details>, so it folds in the
browser with no round trip to the server): each scope says how many operators it holds and of which types; open,
it lists its sub-scopes and a table of its own operators with their output shapes and inputs. The forward graph's
top scope starts open, everything else closed, as MindInsight and TensorBoard's graph dashboard start."""
from __future__ import annotations

from html import escape

from core.summaries.graph_scopes import Scope
from ui.language import t

__all__ = ["graph_tree_html"]

MOST_ROWS = 60   # a scope's own operators listed at most (the rest counted)
FEW_TYPES = 4    # a closed scope names its operators' types when it holds at most this many kinds
INDENT = "margin-left:1.1em"
CELL = "padding:1px 10px 1px 0;text-align:left;vertical-align:top"
NAME_CELL = CELL + ";white-space:nowrap"  # an operator's name, type and shape on one line; its inputs wrap


def graph_tree_html(root: Scope) -> str:
    """The tree under `root` (core.summaries.graph_scopes.scope_tree)."""
    return "".join(_scope(s, opened=i == 0 and not s.name.startswith("Gradients")) for i, s in enumerate(root.scopes)
                   ) + _operators(root)


def _scope(scope: Scope, opened: bool = False) -> str:
    types = scope.types()
    kinds = (": " + ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in types.most_common())) \
        if len(types) <= FEW_TYPES else ""
    head = (f"<b>{escape(scope.name)}</b> <span style='opacity:.7'>· "
            f"{escape(t('train.graph_operators', n=scope.total))}{escape(kinds)}</span>")
    inner = "".join(_scope(s) for s in scope.scopes) + _operators(scope)
    return (f"<details{' open' if opened else ''} data-scope='{escape(scope.path, quote=True)}'>"
            f"<summary style='cursor:pointer'>{head}</summary><div style='{INDENT}'>{inner}</div></details>")


def _operators(scope: Scope) -> str:
    if not scope.operators:
        return ""
    head = "".join(f"<th style='{CELL}'>{escape(t(f'train.graph_col_{c}'))}</th>"
                   for c in ("operator", "type", "shape", "inputs"))
    rows = "".join(f"<tr><td style='{NAME_CELL}'>{escape(o.name)}</td><td style='{NAME_CELL}'>{escape(o.op_type)}</td>"
                   f"<td style='{NAME_CELL}'>{escape(o.shape) or '–'}</td>"
                   f"<td style='{CELL}'>{escape(', '.join(o.inputs)) or '–'}</td></tr>"
                   for o in scope.operators[:MOST_ROWS])
    more = len(scope.operators) - MOST_ROWS
    tail = f"<div style='opacity:.7'>{escape(t('train.graph_more', n=more))}</div>" if more > 0 else ""
    return (f"<table style='font-size:0.85em;border-collapse:collapse;margin:2px 0 6px 0'>"
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{tail}")
