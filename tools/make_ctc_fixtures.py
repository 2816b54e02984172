#!/usr/bin/env python3
"""Build the CTC recognition fixtures: a tiny random-weight `Wav2Vec2ForCTC` (the real transformers architecture,
XLS-R's layout: layer-normalised feature encoder, stable layer norm, a character vocabulary with `[PAD]` as the CTC
blank, `[UNK]` and `|` between words) exported to ONNX the way tools/export_ctc.py exports real models, plus the
logits, greedy transcripts and word offsets that the Rust tests must reproduce.

    tests/fixtures/ctc/model/    model.onnx, config.json, vocab.json, preprocessor_config.json,
                                 tokenizer_config.json
    (the audio inputs are the Whisper fixtures' 16 kHz mono WAV files, named relative to tests/fixtures/ctc)
    tests/fixtures/ctc/reference.json + *.f32   logits (little-endian float32, [frames, vocab] row-major),
                                 transformers' greedy transcript and its word offsets (in frames)

The lm_head is scaled up so that the random model changes its mind from frame to frame, and biased towards the blank
and the word delimiter: the transcripts then have several words, repeats and blanks, which is what the decoder and
the alignment must get right.

Dev-only; needs `pip install torch transformers onnx onnxruntime` (tools/python-env.sh).
With `--size xlsr-300m DIR` it instead writes a model of XLS-R-300m's size (random weights, a word delimiter about
every 0.3 s; the ONNX graph and the transformers checkpoint) to DIR for the benchmark.
"""

import argparse
import json
import wave
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from transformers import Wav2Vec2Config, Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "ctc"
AUDIO = ["speech.wav", "tones.wav", "mix.wav"]

LETTERS = list("abcdefghijklmnopqrstuvwxyz'")


def vocabulary():
    vocab = {"[PAD]": 0, "[UNK]": 1, "|": 2}
    for letter in LETTERS:
        vocab[letter] = len(vocab)
    return vocab


def config_for(size, vocab):
    common = dict(
        vocab_size=len(vocab),
        pad_token_id=vocab["[PAD]"],
        feat_extract_norm="layer",
        do_stable_layer_norm=True,
        conv_bias=True,
        ctc_loss_reduction="mean",
        mask_time_prob=0.0,
    )
    if size == "xlsr-300m":
        return Wav2Vec2Config(
            hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, **common
        )
    return Wav2Vec2Config(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(32,) * 7,
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        **common,
    )


def read_wav(path):
    with wave.open(str(path), "rb") as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def build(size, out):
    torch.manual_seed(27)
    vocab = vocabulary()
    model = Wav2Vec2ForCTC(config_for(size, vocab)).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(40.0)
        # Blanks and word delimiters often enough for several words, as a trained model has them.
        probe = torch.from_numpy(read_wav(ROOT / "tests" / "fixtures" / "whisper" / "speech.wav"))[None]
        spread = float(model(probe).logits.std())
        model.lm_head.bias[vocab["[PAD]"]] += 1.2 * spread
        model.lm_head.bias[vocab["|"]] += 0.9 * spread
        if size != "tiny":
            # Words of a trained model's length (a delimiter about every 15 frames, 0.3 s), so that what reads
            # speech in pieces meets words as long as speech has: the delimiter wins that share of the frames.
            heard = (probe - probe.mean()) / torch.sqrt(probe.var() + 1e-7)
            logits = model(heard).logits[0]
            delimiter = logits[:, vocab["|"]].clone()
            logits[:, vocab["|"]] = -float("inf")
            margin = logits.max(-1).values - delimiter
            model.lm_head.bias[vocab["|"]] += float(torch.quantile(margin, 1.0 / 15.0))
    out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(out)
    (out / "vocab.json").write_text(json.dumps(vocab, indent=1) + "\n")
    tokenizer = Wav2Vec2CTCTokenizer(
        str(out / "vocab.json"), unk_token="[UNK]", pad_token="[PAD]", word_delimiter_token="|"
    )
    tokenizer.save_pretrained(out)
    for extra in ["special_tokens_map.json", "added_tokens.json"]:
        (out / extra).unlink(missing_ok=True)
    extractor = Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=True
    )
    extractor.save_pretrained(out)
    example = torch.zeros(1, 16000)
    torch.onnx.export(
        model,
        (example,),
        str(out / "model.onnx"),
        input_names=["input_values"],
        output_names=["logits"],
        dynamic_axes={"input_values": {0: "batch", 1: "samples"}, "logits": {0: "batch", 1: "frames"}},
        opset_version=17,
        dynamo=False,
    )
    return model, tokenizer, extractor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=["tiny", "xlsr-300m"], default="tiny")
    parser.add_argument("dir", nargs="?", type=Path)
    args = parser.parse_args()
    if args.size != "tiny":
        model, _, _ = build(args.size, args.dir)
        # The benchmark's transformers reference loads the same weights.
        model.save_pretrained(args.dir)
        print(f"wrote {args.dir}")
        return

    model, tokenizer, extractor = build("tiny", OUT / "model")
    session = onnxruntime.InferenceSession(str(OUT / "model" / "model.onnx"))
    ratio = int(np.prod(model.config.conv_stride))
    cases = []
    for name in AUDIO:
        audio = f"../whisper/{name}"
        samples = read_wav(OUT / audio)
        inputs = extractor(samples, sampling_rate=16000, return_tensors="pt")
        with torch.no_grad():
            logits = model(inputs.input_values).logits[0].numpy()
        onnx_logits = session.run(None, {"input_values": inputs.input_values.numpy()})[0][0]
        worst = float(np.abs(onnx_logits - logits).max())
        assert worst < 1e-3, f"{name}: the ONNX graph differs from transformers by {worst}"
        ids = logits.argmax(-1)
        # Special tokens are kept: transformers would drop the blanks before merging repeats otherwise, which is not
        # CTC decoding. `[UNK]` stays in the words here; sauti leaves it out of the text (the test knows).
        decoded = tokenizer.decode(ids, output_word_offsets=True, skip_special_tokens=False)
        stem = name.removesuffix(".wav")
        logits.astype("<f4").tofile(OUT / f"{stem}-logits.f32")
        words = [
            {"word": w["word"], "start_offset": int(w["start_offset"]), "end_offset": int(w["end_offset"])}
            for w in decoded.word_offsets
        ]
        assert len(words) >= 2, f"{name}: the random model says too little to test with: {decoded.text!r}"
        cases.append(
            {
                "audio": audio,
                "logits": f"{stem}-logits.f32",
                "frames": int(logits.shape[0]),
                "vocab": int(logits.shape[1]),
                "text": decoded.text,
                "words": words,
            }
        )
        print(f"{name}: {logits.shape[0]} frames, {len(words)} words, onnx max |diff| {worst:.2e}")
    reference = {"inputs_to_logits_ratio": ratio, "sampling_rate": 16000, "cases": cases}
    (OUT / "reference.json").write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
