#!/usr/bin/env python3
"""Build the turn-taking test fixtures: short 16 kHz clips of Swahili speech in line noise, and the speech
probabilities and end-of-turn probabilities that the reference implementations give for them, which sauti's
Silero VAD and Smart Turn must reproduce.

    tests/fixtures/turns/*.wav            16 kHz mono PCM16 clips (below)
    tests/fixtures/turns/silero.json      per 512-sample chunk, the `silero-vad` package's probabilities
    tests/fixtures/turns/smart_turn.json  per clip, Pipecat's LocalSmartTurnAnalyzerV3 probability

The clips: the embedded voices (built by `cargo build`) saying a finished request and an unfinished account
number, eSpeak NG's Swahili (tests/fixtures/clone/low.wav), each with line noise at a set SNR, one put through
the phone band (8 kHz mu-law and back).

Three steps, each in the Python that has what it needs (dev-only):
    PYTHONPATH=$(bash tools/pypi.sh frameworks) python3 tools/make_turn_fixtures.py audio
    target/py/bin/pip install silero-vad==6.2.3 && target/py/bin/python tools/make_turn_fixtures.py silero
    PYTHONPATH=$(bash tools/pypi.sh frameworks) python3 tools/make_turn_fixtures.py smart-turn
"""

import json
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "turns"
RATE = 16000

# name: (source, text or None, SNR in dB, phone band)
CLIPS = {
    "request-10db": ("zuri", "Habari, ningependa kujua salio la akaunti yangu.", 10, False),
    "number-phone-5db": ("baraka", "Nambari yangu ni sifuri saba moja", 5, True),
    "espeak-20db": ("espeak", None, 20, False),
}


def read(path):
    with wave.open(str(path), "rb") as f:
        assert f.getnchannels() == 1 and f.getsampwidth() == 2, path
        pcm = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
        return pcm, f.getframerate()


def write(path, samples):
    pcm = np.clip(np.round(samples * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(RATE)
        f.writeframes(pcm.tobytes())


def lowpass(samples, cutoff, taps=101):
    n = np.arange(taps) - (taps - 1) / 2
    kernel = np.sinc(2 * cutoff / RATE * n) * np.hamming(taps)
    return np.convolve(samples, kernel / kernel.sum(), mode="same")


def mulaw(samples):
    mu = 255.0
    coded = np.sign(samples) * np.log1p(mu * np.abs(samples)) / np.log1p(mu)
    coded = np.round(coded * 127) / 127
    return np.sign(coded) * np.expm1(np.abs(coded) * np.log1p(mu)) / mu


def phone(samples):
    narrow = lowpass(samples, 3400)[::2]
    narrow = mulaw(np.clip(narrow, -1, 1))
    wide = np.zeros(len(narrow) * 2, dtype=np.float64)
    wide[::2] = narrow * 2
    return lowpass(wide, 3600)


def speech(source, text, tmp):
    if source == "espeak":
        samples, rate = read(ROOT / "tests" / "fixtures" / "clone" / "low.wav")
        assert rate == RATE
        return samples[: 4 * RATE]
    out = Path(tmp) / f"{source}.wav"
    subprocess.run([str(ROOT / "target" / "debug" / "sauti"), "tts", text, "--voice", source, "-o", str(out)],
                   check=True)
    samples, rate = read(out)
    assert rate == RATE, rate
    return samples


def audio():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(46)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (source, text, snr, band) in CLIPS.items():
            voice = speech(source, text, tmp).astype(np.float64)
            voice *= 0.3 / max(np.max(np.abs(voice)), 1e-6)
            clip = np.concatenate([np.zeros(int(0.7 * RATE)), voice, np.zeros(int(0.9 * RATE))])
            # Noise tilted towards the low end, as a line's is, at the SNR asked for over the speech.
            noise = np.cumsum(rng.standard_normal(len(clip))) * 0.02
            noise = noise - lowpass(noise, 40) + rng.standard_normal(len(clip)) * 0.5
            gain = np.sqrt(np.mean(voice ** 2) / np.mean(noise ** 2) / 10 ** (snr / 10))
            clip = clip + noise * gain
            if band:
                clip = phone(clip)
            write(OUT / f"{name}.wav", clip)
            print(f"{name}.wav: {len(clip) / RATE:.2f} s")


def clips():
    return {name: read(OUT / f"{name}.wav")[0] for name in CLIPS}


def silero():
    import torch
    from silero_vad import load_silero_vad

    model = load_silero_vad(onnx=True)
    reference = {}
    for name, samples in clips().items():
        model.reset_states()
        probabilities = []
        for start in range(0, len(samples) - 511, 512):
            chunk = torch.from_numpy(samples[start:start + 512].copy())
            probabilities.append(round(float(model(chunk, RATE).item()), 7))
        reference[name] = probabilities
    (OUT / "silero.json").write_text(json.dumps(reference, indent=1) + "\n")
    print("silero.json:", {k: len(v) for k, v in reference.items()})


def smart_turn():
    from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3

    analyzer = LocalSmartTurnAnalyzerV3(sample_rate=RATE)
    analyzer.set_sample_rate(RATE)
    reference = {}
    for name, samples in clips().items():
        # The whole clip, and the clip cut 1.2 s before its end (mid-utterance or in its last words).
        for label, part in [("whole", samples), ("cut", samples[: len(samples) - int(1.2 * RATE)])]:
            result = analyzer._predict_endpoint(part)
            reference[f"{name}/{label}"] = {"samples": len(part), "probability": round(result["probability"], 7)}
    (OUT / "smart_turn.json").write_text(json.dumps(reference, indent=1) + "\n")
    print(json.dumps(reference, indent=1))


if __name__ == "__main__":
    {"audio": audio, "silero": silero, "smart-turn": smart_turn}[sys.argv[1]]()
