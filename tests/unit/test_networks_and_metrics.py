import numpy as np
import pytest

import mindspore as ms
from core.model.metrics import report
from core.model.network_build import build_network, count_parameters, summarize


@pytest.mark.parametrize("name, params, shapes", [
    ("lenet5", 61706, [(6, 28, 28), (6, 28, 28), (6, 14, 14), (16, 10, 10), (16, 10, 10), (16, 5, 5),
                       (400,), (120,), (120,), (84,), (84,), (10,)]),
    ("mlp", 669706, [(784,), (512,), (512,), (512,), (512,), (10,)]),
])
def test_summary_shapes_and_parameter_counts(name, params, shapes):
    net = build_network(name)
    rows = summarize(net)
    assert [r.output_shape for r in rows] == shapes
    assert sum(r.params for r in rows) == count_parameters(net) == params
    out = net(ms.Tensor(np.zeros((3, 1, 28, 28), np.float32)))
    assert out.shape == (3, 10)


def test_metrics_on_a_known_case():
    labels = np.array([0, 0, 1, 1, 2, 2])
    # predictions: 0, 1, 1, 1, 2, 0
    logits = np.full((6, 3), -5.0)
    for i, p in enumerate([0, 1, 1, 1, 2, 0]):
        logits[i, p] = 5.0 if i != 5 else 9.0
    r = report(logits, labels, loss=0.5, num_classes=3)
    assert r.accuracy == pytest.approx(4 / 6)
    assert r.confusion.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    assert r.precision.tolist() == pytest.approx([0.5, 2 / 3, 1.0])
    assert r.recall.tolist() == pytest.approx([0.5, 1.0, 0.5])
    assert r.f1.tolist() == pytest.approx([0.5, 0.8, 2 / 3])
    assert r.misclassified.tolist() == [5, 1]  # the more confident mistake first
    assert r.cell(2, 0).tolist() == [5]
    assert np.allclose(r.probabilities.sum(1), 1)
