#!/usr/bin/env python3
"""The references of `cargo bench --bench asr`: transformers eager, the bare ONNX Runtime Python session (a plain
greedy loop over the KV cache on sauti's graphs, fp32 and int8) and faster-whisper's CTranslate2 engine (int8 and
float32, converted from the same random model), each decoding exactly TOKENS tokens of one 30 s window.

    python3 bench/asr_reference.py prepare MODEL_DIR          # *_quantized.onnx + ct2-int8/ + ct2-float32/
    python3 bench/asr_reference.py run MODEL_DIR AUDIO.wav RUNS TOKENS FEATURES.f32

`run` prints one JSON object: rows of {engine, variant, features_ms, encoder_ms, decode_ms, total_ms, tokens}
(medians; tokens of the last run) and writes transformers' log-mel features of the audio to FEATURES.f32.
"""

import json
import statistics
import sys
import time
import wave
from pathlib import Path

import numpy as np

THREADS = 2
LANGUAGE = "sw"


def prepare(model_dir):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import ctranslate2

    model_dir = Path(model_dir)
    for stem in ("encoder_model", "decoder_model", "decoder_with_past_model"):
        target = model_dir / f"{stem}_quantized.onnx"
        if not target.exists():
            quantize_dynamic(str(model_dir / f"{stem}.onnx"), str(target), weight_type=QuantType.QInt8)
    for quantization in ("int8", "float32"):
        out = model_dir / f"ct2-{quantization}"
        if not out.exists():
            converter = ctranslate2.converters.TransformersConverter(str(model_dir / "transformers"))
            converter.convert(str(out), quantization=quantization)
    print(f"prepared {model_dir}")


def read_wav(path):
    with wave.open(str(path), "rb") as f:
        assert f.getframerate() == 16000 and f.getnchannels() == 1 and f.getsampwidth() == 2
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def median_row(engine, variant, runs, once):
    once()  # warm-up
    stages, tokens = [], None
    for _ in range(runs):
        timing, tokens = once()
        stages.append(timing)
    row = {key: statistics.median(s[key] for s in stages) for key in stages[0]}
    row.update(engine=engine, variant=variant, tokens=[int(t) for t in tokens])
    return row


def clock():
    return time.perf_counter() * 1000.0


def transformers_rows(model_dir, audio, runs, count, prompt):
    import torch
    from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration

    torch.set_num_threads(THREADS)
    extractor = WhisperFeatureExtractor.from_pretrained(str(model_dir))
    model = WhisperForConditionalGeneration.from_pretrained(str(model_dir / "transformers"),
                                                            attn_implementation="sdpa").eval()

    def once():
        start = clock()
        features = extractor(audio, sampling_rate=16000, return_tensors="pt").input_features
        featured = clock()
        with torch.no_grad():
            encoded = model.model.encoder(features)
            encoder_ms = clock() - featured
            out = model.generate(features, language=LANGUAGE, task="transcribe", return_timestamps=False,
                                 max_new_tokens=count, min_new_tokens=count, do_sample=False, num_beams=1)
        end = clock()
        del encoded
        sequence = out[0].tolist() if not hasattr(out, "sequences") else out.sequences[0].tolist()
        tokens = sequence[len(prompt):] if sequence[:len(prompt)] == prompt else sequence
        # generate() runs the encoder itself: its decode time is the rest after one encoder pass.
        total = end - start - encoder_ms
        return {"features_ms": featured - start, "encoder_ms": encoder_ms,
                "decode_ms": total - (featured - start) - encoder_ms, "total_ms": total}, tokens

    return [median_row("transformers", "eager (sdpa), fp32", runs, once)], extractor


def ort_rows(model_dir, audio, runs, count, prompt, extractor):
    import onnxruntime as ort

    generation = json.loads((model_dir / "generation_config.json").read_text())
    suppress = list(generation["suppress_tokens"]) + [generation["eos_token_id"]]
    begin = list(generation["begin_suppress_tokens"])
    rows = []
    for variant, suffix in (("fp32", ""), ("int8 (quantize_dynamic)", "_quantized")):
        def session(stem):
            options = ort.SessionOptions()
            options.intra_op_num_threads = THREADS
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return ort.InferenceSession(str(model_dir / f"{stem}{suffix}.onnx"), options,
                                        providers=["CPUExecutionProvider"])

        encoder, first, cached = session("encoder_model"), session("decoder_model"), session("decoder_with_past_model")
        first_names = [o.name for o in first.get_outputs()]
        cached_names = [o.name for o in cached.get_outputs()]

        def once():
            start = clock()
            features = extractor(audio, sampling_rate=16000, return_tensors="np").input_features
            featured = clock()
            states = encoder.run(None, {"input_features": features})[0]
            encoded = clock()
            ids, past, tokens = np.array([prompt], dtype=np.int64), {}, []
            for step in range(count):
                if step == 0:
                    result = dict(zip(first_names, first.run(None, {"input_ids": ids, "encoder_hidden_states": states})))
                else:
                    result = dict(zip(cached_names, cached.run(None, {"input_ids": ids, **past})))
                for name, value in result.items():
                    if name.startswith("present") and (step == 0 or ".decoder." in name):
                        past[name.replace("present", "past_key_values")] = value
                logits = result["logits"][0, -1]
                logits[suppress] = -np.inf
                if step == 0:
                    logits[begin] = -np.inf
                token = int(np.argmax(logits))
                tokens.append(token)
                ids = np.array([[token]], dtype=np.int64)
            end = clock()
            return {"features_ms": featured - start, "encoder_ms": encoded - featured,
                    "decode_ms": end - encoded, "total_ms": end - start}, tokens

        rows.append(median_row("onnxruntime (Python)", variant, runs, once))
    return rows


def faster_whisper_rows(model_dir, audio, runs, count, prompt):
    import ctranslate2
    from faster_whisper.feature_extractor import FeatureExtractor

    generation = json.loads((model_dir / "generation_config.json").read_text())
    extractor = FeatureExtractor(feature_size=80)
    rows = []
    for quantization in ("int8", "float32"):
        model = ctranslate2.models.Whisper(str(model_dir / f"ct2-{quantization}"), device="cpu",
                                           compute_type=quantization, intra_threads=THREADS, inter_threads=1)
        suppress = [-1, generation["eos_token_id"]]
        # CTranslate2 decodes at most max_length / 2 tokens for Whisper (it halves the limit): ask for twice.
        max_length = 2 * count

        def once():
            start = clock()
            features = extractor(audio)[:, :3000]
            features = np.pad(features, ((0, 0), (0, 3000 - features.shape[1])))
            view = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None]))
            featured = clock()
            encoded_view = model.encode(view)
            encoded = clock()
            result = model.generate(encoded_view, [prompt], beam_size=1, max_length=max_length,
                                    suppress_tokens=suppress, suppress_blank=True)
            end = clock()
            tokens = result[0].sequences_ids[0]
            assert len(tokens) == count, f"CTranslate2 decoded {len(tokens)} tokens, not {count}"
            return {"features_ms": featured - start, "encoder_ms": encoded - featured,
                    "decode_ms": end - encoded, "total_ms": end - start}, tokens

        rows.append(median_row("faster-whisper (CTranslate2)", quantization, runs, once))
    return rows


def run(model_dir, audio_path, runs, count, features_out):
    model_dir = Path(model_dir)
    audio = read_wav(audio_path)
    generation = json.loads((model_dir / "generation_config.json").read_text())
    prompt = [generation["decoder_start_token_id"], generation["lang_to_id"][f"<|{LANGUAGE}|>"],
              generation["task_to_id"]["transcribe"], generation["no_timestamps_token_id"]]
    rows, extractor = transformers_rows(model_dir, audio, runs, count, prompt)
    features = extractor(audio, sampling_rate=16000, return_tensors="np").input_features[0]
    np.ascontiguousarray(features, dtype="<f4").tofile(features_out)
    rows += ort_rows(model_dir, audio, runs, count, prompt, extractor)
    rows += faster_whisper_rows(model_dir, audio, runs, count, prompt)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["prepare"]:
        prepare(sys.argv[2])
    elif sys.argv[1:2] == ["run"]:
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit(__doc__)
