"""Inside a network, for one input: every layer's output (activation maps of LeNet-5's convolutions, the
MLP's hidden units), a saliency map (the gradient of the predicted class's score with respect to the input
pixels, via ms.grad) and the first layer's learned filters. Works in Graph and PyNative mode; callers in
the app serialise MindSpore calls (core.app.model_service)."""
from __future__ import annotations

from dataclasses import dataclass

import mindspore as ms
import numpy as np

from core.data.pipeline import preprocess_numpy
from core.model.metrics import softmax


@dataclass(frozen=True)
class Inspection:
    probs: np.ndarray                          # (10,)
    predicted: int
    layers: list[tuple[str, np.ndarray]]       # (name, output without the batch axis), input to output
    saliency: np.ndarray                       # (28, 28), |d score / d pixel|, in the network's input units
    filters: np.ndarray                        # (k, h, w): conv1 kernels, or the first Dense rows as 28x28


def _layers(net):
    return [(f"features.{i} {type(c).__name__}", c) for i, c in enumerate(net.features.cell_list)] + \
           [(f"classifier.{i} {type(c).__name__}", c) for i, c in enumerate(net.classifier.cell_list)]


def inspect(net, image: np.ndarray) -> Inspection:
    """Everything above for one uint8 (28, 28) image."""
    net.set_train(False)
    x = ms.Tensor(preprocess_numpy(image[None]))
    outputs, h = [], x
    for name, layer in _layers(net):
        h = layer(h)
        outputs.append((name, h.asnumpy()[0]))
    logits = outputs[-1][1]
    predicted = int(np.argmax(logits))
    return Inspection(probs=softmax(logits[None])[0], predicted=predicted, layers=outputs,
                      saliency=np.abs(class_gradient(net, x, predicted))[0, 0], filters=first_filters(net))


def class_gradient(net, x, cls: int) -> np.ndarray:
    """d logits[0, cls] / d x, same shape as x. The gradient function is built once per network (the class
    is an input, not a constant), so that Graph mode compiles it once."""
    grad = getattr(net, "_studio_class_grad", None)
    if grad is None:
        def score(inp, mask):
            return (net(inp) * mask).sum()
        grad = ms.grad(score, grad_position=0)
        net._studio_class_grad = grad
    mask = np.zeros((1, 10), np.float32)
    mask[0, cls] = 1.0
    return grad(x, ms.Tensor(mask)).asnumpy()


def first_filters(net) -> np.ndarray:
    first = next(p for p in net.trainable_params() if p.name.endswith("weight"))
    w = first.asnumpy()
    if w.ndim == 4:                    # conv: (out, in, kh, kw) -> (out, kh, kw)
        return w[:, 0]
    return w[:16].reshape(-1, 28, 28)  # Dense(784, 512): the first 16 units' input weights as images
