#!/usr/bin/env python3
"""Build the speaker-encoder test fixtures: a tiny random-weight encoder with the interface of WeSpeaker's ONNX
exports (`feats` [1, T, 80] Kaldi filter banks with the mean over time removed -> `embs` [1, 16]), and the
reference features (torchaudio's `compliance.kaldi.fbank`, as WeSpeaker computes them) and embedding of 3 s of
`tests/fixtures/clone/low.wav`, which the Rust tests must reproduce.

    tests/fixtures/speaker/encoder.onnx, reference.json, low-fbank.f32 ([frames, 80] row-major float32)

Dev-only; needs torch, onnx, onnxruntime and torchaudio (its kaldi module is pure torch and is loaded on its own,
so a torchaudio build for another CUDA version will do).
"""

import importlib.util
import json
import sys
import types
import wave
from pathlib import Path

import numpy as np
import onnxruntime
import torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "speaker"


def kaldi():
    package = importlib.util.find_spec("torchaudio").submodule_search_locations[0]
    sys.modules.setdefault("torchaudio", types.ModuleType("torchaudio"))
    spec = importlib.util.spec_from_file_location("kaldi", f"{package}/compliance/kaldi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(80, 32, 3, padding=1)
        self.out = torch.nn.Linear(64, 16)

    def forward(self, feats):
        hidden = torch.relu(self.conv(feats.transpose(1, 2)))
        pooled = torch.cat([hidden.mean(dim=2), hidden.std(dim=2)], dim=1)
        return self.out(pooled)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(5)
    model = Encoder().eval()
    example = torch.randn(1, 200, 80)
    torch.onnx.export(model, (example,), str(OUT / "encoder.onnx"), opset_version=17, dynamo=False,
                      input_names=["feats"], output_names=["embs"], dynamic_axes={"feats": {1: "T"}})
    with wave.open(str(ROOT / "tests" / "fixtures" / "clone" / "low.wav"), "rb") as f:
        assert f.getframerate() == 16000 and f.getnchannels() == 1
        pcm = np.frombuffer(f.readframes(3 * 16000), dtype="<i2").astype(np.float32) / 32768.0
    waveform = torch.from_numpy(pcm).unsqueeze(0) * (1 << 15)
    feats = kaldi().fbank(waveform, num_mel_bins=80, frame_length=25, frame_shift=10, dither=0.0,
                          sample_frequency=16000, window_type="povey", energy_floor=0.0)
    feats = feats - feats.mean(dim=0)
    feats.numpy().astype("<f4").tofile(OUT / "low-fbank.f32")
    session = onnxruntime.InferenceSession(str(OUT / "encoder.onnx"), providers=["CPUExecutionProvider"])
    embedding = session.run(None, {"feats": feats.unsqueeze(0).numpy()})[0][0]
    with torch.no_grad():
        assert np.allclose(model(feats.unsqueeze(0)).numpy()[0], embedding, atol=1e-5)
    (OUT / "reference.json").write_text(json.dumps({
        "audio": "clone/low.wav", "seconds": 3, "frames": int(feats.shape[0]), "fbank": "low-fbank.f32",
        "embedding": [float(x) for x in embedding]}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
