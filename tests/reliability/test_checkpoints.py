import os

import numpy as np
import pytest

import mindspore as ms
from core.model import checkpoint
from core.model.checkpoint import CheckpointError
from core.config import TrainConfig
from core.model.network_build import build_network
from core.training.weight_arrays import snapshot


def test_round_trip_is_bit_identical_and_carries_the_config(tmp_path):
    cfg = TrainConfig(network="mlp", optimizer="adam", learning_rate=0.002, seed=7)
    net = build_network("mlp")
    path = checkpoint.save(net, cfg, tmp_path / "m.ckpt", {"epoch": 4})
    loaded = checkpoint.load(path)
    assert loaded.config == cfg and loaded.meta == {"epoch": 4}
    before, after = snapshot(net), snapshot(loaded.net)
    assert before.keys() == after.keys()
    assert all(before[k].tobytes() == after[k].tobytes() for k in before)


def test_a_plain_mindspore_checkpoint_is_recognised(tmp_path):
    net = build_network("lenet5")
    ms.save_checkpoint(net, str(tmp_path / "plain.ckpt"))
    assert checkpoint.load(tmp_path / "plain.ckpt").config.network == "lenet5"


def test_save_is_atomic_when_writing_fails(tmp_path, monkeypatch):
    cfg, path = TrainConfig(network="mlp"), tmp_path / "m.ckpt"
    checkpoint.save(build_network("mlp"), cfg, path)
    good = path.read_bytes()

    def half_write(net, file, **kw):
        with open(file, "wb") as f:
            f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ms, "save_checkpoint", half_write)
    with pytest.raises(OSError):
        checkpoint.save(build_network("mlp"), cfg, path)
    assert path.read_bytes() == good and os.listdir(tmp_path) == ["m.ckpt"]


def test_wrong_architecture_is_refused_with_the_reason(tmp_path):
    ms.save_checkpoint(build_network("mlp"), str(tmp_path / "mlp.ckpt"),
                       append_dict={checkpoint.CONFIG_KEY: TrainConfig(network="lenet5").to_json()})
    with pytest.raises(CheckpointError, match="does not fit the lenet5 network: missing"):
        checkpoint.load(tmp_path / "mlp.ckpt")


def test_other_number_of_classes_is_refused(tmp_path):
    ms.save_checkpoint(build_network("lenet5", num_classes=5), str(tmp_path / "five.ckpt"),
                       append_dict={checkpoint.CONFIG_KEY: TrainConfig(network="lenet5").to_json()})
    with pytest.raises(CheckpointError, match=r"classifier.5.weight \(\[5, 84\] instead of \[10, 84\]\)"):
        checkpoint.load(tmp_path / "five.ckpt")
    ms.save_checkpoint(build_network("lenet5", num_classes=5), str(tmp_path / "plain5.ckpt"))
    with pytest.raises(CheckpointError, match=r"does not match any of the studio's networks \(lenet5, mlp, resnet; its parameters"):
        checkpoint.load(tmp_path / "plain5.ckpt")


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (np.random.default_rng(0).bytes(5000), "not a readable MindSpore checkpoint"),
    (b"hello, I am a text file\n" * 10, "not a readable MindSpore checkpoint"),
])
def test_corrupt_files_are_refused(tmp_path, content, message):
    (tmp_path / "bad.ckpt").write_bytes(content)
    with pytest.raises(CheckpointError, match=message):
        checkpoint.load(tmp_path / "bad.ckpt")


def test_a_deleted_file_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="no longer exists"):
        checkpoint.load(tmp_path / "gone.ckpt")
