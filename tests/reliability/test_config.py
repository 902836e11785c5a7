import math
import os

import pytest

from core.config import ConfigError, TrainConfig, parse_field


def test_defaults_are_valid():
    assert TrainConfig().errors() == {}


@pytest.mark.parametrize("field, value, fragment", [
    ("learning_rate", 0, "must be > 0"),
    ("learning_rate", -1.0, "must be > 0"),
    ("learning_rate", math.nan, "finite"),
    ("learning_rate", 1e6, "≤ 10"),
    ("learning_rate", "fast", "must be a number"),
    ("batch_size", 0, "≥ 1"),
    ("batch_size", 64.5, "whole number"),
    ("batch_size", 100000, "≤ 4096"),
    ("epochs", -3, "≥ 1"),
    ("momentum", 1.5, "≤ 0.999"),
    ("patience", 0, "≥ 1"),
    ("val_fraction", 0.9, "≤ 0.5"),
    ("network", "resnet50", "unknown network 'resnet50'"),
    ("optimizer", "lion", "choose one of momentum, sgd, adam"),
    ("amp_level", "O4", "unknown amp_level"),
])
def test_bad_values_are_refused_with_a_message(field, value, fragment):
    errors = TrainConfig(**{field: value}).errors()
    assert fragment in errors[field]
    with pytest.raises(ConfigError):
        TrainConfig(**{field: value}).validate()


def test_early_stopping_needs_a_validation_set():
    assert "needs a validation set" in TrainConfig(early_stopping=True, val_fraction=0).errors()["early_stopping"]


def test_json_round_trip_and_unknown_keys():
    cfg = TrainConfig(network="mlp", learning_rate=0.1, early_stopping=True)
    assert TrainConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ConfigError, match="unknown setting"):
        TrainConfig.from_dict({"colour": "red"})


def test_parse_field_from_text():
    assert parse_field("learning_rate", "0.5") == 0.5
    assert parse_field("epochs", "3") == 3
    assert parse_field("early_stopping", "true") is True
    with pytest.raises(ConfigError, match="not a valid int"):
        parse_field("epochs", "three")


def test_a_worker_gets_the_users_onednn_setting_but_not_the_apps_own_choice(monkeypatch):
    from core import runtime
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv(runtime._CHOSEN_MARK, raising=False)
    runtime.prepare_process(None)  # the app's own choice
    assert os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert "ONEDNN_MAX_CPU_ISA" not in runtime.child_environment()
    # A child given this environment as it is (not child_environment's) chooses for its own network: an MLP
    # trained with the app's cap computed other losses, in the last bits, than one a dispatcher started (AVX-512).
    runtime.prepare_process("mlp")
    assert "ONEDNN_MAX_CPU_ISA" not in os.environ
    runtime.prepare_process(None)
    runtime.prepare_process("lenet5")
    assert os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE")  # the user's
    monkeypatch.delenv(runtime._CHOSEN_MARK)
    runtime.prepare_process(None)
    assert runtime.child_environment()["ONEDNN_MAX_CPU_ISA"] == "AVX512_CORE"
    runtime.prepare_process("mlp")
    assert os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX512_CORE"


def test_only_the_mlps_training_processes_skip_mindspores_weight_copies(monkeypatch):
    """Measured faster for the MLP only (docs/performance.md); a value the user set is kept."""
    from core import runtime
    for network, expected in [("mlp", "3"), ("lenet5", None), (None, None)]:
        monkeypatch.delenv(runtime.LOAD_COPIES, raising=False)
        runtime.prepare_process(network)
        assert os.environ.get(runtime.LOAD_COPIES) == expected, network
    monkeypatch.setenv(runtime.LOAD_COPIES, "1")
    runtime.prepare_process("mlp")
    assert os.environ[runtime.LOAD_COPIES] == "1"


def test_numpy_takes_small_pages_in_every_studio_process_unless_the_user_said_otherwise(monkeypatch):
    """A run's first batch waited 100-160 ms for numpy's 2 MB pages on this kind of machine (core/runtime.py)."""
    import numpy as np

    from core import runtime
    toggle = np.core.multiarray._set_madvise_hugepage
    before = toggle(True)
    try:
        monkeypatch.delenv(runtime.HUGE_PAGES, raising=False)
        runtime.prepare_process("mlp")
        assert runtime.child_environment()[runtime.HUGE_PAGES] == "0"
        assert toggle(False) is False, "numpy, imported already, was switched to small pages"
        monkeypatch.setenv(runtime.HUGE_PAGES, "1")  # the user's
        runtime.prepare_process("mlp")
        assert toggle(False) is True
    finally:
        toggle(before)


@pytest.mark.parametrize("name, raw", [("epochs", "１"), ("seed", "1_000"), ("learning_rate", "0.0_1"),
                                       ("batch_size", "６４")])
def test_numbers_are_plain_ascii_digits(name, raw):
    """Python's int() and float() also read full-width digits and underscores; a link must not slip them in."""
    with pytest.raises(ConfigError, match="not a valid"):
        parse_field(name, raw)
