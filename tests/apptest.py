"""AppTest helpers and fixtures shared by the page tests: a real run store and a trained checkpoint."""
import pytest
from streamlit.testing.v1 import AppTest

from core import checkpoint, model_service
from core.config import TrainConfig
from core.data_source import validate_mnist_dir
from core.store import RunStore
from core.trainer import train

APP = "../app.py"  # AppTest paths are relative to the file that calls from_file (this one)


@pytest.fixture(scope="module")
def trained_ckpt(tmp_path_factory, small_mnist):
    cfg = TrainConfig(network="mlp", mode="pynative", optimizer="adam", learning_rate=0.002, epochs=1,
                      data_dir=str(small_mnist))
    result = train(cfg, validate_mnist_dir(small_mnist))
    return checkpoint.save(result.net, cfg, tmp_path_factory.mktemp("ck") / "mlp.ckpt")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_DATA_DIR", str(tmp_path / "store"))
    return RunStore(tmp_path / "store")


@pytest.fixture
def with_run(store, trained_ckpt):
    run_id = model_service.import_checkpoint(store, trained_ckpt.read_bytes(), "mlp.ckpt")
    return store, run_id


def page(name: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{name}.py")
    return at.run()
