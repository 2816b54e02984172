#!/usr/bin/env python3
"""References for bench/ctc.rs: the bare ONNX Runtime session (fp32 and int8) and transformers eager on the same
CTC model and the same 16-bit WAV, timed the same way (normalised input -> logits -> best token per frame).

    ctc_reference.py prepare DIR            write DIR/model_quantized.onnx (quantize_dynamic, QInt8 weights)
    ctc_reference.py run DIR WAV RUNS       one JSON object: rows of {engine, variant, ms, text}, and logits of
                                            transformers written to DIR/reference-logits.f32
"""

import json
import sys
import time
import wave
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import Wav2Vec2CTCTokenizer, Wav2Vec2ForCTC

THREADS = 2


def read_wav(path):
    with wave.open(str(path), "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def normalised(samples):
    mean = samples.astype(np.float64).mean()
    variance = ((samples.astype(np.float64) - mean) ** 2).mean()
    return ((samples - mean) / np.sqrt(variance + 1e-7)).astype(np.float32)[None]


def timed(work, runs):
    work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append((time.perf_counter() - start) * 1000.0)
    return float(np.median(times)), result


def main():
    command, directory = sys.argv[1], Path(sys.argv[2])
    if command == "prepare":
        quantize_dynamic(
            str(directory / "model.onnx"), str(directory / "model_quantized.onnx"), weight_type=QuantType.QInt8
        )
        return
    wav, runs = Path(sys.argv[3]), int(sys.argv[4])
    samples = read_wav(wav)
    tokenizer = Wav2Vec2CTCTokenizer.from_pretrained(directory)
    rows = []

    def text_of(logits):
        return tokenizer.decode(logits[0].argmax(-1), skip_special_tokens=False).replace("[UNK]", "")

    # The library's defaults, and sauti's session settings (threads that sleep between operators instead of
    # spinning: the service shares its cores with synthesis).
    for spinning in [True, False]:
        for variant, name in [("fp32", "model.onnx"), ("int8 (quantize_dynamic)", "model_quantized.onnx")]:
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = THREADS
            if not spinning:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.add_session_config_entry("session.inter_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(str(directory / name), options)

            def run():
                logits = session.run(None, {"input_values": normalised(samples)})[0]
                return logits, logits[0].argmax(-1)

            ms, (logits, _) = timed(run, runs)
            engine = "onnxruntime (Python)" if spinning else "onnxruntime (Python), no spinning"
            rows.append({"engine": engine, "variant": variant, "ms": ms, "text": text_of(logits)})

    torch.set_num_threads(THREADS)
    model = Wav2Vec2ForCTC.from_pretrained(directory).eval()

    def eager():
        with torch.no_grad():
            logits = model(torch.from_numpy(normalised(samples))).logits.numpy()
        return logits, logits[0].argmax(-1)

    ms, (logits, _) = timed(eager, runs)
    rows.append({"engine": "transformers", "variant": "eager, fp32", "ms": ms, "text": text_of(logits)})
    logits[0].astype("<f4").tofile(directory / "reference-logits.f32")
    print(json.dumps({"rows": rows, "frames": int(logits.shape[1]), "vocab": int(logits.shape[2])}))


if __name__ == "__main__":
    main()
