#!/usr/bin/env python3
"""The references of `cargo bench --bench vits`: the bare ONNX Runtime Python session on sauti's graph (with
optimisation-level, thread and int8-decoder variants) and transformers eager on the same weights.

    python3 bench/vits_reference.py prepare MODEL_DIR        # int8-decoder copy in MODEL_DIR-int8
    python3 bench/vits_reference.py run MODEL_DIR TEXTS.json RUNS

`run` prints one JSON object: rows of {engine, variant, chars, seconds (median), audio_seconds, max_diff}, where
max_diff is the largest sample difference from the fp32 ONNX Runtime graph with all noise scales at 0.
"""

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from transformers import VitsModel, VitsTokenizer

THREADS = 2
NOISE, NOISE_W = 0.667, 0.0


def prepare(model_dir):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import onnx

    model_dir = Path(model_dir)
    out = Path(f"{model_dir}-int8")
    out.mkdir(exist_ok=True)
    for name in ("vocab.json", "tokenizer_config.json", "config.json"):
        shutil.copy(model_dir / name, out / name)
    graph = onnx.load(str(model_dir / "model.onnx"))
    decoder = [n.name for n in graph.graph.node if "/decoder/" in n.name and n.op_type in ("Conv", "ConvTranspose")]
    quantize_dynamic(str(model_dir / "model.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8,
                     nodes_to_quantize=decoder, op_types_to_quantize=["Conv", "ConvTranspose"])
    print(f"int8 decoder ({len(decoder)} convolutions) in {out}")


def session(path, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL, threads=THREADS):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def ort_synth(sess, ids, noise, noise_w):
    feeds = {"input_ids": np.array([ids], dtype=np.int64), "noise_scale": np.array(noise, dtype=np.float32),
             "length_scale": np.array(1.0, dtype=np.float32), "noise_scale_w": np.array(noise_w, dtype=np.float32)}
    return sess.run(None, feeds)[0].reshape(-1)


def timed(fn, runs):
    times, audio = [], None
    for _ in range(runs):
        start = time.perf_counter()
        audio = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(audio) / 16000


def run(model_dir, texts_path, runs):
    model_dir = Path(model_dir)
    texts = json.loads(Path(texts_path).read_text())
    tokenizer = VitsTokenizer.from_pretrained(str(model_dir))
    torch.set_num_threads(THREADS)
    eager = VitsModel.from_pretrained(str(model_dir / "transformers")).eval()
    eager.noise_scale, eager.noise_scale_duration = NOISE, NOISE_W
    levels = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
              "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
              "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    variants = [("onnxruntime", f"optimisation {name}, {THREADS} threads", model_dir / "model.onnx", level, THREADS)
                for name, level in levels.items()]
    variants.append(("onnxruntime", "optimisation all, 1 thread", model_dir / "model.onnx", levels["all"], 1))
    int8 = Path(f"{model_dir}-int8") / "model.onnx"
    if int8.exists():
        variants.append(("onnxruntime", f"int8 decoder, {THREADS} threads", int8, levels["all"], THREADS))
    rows = []
    for text in texts:
        ids = tokenizer(text["normalized"])["input_ids"]
        reference = ort_synth(session(model_dir / "model.onnx"), ids, 0.0, 0.0)
        # The variants are timed on the short text only; the long one compares the three engines.
        chosen = variants if text["chars"] <= 200 else [v for v in variants if v[1] == f"optimisation all, {THREADS} threads"]
        for engine, variant, path, level, threads in chosen:
            sess = session(path, level, threads)
            ort_synth(sess, ids, NOISE, NOISE_W)  # warm-up
            seconds, audio = timed(lambda: ort_synth(sess, ids, NOISE, NOISE_W), runs)
            quiet = ort_synth(sess, ids, 0.0, 0.0)
            diff = float(np.abs(quiet - reference).max()) if quiet.shape == reference.shape else None
            rows.append({"engine": engine, "variant": variant, "chars": text["chars"], "seconds": seconds,
                         "audio_seconds": audio, "max_diff": diff})
        input_ids = torch.tensor([ids])
        with torch.no_grad():
            eager(input_ids=input_ids)  # warm-up
            seconds, audio = timed(lambda: eager(input_ids=input_ids).waveform[0].numpy(), runs)
            eager.noise_scale = 0.0
            quiet = eager(input_ids=input_ids).waveform[0].numpy()
            eager.noise_scale = NOISE
        diff = float(np.abs(quiet - reference).max()) if quiet.shape == reference.shape else None
        rows.append({"engine": "transformers", "variant": f"eager, {THREADS} threads", "chars": text["chars"],
                     "seconds": seconds, "audio_seconds": audio, "max_diff": diff})
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["prepare"]:
        prepare(sys.argv[2])
    elif sys.argv[1:2] == ["run"]:
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
