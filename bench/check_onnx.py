"""Check an exported ONNX file with ONNX Runtime (not a dependency: run with an interpreter that has
onnxruntime and numpy). Prints the ONNX predictions of the first N official test images as JSON, so they
can be compared with MindSpore's:

    /path/to/python-with-onnxruntime bench/check_onnx.py model.onnx ../shared/data/mnist/test [N]
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

MEAN, STD = 0.1307, 0.3081  # core.data.pipeline's normalisation


def main() -> int:
    model, test_dir = sys.argv[1], Path(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    raw = (test_dir / "t10k-images-idx3-ubyte").read_bytes()
    images = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)[:n]
    x = ((images.astype(np.float32) / 255.0 - MEAN) / STD)[:, None]
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    logits = np.concatenate([session.run(None, {name: x[i:i + 1]})[0] for i in range(n)])
    print(json.dumps({"onnxruntime": ort.__version__, "predictions": logits.argmax(1).tolist(),
                      "logits_first": logits[0].tolist()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
