"""A summary's graph as a tree of name scopes (core/summaries/graph_scopes.py) and the folding HTML drawn from
it (ui/graph_tree.py): scopes in the order the graph reaches them, gradients last, operators with their shapes
and inputs named so they cannot be confused across scopes, and nothing in a name that the HTML would run."""
import re

from core.summaries.graph_scopes import scope_tree
from ui.graph_tree import MOST_ROWS, graph_tree_html

NET = "Default/network-WithLossCell/_backbone-LeNet5"


def node(name, op_type, scope, shape=None, inputs=(), number=0):
    return {"name": name, "op_type": op_type, "scope": scope, "full_name": f"{scope}/{op_type}-op{number}",
            "inputs": list(inputs), "shape": shape}


NODES = [
    node("1", "Load", NET, [6, 1, 5, 5], ["conv1.weight"]),
    node("2", "Conv2D", NET + "/conv1-Conv2d", [32, 6, 28, 28], ["inputs0", "1"]),
    node("3", "ReLU", NET + "/relu-ReLU", [32, 6, 28, 28], ["2"]),
    node("4", "Load", NET + "/fc1-Dense", [120], ["fc1.bias"]),
    node("5", "ReluGrad", "Gradients/" + NET + "/relu-ReLU/Grad_ReLU", [32, 6, 28, 28], ["3"]),
    node("6", "ApplyMomentum", "Default/optimizer-Momentum", [10], ["5"]),
]


def test_scopes_nest_in_the_graphs_order_with_the_gradients_last():
    root = scope_tree(NODES)
    assert [s.name for s in root.scopes] == ["Default", "Gradients"] and root.total == 6
    default = root.scopes[0]
    assert [s.name for s in default.scopes] == ["network-WithLossCell", "optimizer-Momentum"]
    backbone = default.scopes[0].scopes[0]
    assert backbone.path == NET and backbone.total == 4
    assert [s.name for s in backbone.scopes] == ["conv1-Conv2d", "relu-ReLU", "fc1-Dense"]
    conv = backbone.scopes[0].operators[0]
    assert (conv.name, conv.op_type, conv.shape) == ("Conv2D-op0", "Conv2D", "32×6×28×28")
    # an input from another scope carries that scope's name: "Load-op0" alone would be fc1's as well
    assert conv.inputs == ("inputs0", "_backbone-LeNet5/Load-op0")
    assert backbone.types() == {"Load": 2, "Conv2D": 1, "ReLU": 1}


def test_the_html_folds_opens_the_forward_graph_only_and_escapes_names():
    nodes = NODES + [node("7", "Evil<script>", NET + "/conv1-Conv2d", None, ["<img src=x>"], 1)]
    html = graph_tree_html(scope_tree(nodes))
    opened = re.findall(r"<details open data-scope='([^']*)'", html)
    assert opened == ["Default"]
    assert html.count("<details") == len(re.findall(r"data-scope=", html)) == 13
    assert "<script>" not in html and "<img" not in html and "Evil&lt;script&gt;" in html
    assert "· 6 operators</span>" in html  # Default: too many kinds to name in one line
    assert "· 1 operator: ReLU</span>" in html and "· 2 operators: Conv2D, Evil&lt;script&gt;</span>" in html


def test_a_scope_with_very_many_operators_lists_some_and_counts_the_rest():
    many = [node(str(i), "Add", "Default/big", [1], [], i) for i in range(MOST_ROWS + 7)]
    html = graph_tree_html(scope_tree(many))
    assert html.count("<tr>") == MOST_ROWS + 1 and "and 7 more operators in this scope" in html
