#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) from the project's own fixtures.

Seeds are small, valid inputs the fuzzer mutates from: the smaller audio fixtures of every container and codec,
multipart forms carrying them, the normaliser and G2P fixture lines, and the scenario files. Running the
fuzzers adds to these corpora; `cargo fuzz cmin` keeps them small before they are committed
(tests/fuzz/README.md). Seeds are named by content hash, so running this again adds nothing twice.

Usage: python3 tools/make_fuzz_seeds.py
"""

import hashlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
AUDIO = ROOT / "tests" / "fixtures" / "audio"
# Fixtures up to this size seed the audio targets; larger ones only slow the fuzzer down.
MAX_AUDIO_SEED = 10_000
BOUNDARY = b"sauti-fuzz"  # the boundary the upload_form target declares


def put(target: str, data: bytes) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def form(parts: list[tuple[str, str | None, str | None, bytes]]) -> bytes:
    """A multipart/form-data body: (name, filename, content type, value) per part."""
    body = b""
    for name, filename, content_type, value in parts:
        body += b"--" + BOUNDARY + b"\r\n"
        disposition = f'Content-Disposition: form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        body += disposition.encode() + b"\r\n"
        if content_type is not None:
            body += f"Content-Type: {content_type}\r\n".encode()
        body += b"\r\n" + value + b"\r\n"
    return body + b"--" + BOUNDARY + b"--\r\n"


def tsv_inputs(name: str) -> list[str]:
    lines = (ROOT / "tests" / "fixtures" / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[0] for line in lines if line and not line.startswith("#")]


def main() -> None:
    small = sorted(p for p in AUDIO.iterdir() if p.stat().st_size <= MAX_AUDIO_SEED)
    for path in small:
        put("audio_decode", path.read_bytes())
    for path in small[:4]:
        kind = "audio/webm" if path.suffix == ".webm" else "application/octet-stream"
        put("upload_form", form([("language", None, None, b"sw"), ("audio", path.name, kind, path.read_bytes())]))
    put("upload_form", form([("name", None, None, b"Sauti yangu"), ("audio", "a.wav", "audio/wav", b"RIFF")]))
    put("upload_form", form([("audio", None, None, b"")]))

    texts = tsv_inputs("normalize.tsv")
    for text in texts:
        put("normalize", text.encode())
    # Whole sentences mixing the cases, as clients send them.
    for i in range(0, len(texts), 12):
        put("normalize", " ".join(texts[i : i + 12]).encode())
    for word in tsv_inputs("g2p.tsv"):
        put("g2p", word.encode())
    put("g2p", "Habari za asubuhi, rafiki! Unaendeleaje? Mimi ni mzima.".encode())

    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        put("scenario", path.read_bytes())
    put(
        "scenario",
        b'id = "fuzz"\nname = "Fuzz"\nlanguage = "sw"\ngreeting = "Habari"\nfallback = ["Samahani"]\n\n'
        b'[[intents]]\nid = "greet"\nexamples = ["habari"]\nreply = "Salama"\n',
    )

    for folder in sorted(CORPUS.iterdir()):
        files = list(folder.iterdir())
        print(f"{folder.name:14} {len(files):4} seeds, {sum(f.stat().st_size for f in files):8} bytes")


if __name__ == "__main__":
    main()
