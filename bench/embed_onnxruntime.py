"""onnxruntime (PyPI) on the same int8 ONNX, one thread, same inputs as the tract bench."""
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

model_dir = Path(sys.argv[1])
options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
started = time.perf_counter()
session = ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
print(json.dumps({"runtime": "onnxruntime", "loadMs": round((time.perf_counter() - started) * 1000, 1)}))
HELLO, CLS, SEP = 7592, 101, 102
for tokens in (16, 64, 256):
    ids = np.array([[CLS] + [HELLO] * (tokens - 2) + [SEP]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    for _ in range(3):
        session.run(None, feed)
    times = []
    for _ in range(20):
        t = time.perf_counter()
        (hidden,) = session.run(None, feed)
        pooled = hidden[0].mean(0)
        pooled /= np.linalg.norm(pooled)
        times.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"runtime": "onnxruntime", "tokens": tokens, "medianMs": round(statistics.median(times), 2)}))
