"""Other ways to write LeNet-5's first convolution and its max pooling, for bench/kernel_alternatives.py (Graph
mode parses source files, so they live in a real file). Same parameters and names as core.networks."""
import mindspore.nn as nn
import mindspore.ops as ops


class Conv1(nn.Conv2d):
    """The project's first convolution: oneDNN's (1 -> 6 channels, 5x5, padding 2)."""

    def __init__(self):
        super().__init__(1, 6, 5, pad_mode="pad", padding=2, has_bias=True)


class Conv1Im2col(Conv1):
    """The same convolution as 25 shifted views of the padded input and one matrix product."""

    def construct(self, x):
        n = x.shape[0]
        xp = ops.pad(x, (2, 2, 2, 2))
        cols = ops.concat([xp[:, :, k // 5:k // 5 + 28, k % 5:k % 5 + 28] for k in range(25)], 1)
        out = ops.matmul(self.weight.reshape(6, 25), cols.reshape(n, 25, 784))
        return out.reshape(n, 6, 28, 28) + self.bias.reshape(1, 6, 1, 1)


class MaxPool(nn.MaxPool2d):
    """The project's pooling: MaxPool and MaxPoolGrad (2x2, stride 2)."""

    def __init__(self):
        super().__init__(kernel_size=2, stride=2)


class MaxPoolArgmax(nn.Cell):
    """MaxPoolWithArgmaxV2: its gradient scatters through the kept indices."""

    def __init__(self):
        super().__init__()
        self.op = ops.MaxPoolWithArgmaxV2(kernel_size=2, strides=2)

    def construct(self, x):
        return self.op(x)[0]


class MaxPoolReduce(nn.Cell):
    """Each 2x2 window moved to the last axis, then its maximum (ArgMaxWithValue and a scatter backwards)."""

    def construct(self, x):
        n, c, h, w = x.shape
        y = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
        return y.max(axis=4)


class LeNet5With(nn.Cell):
    """core.networks.lenet5 with the first convolution and the pooling given."""

    def __init__(self, conv1, pool):
        super().__init__()
        self.features = nn.SequentialCell([
            conv1(), nn.ReLU(), pool(),
            nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True), nn.ReLU(), pool(),
        ])
        self.classifier = nn.SequentialCell([
            nn.Flatten(), nn.Dense(16 * 5 * 5, 120), nn.ReLU(), nn.Dense(120, 84), nn.ReLU(), nn.Dense(84, 10),
        ])

    def construct(self, x):
        return self.classifier(self.features(x))
