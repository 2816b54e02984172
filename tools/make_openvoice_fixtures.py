#!/usr/bin/env python3
"""Build the tone-colour conversion fixtures: coqui-tts's OpenVoice (V2's architecture; random weights, narrow
channels so the graphs stay small) exported by tools/export_openvoice.py, and what coqui-tts's own code gives on
committed audio, which sauti must reproduce.

    tests/fixtures/openvoice/model/     tone_encoder.onnx, converter.onnx, openvoice.json
    tests/fixtures/openvoice/*.wav      22,050 Hz mono PCM16 clips: two speakers (eSpeak NG's Swahili and the
                                        recognition fixtures' speech, resampled)
    tests/fixtures/openvoice/reference.json + *.f32
        per clip: `wav_to_spec`'s spectrogram ([513, frames], little-endian float32) and `extract_se`'s tone;
        per conversion: the noise drawn (already scaled by tau, [channels, frames]) and `OpenVoice.inference`'s
        waveform with that noise

The flow's last layers start at zero in a freshly built model (the flow would do nothing); they are drawn at random
here so that the source and target tones change the output.

With `--size v2 DIR` it instead writes graphs of V2's full size (random weights) to DIR for the benchmark.

Dev-only: target/py (tools/python-env.sh) plus
    target/py/bin/pip install scipy librosa soundfile pyyaml fsspec
    target/py/bin/pip install --no-deps torchaudio==2.11.1 torchcodec coqui-tts==0.28.0 coqui-tts-trainer==0.4.0 \
        coqpit-config==0.2.5
(coqui-tts only checks that torchaudio and torchcodec are present; the converter's code path uses neither.)
"""

import argparse
import json
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_openvoice import export  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "openvoice"
RATE = 22050
# Two speakers: eSpeak NG's Swahili (the cloning fixture) and the recognition fixtures' speech.
SOURCES = {"espeak.wav": "clone/low.wav", "other.wav": "whisper/speech.wav"}
# (source clip, target clip): the converter re-voices the first with the second's tone.
CONVERSIONS = [("espeak.wav", "other.wav"), ("other.wav", "espeak.wav")]


def build(size: str):
    from TTS.vc.configs.openvoice_config import OpenVoiceArgs, OpenVoiceConfig
    from TTS.vc.models.openvoice import OpenVoice

    torch.manual_seed(47)
    if size == "tiny":
        args = OpenVoiceArgs(inter_channels=16, hidden_channels=16, upsample_initial_channel=32)
    else:
        args = OpenVoiceArgs()
    model = OpenVoice(OpenVoiceConfig(model_args=args)).eval()
    with torch.no_grad():
        for flow in model.flow.flows:
            if hasattr(flow, "post"):
                flow.post.weight.normal_(0.0, 0.5)
                flow.post.bias.normal_(0.0, 0.5)
    return model


def write_wav(path: Path, samples: np.ndarray):
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).round().astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def clips():
    import librosa

    for name, source in SOURCES.items():
        samples, _ = librosa.load(str(ROOT / "tests" / "fixtures" / source), sr=RATE)
        samples = samples[: 4 * RATE] * (0.5 / max(float(np.max(np.abs(samples))), 1e-6))
        write_wav(OUT / name, samples)


def references(model):
    from TTS.utils.audio.torch_transforms import wav_to_spec

    audio = model.config.audio
    record = {"clips": [], "conversions": []}
    tones = {}
    for name in SOURCES:
        samples = torch.from_numpy(read_wav(OUT / name))
        tone, spec = model.extract_se(samples)
        again = wav_to_spec(samples[None, None, :], n_fft=audio.fft_size, hop_length=audio.hop_length,
                            win_length=audio.win_length, center=False)
        assert torch.equal(spec, again)
        tones[name] = (tone, spec)
        stem = name.removesuffix(".wav")
        spec[0].numpy().astype("<f4").tofile(OUT / f"{stem}-spectrogram.f32")
        record["clips"].append({
            "audio": name,
            "frames": spec.shape[-1],
            "spectrogram": f"{stem}-spectrogram.f32",
            "tone": tone[0, :, 0].tolist(),
        })
    generator = torch.Generator().manual_seed(4747)
    for source, target in CONVERSIONS:
        g_src, spec = tones[source]
        g_tgt, _ = tones[target]
        eps = torch.randn(1, model.enc_q.out_channels, spec.shape[-1], generator=generator)
        # coqui-tts's own inference, its posterior noise being these draws.
        original = torch.randn_like
        torch.randn_like = lambda like, **_: eps.to(like.dtype)
        try:
            with torch.no_grad():
                waveform = model.inference(spec, {"g_src": g_src, "g_tgt": g_tgt})["model_outputs"]
        finally:
            torch.randn_like = original
        stem = f"{source.removesuffix('.wav')}-as-{target.removesuffix('.wav')}"
        (eps[0] * model.tau).numpy().astype("<f4").tofile(OUT / f"{stem}-noise.f32")
        waveform[0, 0].numpy().astype("<f4").tofile(OUT / f"{stem}-waveform.f32")
        record["conversions"].append({
            "source": source,
            "target": target,
            "noise": f"{stem}-noise.f32",
            "waveform": f"{stem}-waveform.f32",
            "samples": waveform.shape[-1],
        })
    (OUT / "reference.json").write_text(json.dumps(record, indent=1) + "\n")


def check_graphs(model):
    """The exported graphs give what the model gives (ONNX Runtime against torch)."""
    import onnxruntime

    reference = json.loads((OUT / "reference.json").read_text())
    encoder = onnxruntime.InferenceSession(str(OUT / "model" / "tone_encoder.onnx"))
    converter = onnxruntime.InferenceSession(str(OUT / "model" / "converter.onnx"))
    spectra = {}
    for clip in reference["clips"]:
        spec = np.fromfile(OUT / clip["spectrogram"], dtype="<f4").reshape(513, clip["frames"])
        spectra[clip["audio"]] = spec
        tone = encoder.run(None, {"spectrogram": spec.T[None]})[0][0]
        assert np.abs(tone - np.array(clip["tone"])).max() < 1e-4, clip["audio"]
    tones = {c["audio"]: np.array(c["tone"], dtype=np.float32)[None, :, None] for c in reference["clips"]}
    for case in reference["conversions"]:
        spec = spectra[case["source"]]
        noise = np.fromfile(OUT / case["noise"], dtype="<f4").reshape(1, -1, spec.shape[1])
        out = converter.run(None, {"spectrogram": spec[None], "noise": noise,
                                   "source_tone": tones[case["source"]], "target_tone": tones[case["target"]]})[0]
        expected = np.fromfile(OUT / case["waveform"], dtype="<f4")
        worst = float(np.abs(out[0, 0] - expected).max())
        assert worst < 1e-4, f"{case}: the graph differs from coqui-tts by {worst}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=["tiny", "v2"], default="tiny")
    parser.add_argument("dir", nargs="?", type=Path)
    args = parser.parse_args()
    model = build(args.size)
    if args.size != "tiny":
        export(model, args.dir, tau=0.3)
        print(f"wrote {args.dir}")
        return
    OUT.mkdir(parents=True, exist_ok=True)
    clips()
    references(model)
    export(model, OUT / "model", tau=float(model.tau))
    check_graphs(model)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
