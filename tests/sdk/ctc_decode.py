"""pyctcdecode (pinned in tools/pypi.sh decoders, with KenLM's Python module), unchanged: the reference the CTC
beam search is checked against. Reads a spec of logits files and what to decode them with, and prints the best
beam of each case as JSON.

    python3 ctc_decode.py SPEC.json

SPEC: {"labels": [token text by id], "cases": [{"logits": path (float32, little-endian, frames × labels),
"hotwords": [...], "hotword_weight": w, "beam_width": n, "lm": ARPA path or null, "alpha": a, "beta": b}]}
"""

import json
import sys

import numpy as np
from pyctcdecode import build_ctcdecoder


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    labels = spec["labels"]
    out = []
    for case in spec["cases"]:
        logits = np.fromfile(case["logits"], dtype="<f4").reshape(-1, len(labels))
        decoder = build_ctcdecoder(
            labels,
            kenlm_model_path=case.get("lm"),
            alpha=case.get("alpha", 0.5),
            beta=case.get("beta", 1.5),
        )
        beams = decoder.decode_beams(
            logits,
            beam_width=case.get("beam_width", 100),
            hotwords=case.get("hotwords") or None,
            hotword_weight=case.get("hotword_weight", 10.0),
        )
        text, _, frames, logit_score, lm_score = beams[0]
        out.append({
            "text": text,
            "words": [[word, int(start), int(end)] for word, (start, end) in frames],
            "logit_score": float(logit_score),
            "score": float(lm_score),
        })
    json.dump(out, sys.stdout, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
