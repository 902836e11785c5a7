"""Prediction latency for one 28x28 image through the app's model service (PyNative, locked), first call
(the warm-up the service does when it loads a model) and after it; and app cold start to the first page
served (a real `streamlit run`, a websocket client asks for the Train page and waits for its script to
finish)."""
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.runtime import prepare_process  # noqa: E402


def main() -> None:
    prepare_process(None)  # what the app process does
    from core.app import model_service
    from core.model import checkpoint
    from core.config import TrainConfig
    from core.model.networks import build_network
    out = {}
    tmp = Path(tempfile.mkdtemp())
    for net in ("lenet5", "mlp"):
        path = checkpoint.save(build_network(net), TrainConfig(network=net), tmp / f"{net}.ckpt")
        image = np.random.default_rng(0).integers(0, 255, (1, 28, 28)).astype(np.uint8)
        t = time.perf_counter()
        model_service.load_model(path)
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        model_service.predict(path, image)
        first = time.perf_counter() - t
        times = []
        for _ in range(200):
            t = time.perf_counter()
            model_service.predict(path, image)
            times.append(time.perf_counter() - t)
        out[net] = {"load_and_warm_up_s": load_s, "first_predict_ms": first * 1000,
                    "median_predict_ms": float(np.median(times) * 1000),
                    "p90_predict_ms": float(np.percentile(times, 90) * 1000)}
    out["app_cold_start_s"] = cold_start()
    print(json.dumps(out))


def cold_start() -> dict:
    from bench.ws_client import SessionStats, watch_page
    from tests.server import start_server
    store = Path(tempfile.mkdtemp()) / "store"
    t = time.perf_counter()
    server = start_server(store)
    healthy = time.perf_counter() - t
    stats = SessionStats()

    async def first_page():
        task = asyncio.create_task(watch_page(server.url, "train", 120, stats))
        while stats.scripts_finished == 0 and not task.done():
            await asyncio.sleep(0.02)
        task.cancel()

    try:
        asyncio.run(first_page())
        served = time.perf_counter() - t
    finally:
        server.stop()
    return {"to_health_check_s": healthy, "to_first_page_served_s": served}


if __name__ == "__main__":
    main()
