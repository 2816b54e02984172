#!/usr/bin/env python3
"""Export a Hugging Face MMS-TTS checkpoint (e.g. `sauti models fetch mms-tts-swh`) to the ONNX graph sauti loads:
`model.onnx` beside the checkpoint's vocab.json / tokenizer_config.json / config.json, taking `input_ids` and the
scalar controls `noise_scale`, `length_scale` and `noise_scale_w`; and the same model split in two
(`model.prior.onnx`, `model.decoder.onnx`, see vits_split.py), with which sauti streams the voice window by window
and times its words.

    python3 tools/export_mms_tts.py models/mms-tts-swh

Dev-only; needs `pip install torch transformers onnx onnxscript`. Meta publishes no ONNX graph for MMS-TTS.
"""

import sys
from pathlib import Path

import torch
from transformers import VitsModel, VitsTokenizer

from make_vits_fixtures import MmsGraph, export
from vits_split import check_split, export_split


def main(folder):
    folder = Path(folder)
    model = VitsModel.from_pretrained(str(folder)).eval()
    tokenizer = VitsTokenizer.from_pretrained(str(folder))
    ids = torch.tensor([tokenizer("habari za asubuhi")["input_ids"]])
    zero = torch.tensor(0.0)
    export(MmsGraph(model), (ids, zero, torch.tensor(1.0), zero),
           ["input_ids", "noise_scale", "length_scale", "noise_scale_w"],
           {"input_ids": {1: "T"}, "waveform": {1: "N"}}, folder / "model.onnx")
    export_split(model, ids, folder)
    check_split(folder, tokenizer("habari za asubuhi, karibu sana")["input_ids"])
    print(f"wrote model.onnx, model.prior.onnx and model.decoder.onnx in {folder}; the voice mms-swh in config/default.toml reads this folder")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
