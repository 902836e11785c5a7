"""A summary's graph as a tree of name scopes, as MindInsight and TensorBoard's graph dashboard group it: each
scope ("Default/network-WithLossCell/_backbone-LeNet5/conv1-Conv2d") holds its sub-scopes and its own operators
with their types, output shapes and inputs; the forward scopes before the gradients'. Reads the operators as the
importer keeps them (core.summaries.content.GraphNode as dicts)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Operator", "Scope", "scope_tree"]


@dataclass(frozen=True)
class Operator:
    """One operator: its short name ("Conv2D-op0"), type, output shape ("32×6×28×28", "" if unknown) and the
    names of its inputs (other operators by short name, parameters and constants as the graph names them)."""
    name: str
    op_type: str
    shape: str
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class Scope:
    """A name scope: its last part, full path, sub-scopes, own operators, and how many operators it holds in all."""
    name: str
    path: str
    scopes: tuple[Scope, ...]
    operators: tuple[Operator, ...]
    total: int

    def types(self) -> Counter[str]:
        """Operators by type, in this scope and every scope below it."""
        counts = Counter(o.op_type for o in self.operators)
        for s in self.scopes:
            counts.update(s.types())
        return counts


def scope_tree(nodes: list[dict]) -> Scope:
    """The root scope ("" path) of the graph's operators."""
    by_name = {n["name"]: n for n in nodes}
    members: dict[str, list[Operator]] = {}
    for n in nodes:
        shape = "×".join(str(d) for d in n["shape"]) if n.get("shape") else ""
        inputs = tuple(_input_name(by_name[i], n["scope"]) if i in by_name else i for i in n.get("inputs", ()))
        members.setdefault(n["scope"], []).append(Operator(_short_name(n), n["op_type"], shape, inputs))
    return _scope("", "", members)


def _short_name(node: dict) -> str:
    full = node.get("full_name") or node["name"]
    return full.rsplit("/", 1)[-1]


def _input_name(node: dict, scope: str) -> str:
    """An input as read from `scope`: its short name there, else with its own scope's last part (operators are
    numbered per scope: "fc1-Dense/Load-op0" is not "_backbone-LeNet5/Load-op0")."""
    if node["scope"] == scope:
        return _short_name(node)
    return node["scope"].rsplit("/", 1)[-1] + "/" + _short_name(node)


def _scope(name: str, path: str, members: dict[str, list[Operator]]) -> Scope:
    prefix = path + "/" if path else ""
    below = dict.fromkeys(p[len(prefix):].split("/", 1)[0] for p in members if p.startswith(prefix) and p != path and p)
    # in the order the graph first reaches them (conv1, relu, max_pool2d, conv2, ...), the gradients last
    children = tuple(_scope(child, prefix + child, members)
                     for child in sorted(below, key=lambda c: c.startswith("Gradients")))
    own = tuple(members.get(path, ()))
    return Scope(name, path, children, own, len(own) + sum(c.total for c in children))
