#!/usr/bin/env python3
"""Build the VITS test fixtures: tiny random-weight `VitsModel`s (the real transformers architecture with a small
config) exported to ONNX in the two layouts sauti loads, plus the reference token ids and waveforms that the Rust
tests must reproduce.

    tests/fixtures/vits/mms/     model.onnx + vocab.json + tokenizer_config.json + config.json   (Hugging Face / MMS)
                                 + model.prior.onnx + model.decoder.onnx (the same model split, see vits_split.py)
    tests/fixtures/vits/piper/   sw-tiny.onnx + sw-tiny.onnx.json                                 (Piper, 2 speakers)
    tests/fixtures/vits/reference.json + *.f32 (little-endian float32 waveforms)

Noise scales are 0, so the waveforms are deterministic. Token ids come from transformers' own `VitsTokenizer` (MMS)
and from Piper's id rules applied to `espeak-ng -v sw` phonemes (Piper).

Dev-only; needs `pip install torch transformers onnx onnxruntime onnxscript` and the `espeak-ng` program.
With `--full-size DIR` it instead writes a full-size MMS-TTS model (hidden 192, 6 layers, upsampling [8,8,2,2] from
512 channels) to DIR for the benchmark.
"""

import argparse
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from transformers import VitsConfig, VitsModel, VitsTokenizer

from vits_split import check_split, export_split

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "vits"

# Swahili letters, space and apostrophe, id 0 first (the blank `VitsTokenizer` interleaves).
MMS_VOCAB = ["_", " ", "'"] + list("abcdefghijklmnoprstuvwyz")

# Phonemes our G2P writes (espeak's symbols for Swahili) and Piper's specials.
PIPER_SYMBOLS = ["_", "^", "$", " ", "!", ",", ".", "?", "ˈ", "ˌ", "\u0329"] + [
    "a", "e", "i", "o", "u", "p", "b", "t", "d", "k", "ɡ", "ʃ", "ɟ", "f", "v", "θ", "ð", "s", "z", "ɣ", "x",
    "h", "m", "n", "ɲ", "ŋ", "l", "r", "w", "j",
]

# (text sauti receives, the same text after sauti's normaliser — what the tokenizer reads)
MMS_CASES = [
    ("Habari za asubuhi", "Habari za asubuhi"),
    ("Karibu Tanzania, rafiki yangu!", "Karibu Tanzania, rafiki yangu!"),
    ("Nina shilingi 250.", "Nina shilingi mia mbili na hamsini."),
]
PIPER_CASES = ["Habari yako?", "Karibu sana, rafiki.", "Mtoto anakula ndizi."]
SPEAKING_RATES = [1.0, 1.25]


def tiny_config(**extra):
    return VitsConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64, flow_size=32,
        spectrogram_bins=33, upsample_initial_channel=32, duration_predictor_filter_channels=32,
        duration_predictor_num_flows=2, prior_encoder_num_flows=2, prior_encoder_num_wavenet_layers=2,
        posterior_encoder_num_wavenet_layers=1, depth_separable_num_layers=2, **extra)


class MmsGraph(torch.nn.Module):
    """input_ids [1, T] + scalar noise_scale, length_scale, noise_scale_w → waveform [1, N]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, noise_scale, length_scale, noise_scale_w):
        self.model.noise_scale = noise_scale
        self.model.noise_scale_duration = noise_scale_w
        return self.model(input_ids=input_ids, speaking_rate=1.0 / length_scale).waveform


class PiperGraph(torch.nn.Module):
    """input [1, T], input_lengths [1], scales [3], sid [1] → output [1, 1, N] (Piper's signature)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input, input_lengths, scales, sid):
        mask = (torch.arange(input.shape[1]).unsqueeze(0) < input_lengths.unsqueeze(1)).long()
        self.model.noise_scale = scales[0]
        self.model.noise_scale_duration = scales[2]
        waveform = self.model(input_ids=input, attention_mask=mask, speaker_id=sid,
                              speaking_rate=1.0 / scales[1]).waveform
        return waveform.unsqueeze(1)


def export(module, args, names, dynamic, path):
    # The exporter restores the wrapper's training flag afterwards, recursively: keep it in eval mode.
    module.eval()
    torch.onnx.export(module, args, str(path), opset_version=17, dynamo=False, input_names=names,
                      output_names=["waveform" if "input_ids" in names else "output"], dynamic_axes=dynamic)
    module.eval()


def espeak_ipa(text):
    """Piper's phonemes: espeak-ng IPA per clause, each followed by its punctuation, clauses joined by spaces."""
    parts = []
    for clause, mark in re.findall(r"([^,.?!]+)([,.?!]?)", text):
        if clause.strip():
            out = subprocess.run(["espeak-ng", "-q", "-v", "sw", "--ipa", clause.strip()], check=True,
                                 capture_output=True, text=True).stdout
            parts.append(" ".join(out.split()) + (mark or "."))
    return " ".join(parts)


def piper_ids(ipa, id_map):
    ids = id_map["^"] + id_map["_"]
    for phoneme in ipa:
        if phoneme in id_map:
            ids += id_map[phoneme] + id_map["_"]
    return ids + id_map["$"]


def save_waveform(name, waveform):
    np.asarray(waveform, dtype="<f4").tofile(OUT / f"{name}.f32")
    return f"{name}.f32"


def fixtures():
    torch.manual_seed(7)
    cases = []
    zero = torch.tensor(0.0)

    mms_dir = OUT / "mms"
    mms_dir.mkdir(parents=True, exist_ok=True)
    (mms_dir / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(MMS_VOCAB)}, ensure_ascii=False))
    tokenizer = VitsTokenizer(vocab_file=str(mms_dir / "vocab.json"), add_blank=True, normalize=True,
                              phonemize=False, language="swh")
    tokenizer.save_pretrained(str(mms_dir))
    for extra in ("special_tokens_map.json", "added_tokens.json"):
        (mms_dir / extra).unlink(missing_ok=True)
    model = VitsModel(tiny_config(vocab_size=len(MMS_VOCAB), sampling_rate=16000)).eval()
    model.config.save_pretrained(str(mms_dir))
    ids = torch.tensor([tokenizer(MMS_CASES[0][1])["input_ids"]])
    export(MmsGraph(model), (ids, zero, torch.tensor(1.0), zero),
           ["input_ids", "noise_scale", "length_scale", "noise_scale_w"], {"input_ids": {1: "T"}, "waveform": {1: "N"}},
           mms_dir / "model.onnx")
    export_split(model, ids, mms_dir)
    for n, (text, normalized) in enumerate(MMS_CASES):
        ids = tokenizer(normalized)["input_ids"]
        for rate in SPEAKING_RATES:
            with torch.no_grad():
                model.noise_scale, model.noise_scale_duration = 0.0, 0.0
                wave = model(input_ids=torch.tensor([ids]), speaking_rate=rate).waveform[0].numpy()
            cases.append({"layout": "mms", "text": text, "tokenizer_text": normalized, "ids": ids,
                          "speaking_rate": rate, "speaker": 0, "sample_rate": 16000,
                          "waveform": save_waveform(f"mms-{n}-{rate}", wave), "samples": len(wave)})

    piper_dir = OUT / "piper"
    piper_dir.mkdir(parents=True, exist_ok=True)
    id_map = {symbol: [i] for i, symbol in enumerate(PIPER_SYMBOLS)}
    model = VitsModel(tiny_config(vocab_size=len(PIPER_SYMBOLS), sampling_rate=22050, num_speakers=2,
                                  speaker_embedding_size=8)).eval()
    ids = torch.tensor([piper_ids(espeak_ipa(PIPER_CASES[0]), id_map)])
    export(PiperGraph(model), (ids, torch.tensor([ids.shape[1]]), torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0])),
           ["input", "input_lengths", "scales", "sid"], {"input": {1: "T"}, "output": {2: "N"}},
           piper_dir / "sw-tiny.onnx")
    (piper_dir / "sw-tiny.onnx.json").write_text(json.dumps({
        "audio": {"sample_rate": 22050, "quality": "x_low"},
        "espeak": {"voice": "sw"},
        "inference": {"noise_scale": 0.667, "length_scale": 1.0, "noise_w": 0.8},
        "phoneme_type": "espeak",
        "phoneme_map": {},
        "phoneme_id_map": id_map,
        "num_symbols": len(PIPER_SYMBOLS),
        "num_speakers": 2,
        "speaker_id_map": {"a": 0, "b": 1},
        "language": {"code": "sw"},
        "dataset": "sauti test fixture (random weights)",
    }, ensure_ascii=False, indent=1))
    for n, text in enumerate(PIPER_CASES):
        ipa = espeak_ipa(text)
        ids = piper_ids(ipa, id_map)
        for rate in SPEAKING_RATES:
            speaker = n % 2
            with torch.no_grad():
                model.noise_scale, model.noise_scale_duration = 0.0, 0.0
                wave = model(input_ids=torch.tensor([ids]), speaker_id=speaker, speaking_rate=rate).waveform[0].numpy()
            cases.append({"layout": "piper", "text": text, "ipa": ipa, "ids": ids, "speaking_rate": rate,
                          "speaker": speaker, "sample_rate": 22050,
                          "waveform": save_waveform(f"piper-{n}-{rate}", wave), "samples": len(wave)})

    (OUT / "reference.json").write_text(json.dumps({"cases": cases}, ensure_ascii=False, indent=1))
    check_with_onnxruntime(cases)
    for case in cases[:2]:
        assert check_split(mms_dir, case["ids"], 1.0 / case["speaking_rate"]) < 1e-4


def check_with_onnxruntime(cases):
    """The exported graphs must reproduce transformers before Rust is asked to."""
    sessions = {"mms": onnxruntime.InferenceSession(str(OUT / "mms" / "model.onnx")),
                "piper": onnxruntime.InferenceSession(str(OUT / "piper" / "sw-tiny.onnx"))}
    for case in cases:
        ids = np.array([case["ids"]], dtype=np.int64)
        length = np.array(1.0 / case["speaking_rate"], dtype=np.float32)
        zero = np.array(0.0, dtype=np.float32)
        if case["layout"] == "mms":
            feeds = {"input_ids": ids, "noise_scale": zero, "length_scale": length, "noise_scale_w": zero}
        else:
            feeds = {"input": ids, "input_lengths": np.array([ids.shape[1]], dtype=np.int64),
                     "scales": np.array([0, length, 0], dtype=np.float32),
                     "sid": np.array([case["speaker"]], dtype=np.int64)}
        got = sessions[case["layout"]].run(None, feeds)[0].reshape(-1)
        want = np.fromfile(OUT / case["waveform"], dtype="<f4")
        assert got.shape == want.shape, (case["text"], got.shape, want.shape)
        print(f"{case['layout']:5} {case['text']!r:36} rate {case['speaking_rate']}: {len(want)} samples, "
              f"onnxruntime vs transformers max |diff| {np.abs(got - want).max():.2e}")


def full_size(folder):
    """A full-size MMS-TTS graph (random weights) for the speed benchmark."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(7)
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(MMS_VOCAB)}, ensure_ascii=False))
    tokenizer = VitsTokenizer(vocab_file=str(folder / "vocab.json"), add_blank=True, normalize=True,
                              phonemize=False, language="swh")
    tokenizer.save_pretrained(str(folder))
    model = VitsModel(VitsConfig(vocab_size=len(MMS_VOCAB))).eval()
    model.config.save_pretrained(str(folder))
    model.save_pretrained(str(folder / "transformers"))
    ids = torch.tensor([tokenizer("habari za asubuhi")["input_ids"]])
    zero = torch.tensor(0.0)
    export(MmsGraph(model), (ids, zero, torch.tensor(1.0), zero),
           ["input_ids", "noise_scale", "length_scale", "noise_scale_w"], {"input_ids": {1: "T"}, "waveform": {1: "N"}},
           folder / "model.onnx")
    export_split(model, ids, folder)
    check_split(folder, tokenizer("habari za asubuhi, karibu sana rafiki yangu")["input_ids"])
    print(f"full-size MMS-TTS model in {folder} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full-size", metavar="DIR", help="write a full-size MMS-TTS model to DIR instead")
    arguments = parser.parse_args()
    if arguments.full_size:
        full_size(arguments.full_size)
    else:
        fixtures()
