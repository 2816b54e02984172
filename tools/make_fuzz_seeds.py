#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) from the project's own fixtures.

Seeds are small, valid inputs the fuzzer mutates from: the smaller audio fixtures of every container and codec,
multipart forms carrying them, the normaliser and G2P fixture lines, the scenario files, and small
pronunciation dictionary files (PLS, JSON rules, lexicon TOML). Running the
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

    # Dictionary files: the first byte picks the name uploaded under (0 .pls, 1 .json, 2 .toml, 3 none).
    pls = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="sw">\n'
        "  <lexeme>\n    <grapheme>M-Pesa</grapheme>\n    <grapheme>MPESA</grapheme>\n    <alias>em pesa</alias>\n  </lexeme>\n"
        "  <lexeme>\n    <grapheme>Nairobi</grapheme>\n    <phoneme>nai.\u02c8r\u0254.bi</phoneme>\n"
        "    <example>Nimefika Nairobi.</example>\n  </lexeme>\n"
        "  <lexeme>\n    <grapheme>AT&amp;T</grapheme>\n    <alias><![CDATA[ei ti]]> &#101;n ti</alias>\n  </lexeme>\n"
        "</lexicon>\n"
    ).encode()
    put("dictionary_file", b"\x00" + pls)
    put("dictionary_file", b"\x03" + pls.replace(b"</alias>\n  </lexeme>\n  <lexeme>", b"\n  </lexeme>\n  <lexeme>", 1))
    rules = (
        '{"rules": [{"type": "alias", "string_to_replace": "Sheng", "alias": "sheng\'i"},'
        ' {"type": "alias", "string_to_replace": "Benki Kuu ya Tanzania", "alias": "beoti", "case_sensitive": false},'
        ' {"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "nair\u0254bi", "alphabet": "ipa"}]}'
    ).encode()
    put("dictionary_file", b"\x01" + rules)
    put("dictionary_file", b"\x03" + b'[{"type": "alias", "string_to_replace": "TZ", "alias": "Tanzania"}]')
    put("dictionary_file", b"\x02" + '[spell]\n"Sheng" = "shengi"\n[phonemes]\n"Nairobi" = "n a i r \u0254 b i"\n'.encode())

    for folder in sorted(CORPUS.iterdir()):
        files = list(folder.iterdir())
        print(f"{folder.name:14} {len(files):4} seeds, {sum(f.stat().st_size for f in files):8} bytes")


if __name__ == "__main__":
    main()
