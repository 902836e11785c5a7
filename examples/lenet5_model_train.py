"""The MindSpore tutorial's LeNet-5, trained with Model.train, as people write it outside the studio. Two lines
(marked "studio") make the run appear live in the studio's Train, Compare and Runs pages (docs/track.md).

    python examples/lenet5_model_train.py [--data data/mnist-5k/train] [--epochs 1] [--store DIR_OR_URL]
"""
import argparse
import sys
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn
from mindspore.common.initializer import Normal
from mindspore.train import Model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, without installing
from core.track import StudioCallback  # studio  # noqa: E402


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def create_dataset(data_path, batch_size=32):
    mnist = ds.MnistDataset(data_path, usage="train", shuffle=True)
    images = [vision.Resize((32, 32)), vision.Rescale(1.0 / 255.0, 0.0),
              vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()]
    mnist = mnist.map(images, "image").map(transforms.TypeCast(ms.int32), "label")
    return mnist.batch(batch_size, drop_remainder=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))  # its first paragraph
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "data" / "mnist-5k" / "train"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--name", default="lenet5-tutorial")
    ap.add_argument("--store", default=None, help="the studio's store: a folder or a database URL (default: its own)")
    args = ap.parse_args()
    ms.set_seed(1)
    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    model = Model(net, loss, optimizer, metrics={"accuracy"})
    studio = StudioCallback(name=args.name, config={"network": "lenet5", "lr": 0.01, "momentum": 0.9,  # studio
                                                    "batch_size": 32}, store=args.store)
    model.train(args.epochs, create_dataset(args.data), callbacks=[studio], dataset_sink_mode=False)


if __name__ == "__main__":
    main()
