"""An MLP trained by a functional loop (value_and_grad + optimizer), as the MindSpore tutorials write one. Four
lines (marked "studio") record the run into the studio live, and let its Stop and Pause reach the loop
(docs/track.md).

    python examples/mlp_value_and_grad.py [--data data/mnist-5k/train] [--epochs 3] [--store DIR_OR_URL]
"""
import argparse
import sys
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, without installing
from core.track import track_run  # studio  # noqa: E402


def create_dataset(data_path, batch_size=64):
    mnist = ds.MnistDataset(data_path, usage="train", shuffle=True)
    images = [vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()]
    mnist = mnist.map(images, "image").map(transforms.TypeCast(ms.int32), "label")
    return mnist.batch(batch_size)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))  # its first paragraph
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "data" / "mnist-5k" / "train"))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--name", default="mlp-value-and-grad")
    ap.add_argument("--store", default=None, help="the studio's store: a folder or a database URL (default: its own)")
    args = ap.parse_args()
    ms.set_seed(1)
    net = nn.SequentialCell(nn.Flatten(), nn.Dense(784, 128), nn.ReLU(), nn.Dense(128, 10))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=args.lr)

    def forward(data, label):
        return loss_fn(net(data), label)
    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    dataset = create_dataset(args.data)
    with track_run(name=args.name, config=vars(args), store=args.store) as run:  # studio
        for epoch in range(args.epochs):
            net.set_train()
            for data, label in dataset.create_tuple_iterator():
                loss = train_step(data, label)
                run.log_step(loss=loss, samples=label.shape[0])  # studio
                if run.should_stop():  # studio: the studio's Stop ends the loop; its Pause waits here
                    break
            if run.should_stop():
                break
            print(f"epoch {epoch + 1}: loss {float(loss.asnumpy()):.4f}")
            run.log_epoch()  # studio

if __name__ == "__main__":
    main()
