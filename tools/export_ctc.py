#!/usr/bin/env python3
"""Export a CTC acoustic model (transformers `Wav2Vec2ForCTC`: wav2vec2, XLS-R, MMS fine-tunes) to the folder sauti's
CTC engine reads ([[asr.ctc]] in config/default.toml):

    DIR/model.onnx             input_values [batch, samples] -> logits [batch, frames, vocabulary] (fp32)
    DIR/model_quantized.onnx   the same with int8 weights (onnxruntime quantize_dynamic; asr.ctc variant "_quantized")
    DIR/config.json  vocab.json  tokenizer_config.json  preprocessor_config.json

    python3 tools/export_ctc.py Akashpb13/Swahili_xlsr models/swahili-xlsr
    python3 tools/export_ctc.py path/to/local/checkpoint models/my-ctc

SOURCE is a Hugging Face model id or a local folder. MMS checkpoints with language adapters take `--adapter swh`.
The export is checked against transformers on 3 s of noise before anything is written (largest logit difference
printed). Dev-only; needs `pip install torch transformers onnx onnxruntime` (tools/python-env.sh).
"""

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import AutoProcessor, Wav2Vec2ForCTC


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source", help="Hugging Face model id or local folder")
    parser.add_argument("dir", type=Path, help="the folder to write")
    parser.add_argument("--adapter", help="MMS language adapter to load (e.g. swh)")
    parser.add_argument("--no-int8", action="store_true", help="skip model_quantized.onnx")
    args = parser.parse_args()

    load = {"target_lang": args.adapter, "ignore_mismatched_sizes": True} if args.adapter else {}
    processor = AutoProcessor.from_pretrained(args.source, **({"target_lang": args.adapter} if args.adapter else {}))
    model = Wav2Vec2ForCTC.from_pretrained(args.source, **load).eval()
    if args.adapter:
        model.load_adapter(args.adapter)

    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        graph = Path(scratch) / "model.onnx"
        example = torch.zeros(1, 16000)
        torch.onnx.export(
            model,
            (example,),
            str(graph),
            input_names=["input_values"],
            output_names=["logits"],
            dynamic_axes={"input_values": {0: "batch", 1: "samples"}, "logits": {0: "batch", 1: "frames"}},
            opset_version=17,
            dynamo=False,
        )
        noise = np.random.default_rng(27).standard_normal((1, 48000)).astype(np.float32)
        with torch.no_grad():
            expected = model(torch.from_numpy(noise)).logits.numpy()
        got = onnxruntime.InferenceSession(str(graph)).run(None, {"input_values": noise})[0]
        worst = float(np.abs(got - expected).max())
        print(f"fp32 graph: largest logit difference from transformers {worst:.2e}")
        if worst > 1e-2:
            raise SystemExit("the exported graph does not reproduce transformers; nothing written")
        target = args.dir / "model.onnx"
        target.write_bytes(graph.read_bytes())
        external = Path(scratch) / "model.onnx.data"
        if external.exists():
            raise SystemExit("the graph needs external weight data, which sauti does not load; nothing more written")
    if not args.no_int8:
        quantize_dynamic(str(args.dir / "model.onnx"), str(args.dir / "model_quantized.onnx"), weight_type=QuantType.QInt8)
        print("int8 graph: model_quantized.onnx")

    model.config.save_pretrained(args.dir)
    processor.save_pretrained(args.dir)
    # preprocessor_config.json (do_normalize, sampling_rate) on its own, whatever the processor layout.
    getattr(processor, "feature_extractor", processor).save_pretrained(args.dir)
    vocab = args.dir / "vocab.json"
    tokens = json.loads(vocab.read_text())
    if args.adapter and args.adapter in tokens:
        # MMS keeps one vocabulary per language; sauti reads the flat token -> id map of the chosen one.
        vocab.write_text(json.dumps(tokens[args.adapter], ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {args.dir}")


if __name__ == "__main__":
    main()
