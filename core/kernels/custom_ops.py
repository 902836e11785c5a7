"""The project's C++ operators as MindSpore primitives (ops.Custom, func_type="aot"), each with its gradient.

LeNet-5 spent a third of its operator time in MindSpore's max-pool gradient and a quarter in the convolutions'
filter gradients, the first convolution's most (oneDNN's plain NCHW kernels and a GEMM on a 1-channel image, by
MindSpore's profiler; docs/performance.md), and with those replaced, the second convolution was the largest
part left. Three operators replace them:
- relu_pool(x, b) = max(0, maxpool2x2(x + b)): bias, ReLU and a 2x2/stride-2 max pool in one pass (and one pass
  back), replacing BiasAdd, ReLU, MaxPool and their three gradients. Each window's gradient goes to its first
  maximum (row by row), as MindSpore's MaxPoolGrad sends it, and only where the output is positive, as ReluGrad
  lets it through: the forward and input gradients are MindSpore's bit for bit.
- conv_1ch(x, w): a convolution of a one-channel image with "same" zero padding and stride 1 (LeNet-5's first),
  with its filter and input gradients; MindSpore drops the input gradient from a training graph that does not
  use it.
- conv_valid(x, w): a convolution of C channels with no padding and stride 1 (LeNet-5's second), with both
  gradients, vectorized over 16 output channels (forward, filter gradient) and 16 columns (input gradient).
Sums run in another order than oneDNN's: tests/process/test_custom_kernels.py holds every result within float tolerance
of MindSpore's own operators, and the weights after training within a stated tolerance."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.kernels.library import library

__all__ = ["CustomOps", "custom_ops"]


@dataclass(frozen=True)
class CustomOps:
    relu_pool: Any  # (x: N,C,H,W float32, b: C) -> max(0, maxpool2x2(x + b))
    conv_1ch: Any   # (x: N,1,H,W float32, w: O,1,K,K with K 3, 5 or 7) -> N,O,H,W
    conv_valid: Any  # (x: N,C,H,W float32, w: O,C,K,K with K 3 or 5) -> N,O,H-K+1,W-K+1


def _pooled_shape(x, b):
    return (x[0], x[1], x[2] // 2, x[3] // 2)


def _conv_shape(x, w):
    return (x[0], w[0], x[2], x[3])


def _valid_shape(x, w):
    return (x[0], w[0], x[2] - w[2] + 1, x[3] - w[3] + 1)


def _first(*inputs):
    return inputs[0]


def _third(*inputs):
    return inputs[2]


def _first_two(*inputs):
    return (inputs[0], inputs[1])


@lru_cache(maxsize=1)
def custom_ops() -> CustomOps | None:
    """The operators, made once per process; None when the library cannot be had (library() has said why)."""
    path = library()
    if path is None:
        return None
    from mindspore import ops  # deferred: callers set the process's oneDNN settings before importing mindspore

    def aot(name: str, shape, dtype, bprop=None):
        return ops.Custom(f"{path}:{name}", out_shape=shape, out_dtype=dtype, func_type="aot", bprop=bprop)

    relu_pool_grad = aot("relu_pool_bwd", _first_two, _first_two)
    conv_grad_filter = aot("conv_1ch_grad_filter", _third, _first)
    conv_grad_input = aot("conv_1ch_grad_input", _first, _first)

    valid_grad_filter = aot("conv_valid_grad_filter", _third, _first)
    valid_grad_input = aot("conv_valid_grad_input", _first, _first)

    def relu_pool_bprop(x, b, out, dout):
        return relu_pool_grad(x, b, dout)

    def conv_bprop(x, w, out, dout):
        return conv_grad_input(x, w, dout), conv_grad_filter(x, dout, w)

    def valid_bprop(x, w, out, dout):
        return valid_grad_input(x, w, dout), valid_grad_filter(x, dout, w)

    return CustomOps(relu_pool=aot("relu_pool_fwd", _pooled_shape, _first, relu_pool_bprop),
                     conv_1ch=aot("conv_1ch_fwd", _conv_shape, _first, conv_bprop),
                     conv_valid=aot("conv_valid_fwd", _valid_shape, _first, valid_bprop))
