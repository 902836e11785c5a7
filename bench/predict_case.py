"""Prediction latency for one 28x28 image through the app's model service (Graph mode, locked; measured by
bench/predict_latency.py's `measure`): the first call after the warm-up the service does when it loads a model,
and after it; and app cold start to the first page served (a real `streamlit run`, a websocket client asks for
the Train page and waits for its script to finish)."""
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from bench.predict_latency import measure  # the app's Graph-mode prediction, measured as there
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for net in ("lenet5", "mlp"):
            r = measure("graph", net, Path(tmp))
            out[net] = {"load_and_warm_up_s": r["load_s"], "first_predict_ms": r["first_ms"],
                        "median_predict_ms": r["median_ms"], "p90_predict_ms": r["p90_ms"]}
    out["app_cold_start_s"] = cold_start()
    print(json.dumps(out))


def cold_start() -> dict:
    from bench.ws_client import SessionStats, watch_page
    from tests.support.server import AS_DEPLOYED, start_server
    store = Path(tempfile.mkdtemp()) / "store"
    t = time.perf_counter()
    server = start_server(store, extra_env=AS_DEPLOYED)
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
