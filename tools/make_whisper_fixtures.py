#!/usr/bin/env python3
"""Build the Whisper test fixtures: a tiny random-weight `WhisperForConditionalGeneration` (the real transformers
architecture with a small config and a small byte-level BPE vocabulary carrying Whisper's special tokens) exported
to ONNX in the layouts Hugging Face optimum publishes, plus the log-mel features and greedy token ids that the Rust
tests must reproduce.

    tests/fixtures/whisper/model/   encoder_model.onnx, decoder_model.onnx, decoder_with_past_model.onnx,
                                    decoder_model_merged.onnx, tokenizer.json, config.json, generation_config.json,
                                    preprocessor_config.json
    tests/fixtures/whisper/*.wav    the audio inputs (16 kHz mono PCM16)
    tests/fixtures/whisper/reference.json + *.f32   features (little-endian float32, [bins, frames] row-major)

Features come from transformers' `WhisperFeatureExtractor` (80 and 128 bins); token ids from `generate()` with a
forced language, plain, with timestamps (`return_timestamps=True`: the vocabulary ends in Whisper's 1,501
timestamp tokens) and after a prompt (`prompt_ids`). The tool also runs the exported graphs in ONNX Runtime with a plain greedy loop over the KV cache
and refuses to write fixtures the graphs do not reproduce.

Dev-only; needs `pip install torch transformers onnx onnxruntime onnxscript tokenizers` (tools/python-env.sh).
With `--size base DIR` it instead writes a whisper-base-size model (random weights, the real 51,865-token layout)
to DIR for the benchmark.
"""

import argparse
import hashlib
import json
import wave
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration
from transformers.generation.logits_process import (SuppressTokensAtBeginLogitsProcessor,
                                                    SuppressTokensLogitsProcessor, WhisperTimeStampLogitsProcessor)
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "whisper"

# Whisper's language tokens, in the order of its vocabulary.
LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi "
    "ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd "
    "gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su"
).split()
TASKS = ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]

CORPUS = [
    "habari za asubuhi", "karibu tanzania rafiki yangu", "nina shilingi mia mbili na hamsini",
    "salio lako ni shilingi elfu kumi na mbili", "tawi letu liko wazi kuanzia saa mbili asubuhi",
    "asante kwa kutuchagua na uwe na siku njema", "ningependa kutuma pesa kwa mama yangu",
    "daktari atakuona kesho saa tatu", "good morning how can i help you today",
]

# (audio fixture, language) → tokens of generate() with that language forced.
CASES = [("speech.wav", "sw"), ("tones.wav", "sw"), ("mix.wav", "sw"), ("speech.wav", "en")]
# The same with timestamps.
TIMED_CASES = [("speech.wav", "sw"), ("mix.wav", "en"), ("tones.wav", "sw")]
# (audio, language, the text before) → tokens of generate() after that prompt.
PROMPTED_CASES = [("speech.wav", "sw", "Mteja anauliza kuhusu salio M-Pesa, Kariakoo"),
                  ("mix.wav", "en", "Good morning, the branch opens at eight")]
MAX_NEW_TOKENS = 24


def write_wav(path, samples):
    pcm = np.clip(np.round(samples * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(pcm.tobytes())


def read_wav(path):
    with wave.open(str(path), "rb") as f:
        assert f.getframerate() == 16000 and f.getnchannels() == 1 and f.getsampwidth() == 2
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def audio_inputs():
    """Three deterministic inputs: a voiced syllable train, a tone sweep with gaps, and 12 s of mixed sound."""
    rng = np.random.default_rng(11)
    t = np.arange(int(2.5 * 16000)) / 16000
    envelope = np.clip(np.sin(2 * np.pi * 3.1 * t), 0, None) ** 0.7
    voiced = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate([140, 280, 420, 560, 700, 1200], 1))
    speech = 0.25 * envelope * voiced / 2.5 + 0.01 * rng.standard_normal(t.size)
    t = np.arange(int(1.7 * 16000)) / 16000
    tones = 0.4 * np.sin(2 * np.pi * (300 + 900 * t) * t) * (np.sin(2 * np.pi * 1.5 * t) > -0.3)
    t = np.arange(12 * 16000) / 16000
    mix = 0.2 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 0.4 * t) > 0) + 0.05 * rng.standard_normal(t.size)
    return {"speech.wav": speech, "tones.wav": tones, "mix.wav": mix}


def tokenizer(vocab_size):
    """A byte-level BPE like Whisper's, then Whisper's special tokens in Whisper's order."""
    model = Tokenizer(models.BPE())
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    model.train_from_iterator(CORPUS * 4, trainer=trainer)
    specials = (["<|endoftext|>", "<|startoftranscript|>"] + [f"<|{code}|>" for code in LANGUAGES] + TASKS
                + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
    model.add_special_tokens(specials)
    assert model.token_to_id("<|0.00|>") == model.token_to_id("<|notimestamps|>") + 1
    return model


def config_for(size, vocab):
    ids = {token: vocab.token_to_id(token) for token in ["<|endoftext|>", "<|startoftranscript|>"]}
    eot, sot = ids["<|endoftext|>"], ids["<|startoftranscript|>"]
    common = dict(vocab_size=vocab.get_vocab_size(), max_source_positions=1500, max_target_positions=448,
                  pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, decoder_start_token_id=sot,
                  attn_implementation="eager")
    if size == "tiny":
        return WhisperConfig(num_mel_bins=80, d_model=64, encoder_layers=2, encoder_attention_heads=4,
                             decoder_layers=2, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                             init_std=0.2, **common)
    return WhisperConfig(num_mel_bins=80, d_model=512, encoder_layers=6, encoder_attention_heads=8,
                         decoder_layers=6, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                         **common)


def generation_config(vocab, model_config):
    token = vocab.token_to_id
    space = vocab.encode(" ").ids
    # Whisper suppresses a list of punctuation-like tokens; here: a few ordinary ones plus the task tokens.
    suppress = sorted({token("<|translate|>"), token("<|transcribe|>"), token("<|startoflm|>"),
                       token("<|startofprev|>"), token("<|startoftranscript|>"), 7, 11, 13, 17, 19})
    return GenerationConfig(
        decoder_start_token_id=token("<|startoftranscript|>"), eos_token_id=token("<|endoftext|>"),
        pad_token_id=token("<|endoftext|>"), bos_token_id=token("<|endoftext|>"), max_length=448,
        lang_to_id={f"<|{code}|>": token(f"<|{code}|>") for code in LANGUAGES},
        task_to_id={"translate": token("<|translate|>"), "transcribe": token("<|transcribe|>")},
        no_timestamps_token_id=token("<|notimestamps|>"), is_multilingual=True,
        suppress_tokens=suppress, begin_suppress_tokens=space + [token("<|endoftext|>")],
        max_initial_timestamp_index=50,
    )


class Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.model.encoder

    def forward(self, input_features):
        return self.encoder(input_features=input_features).last_hidden_state


def flat_presents(cache, layers, with_encoder):
    out = []
    for i in range(layers):
        out += [cache.self_attention_cache.layers[i].keys, cache.self_attention_cache.layers[i].values]
        if with_encoder:
            out += [cache.cross_attention_cache.layers[i].keys, cache.cross_attention_cache.layers[i].values]
    return out


class Decoder(torch.nn.Module):
    """input_ids, encoder_hidden_states → logits, present.{i}.{decoder,encoder}.{key,value}."""

    def __init__(self, model):
        super().__init__()
        self.model, self.layers = model, model.config.decoder_layers

    def forward(self, input_ids, encoder_hidden_states):
        cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        out = self.model.model.decoder(input_ids=input_ids, encoder_hidden_states=encoder_hidden_states,
                                       past_key_values=cache, use_cache=True, position_ids=positions)
        return (self.model.proj_out(out.last_hidden_state), *flat_presents(out.past_key_values, self.layers, True))


class DecoderWithPast(torch.nn.Module):
    """input_ids, past_key_values.{i}.{decoder,encoder}.{key,value} → logits, present.{i}.decoder.{key,value}."""

    def __init__(self, model):
        super().__init__()
        self.model, self.layers = model, model.config.decoder_layers

    def forward(self, input_ids, *past):
        cache = EncoderDecoderCache([tuple(past[4 * i:4 * i + 4]) for i in range(self.layers)])
        positions = (torch.arange(input_ids.shape[1]) + past[0].shape[2]).unsqueeze(0)
        # Cross-attention reads the cached encoder keys; the states only have to be present.
        states = past[2].new_zeros((input_ids.shape[0], 1, self.model.config.d_model))
        out = self.model.model.decoder(input_ids=input_ids, encoder_hidden_states=states, past_key_values=cache,
                                       use_cache=True, position_ids=positions)
        return (self.model.proj_out(out.last_hidden_state), *flat_presents(out.past_key_values, self.layers, False))


def kv_names(prefix, layers, with_encoder):
    names = []
    for i in range(layers):
        names += [f"{prefix}.{i}.decoder.key", f"{prefix}.{i}.decoder.value"]
        if with_encoder:
            names += [f"{prefix}.{i}.encoder.key", f"{prefix}.{i}.encoder.value"]
    return names


def export(model, out):
    model.eval()
    layers, heads = model.config.decoder_layers, model.config.decoder_attention_heads
    head_dim = model.config.d_model // heads
    features = torch.randn(1, model.config.num_mel_bins, 3000)
    torch.onnx.export(Encoder(model).eval(), (features,), str(out / "encoder_model.onnx"), opset_version=17,
                      dynamo=False, input_names=["input_features"], output_names=["last_hidden_state"],
                      dynamic_axes={"input_features": {0: "batch_size"}, "last_hidden_state": {0: "batch_size"}})
    states = torch.randn(1, 1500, model.config.d_model)
    ids = torch.tensor([[model.config.decoder_start_token_id, 5, 6, 7]])
    presents = kv_names("present", layers, True)
    dynamic = {"input_ids": {0: "batch_size", 1: "decoder_sequence_length"},
               "encoder_hidden_states": {0: "batch_size", 1: "encoder_sequence_length"},
               "logits": {0: "batch_size", 1: "decoder_sequence_length"}}
    for name in presents:
        dynamic[name] = {0: "batch_size", 2: "decoder_sequence_length" if "decoder" in name else "encoder_sequence_length"}
    torch.onnx.export(Decoder(model).eval(), (ids, states), str(out / "decoder_model.onnx"), opset_version=17,
                      dynamo=False, input_names=["input_ids", "encoder_hidden_states"],
                      output_names=["logits"] + presents, dynamic_axes=dynamic)
    past = []
    for i in range(layers):
        past += [torch.randn(1, heads, 4, head_dim), torch.randn(1, heads, 4, head_dim),
                 torch.randn(1, heads, 1500, head_dim), torch.randn(1, heads, 1500, head_dim)]
    past_names = kv_names("past_key_values", layers, True)
    dynamic = {"input_ids": {0: "batch_size", 1: "decoder_sequence_length"}, "logits": {0: "batch_size", 1: "decoder_sequence_length"}}
    for name in past_names:
        dynamic[name] = {0: "batch_size", 2: "past_decoder_sequence_length" if "decoder" in name else "encoder_sequence_length_out"}
    for name in kv_names("present", layers, False):
        dynamic[name] = {0: "batch_size", 2: "past_decoder_sequence_length + 1"}
    torch.onnx.export(DecoderWithPast(model).eval(), (ids[:, :1], *past), str(out / "decoder_with_past_model.onnx"),
                      opset_version=17, dynamo=False, input_names=["input_ids"] + past_names,
                      output_names=["logits"] + kv_names("present", layers, False), dynamic_axes=dynamic)
    merge(out, layers)


def merge(out, layers):
    """decoder_model_merged.onnx as optimum lays it out: every input of both graphs plus a boolean
    `use_cache_branch`; an If node runs the with-past graph (passing the encoder keys through) or the first-step
    graph. Identical weights are stored once, in the outer graph."""
    first = onnx.load(str(out / "decoder_model.onnx"))
    cached = onnx.load(str(out / "decoder_with_past_model.onnx"))
    initializers, by_digest = [], {}

    outputs = ["logits"] + kv_names("present", layers, True)

    def lift(graph, prefix):
        """Weights move to the outer graph (deduplicated); the branch's outputs get names of their own, since
        a subgraph may not redefine the merged graph's output names."""
        renamed = {}
        for tensor in graph.initializer:
            named = onnx.TensorProto()
            named.CopyFrom(tensor)
            named.name = ""
            digest = hashlib.sha256(named.SerializeToString()).hexdigest()
            if digest not in by_digest:
                by_digest[digest] = f"shared_{len(by_digest)}"
                copy = onnx.TensorProto()
                copy.CopyFrom(tensor)
                copy.name = by_digest[digest]
                initializers.append(copy)
            renamed[tensor.name] = by_digest[digest]
        del graph.initializer[:]
        for node in graph.node:
            node.input[:] = [renamed.get(name, f"{prefix}:{name}" if name in outputs else name) for name in node.input]
            node.output[:] = [f"{prefix}:{name}" if name in outputs else name for name in node.output]

    lift(first.graph, "first")
    lift(cached.graph, "cached")
    for i in range(layers):
        for part in ("key", "value"):
            cached.graph.node.append(onnx.helper.make_node(
                "Identity", [f"past_key_values.{i}.encoder.{part}"], [f"cached:present.{i}.encoder.{part}"],
                name=f"cached/pass_encoder_{i}_{part}"))
    by_name = {o.name: o for o in first.graph.output}

    def renamed(name, new_name):
        info = onnx.ValueInfoProto()
        info.CopyFrom(by_name[name])
        info.name = new_name
        return info

    branch_outputs = lambda prefix: [renamed(name, f"{prefix}:{name}") for name in outputs]
    then_graph = onnx.helper.make_graph(list(cached.graph.node), "with_past", [], branch_outputs("cached"))
    else_graph = onnx.helper.make_graph(list(first.graph.node), "first_step", [], branch_outputs("first"))
    inputs = list(first.graph.input) + [i for i in cached.graph.input if i.name != "input_ids"]
    inputs.append(onnx.helper.make_tensor_value_info("use_cache_branch", onnx.TensorProto.BOOL, [1]))
    node = onnx.helper.make_node("If", ["use_cache_branch"], outputs, name="optimum::if",
                                 then_branch=then_graph, else_branch=else_graph)
    merged_outputs = [renamed(name, name) for name in outputs]
    graph = onnx.helper.make_graph([node], "decoder_merged", inputs, merged_outputs, initializer=initializers)
    model = onnx.helper.make_model(graph, opset_imports=first.opset_import)
    model.ir_version = first.ir_version
    onnx.checker.check_model(model)
    onnx.save(model, str(out / "decoder_model_merged.onnx"))


def session(path):
    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def ort_greedy(out, features, prompt, generation, layers, heads, head_dim, merged, processors=None):
    """The loop sauti runs: the first step on the prompt, then one token at a time over the KV cache. With
    `processors` (transformers' logits processors), they choose what may follow instead of the suppress lists."""
    encoder = session(out / "encoder_model.onnx")
    states = encoder.run(None, {"input_features": features})[0]
    suppress = set(generation.suppress_tokens)
    begin = set(generation.begin_suppress_tokens)
    eot = generation.eos_token_id
    tokens, past = [], {}
    if merged:
        decoder = session(out / "decoder_model_merged.onnx")
        names = [o.name for o in decoder.get_outputs()]
    else:
        first, cached = session(out / "decoder_model.onnx"), session(out / "decoder_with_past_model.onnx")
    ids = np.array([prompt], dtype=np.int64)
    for step in range(MAX_NEW_TOKENS):
        if merged:
            feeds = {"input_ids": ids, "encoder_hidden_states": states,
                     "use_cache_branch": np.array([step > 0])}
            for name in kv_names("past_key_values", layers, True):
                feeds[name] = past.get(name, np.zeros((1, heads, 0, head_dim), dtype=np.float32))
            result = dict(zip(names, decoder.run(None, feeds)))
        elif step == 0:
            result = dict(zip([o.name for o in first.get_outputs()],
                              first.run(None, {"input_ids": ids, "encoder_hidden_states": states})))
        else:
            result = dict(zip([o.name for o in cached.get_outputs()],
                              cached.run(None, {"input_ids": ids, **past})))
        for name, value in result.items():
            if name.startswith("present") and (step == 0 or ".decoder." in name):
                past[name.replace("present", "past_key_values")] = value
        if processors is not None:
            scores = torch.from_numpy(result["logits"][0, -1:].copy())
            seen = torch.tensor([prompt + tokens])
            for processor in processors:
                scores = processor(seen, scores)
            token = int(torch.argmax(scores[0]))
        else:
            logits = result["logits"][0, -1].astype(np.float64)
            logits[list(suppress)] = -np.inf
            if step == 0:
                logits[list(begin)] = -np.inf
            token = int(np.argmax(logits))
        if token == eot:
            break
        tokens.append(token)
        ids = np.array([[token]], dtype=np.int64)
    return tokens


def fixtures():
    torch.manual_seed(3)
    model_dir = OUT / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    vocab = tokenizer(320)
    vocab.save(str(model_dir / "tokenizer.json"))
    config = config_for("tiny", vocab)
    model = WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():
        # Random embeddings make every token as likely as any other; a trained Whisper writes timestamps only
        # where asked to. Smaller timestamp embeddings (the output projection is tied to them) keep them out of
        # plain transcripts while their 1,501 probabilities together still win often enough to be placed.
        model.model.decoder.embed_tokens.weight[vocab.token_to_id("<|0.00|>"):] *= 0.1
    generation = generation_config(vocab, config)
    model.generation_config = generation
    config.save_pretrained(str(model_dir))
    generation.save_pretrained(str(model_dir))
    extractor = WhisperFeatureExtractor(feature_size=80)
    extractor.save_pretrained(str(model_dir))
    export(model, model_dir)

    references = {"features": [], "transcripts": [], "max_new_tokens": MAX_NEW_TOKENS}
    inputs = audio_inputs()
    for name, samples in inputs.items():
        write_wav(OUT / name, samples)
    for name in inputs:
        samples = read_wav(OUT / name)
        for bins in (80, 128):
            if bins == 128 and name != "speech.wav":
                continue
            features = WhisperFeatureExtractor(feature_size=bins)(samples, sampling_rate=16000,
                                                                  return_tensors="np").input_features[0]
            # Frames past the audio are one constant (the floor); store those that vary and the floor.
            varying = min(3000, samples.size // 160 + 4)
            floor = features[:, varying:]
            assert floor.size == 0 or np.ptp(floor) == 0, "padding frames are not constant"
            file = f"{Path(name).stem}-{bins}.f32"
            np.ascontiguousarray(features[:, :varying], dtype="<f4").tofile(OUT / file)
            references["features"].append({"audio": name, "bins": bins, "frames": varying, "file": file,
                                           "floor": float(floor.flat[0]) if floor.size else None})
    layers, heads = config.decoder_layers, config.decoder_attention_heads
    for name, language in CASES:
        samples = read_wav(OUT / name)
        features = extractor(samples, sampling_rate=16000, return_tensors="pt").input_features
        with torch.no_grad():
            out = model.generate(features, language=language, task="transcribe", return_timestamps=False,
                                 max_new_tokens=MAX_NEW_TOKENS, do_sample=False, num_beams=1)
        sequence = out[0].tolist() if not hasattr(out, "sequences") else out.sequences[0].tolist()
        prompt = [generation.decoder_start_token_id, vocab.token_to_id(f"<|{language}|>"),
                  vocab.token_to_id("<|transcribe|>"), vocab.token_to_id("<|notimestamps|>")]
        generated = sequence[len(prompt):] if sequence[:len(prompt)] == prompt else sequence
        generated = [t for t in generated if t != generation.eos_token_id]
        for merged in (False, True):
            looped = ort_greedy(model_dir, features.numpy(), prompt, generation, layers, heads,
                                config.d_model // heads, merged)
            assert looped == generated, f"{name}/{language} merged={merged}: ONNX {looped} != generate {generated}"
        references["transcripts"].append({"audio": name, "language": language, "prompt": prompt,
                                          "tokens": generated,
                                          "text": vocab.decode(generated, skip_special_tokens=True)})
    references["timed"] = []
    for name, language in TIMED_CASES:
        samples = read_wav(OUT / name)
        features = extractor(samples, sampling_rate=16000, return_tensors="pt").input_features
        prompt = [generation.decoder_start_token_id, vocab.token_to_id(f"<|{language}|>"),
                  vocab.token_to_id("<|transcribe|>")]
        # One window, as generate() decodes it before it seeks on: transformers' own processors, in its order.
        processors = [SuppressTokensAtBeginLogitsProcessor(generation.begin_suppress_tokens, len(prompt)),
                      SuppressTokensLogitsProcessor(generation.suppress_tokens),
                      WhisperTimeStampLogitsProcessor(generation, begin_index=len(prompt))]
        generated = []
        for merged in (False, True):
            looped = ort_greedy(model_dir, features.numpy(), prompt, generation, layers, heads,
                                config.d_model // heads, merged, processors)
            assert not generated or looped == generated, f"{name} timed: the layouts differ"
            generated = looped
        assert any(t > vocab.token_to_id("<|notimestamps|>") for t in generated), f"{name}: no timestamps"
        references["timed"].append({"audio": name, "language": language, "prompt": prompt, "tokens": generated})
    references["prompted"] = []
    for name, language, before in PROMPTED_CASES:
        samples = read_wav(OUT / name)
        features = extractor(samples, sampling_rate=16000, return_tensors="pt").input_features
        context = [vocab.token_to_id("<|startofprev|>")] + vocab.encode(" " + before.strip()).ids
        with torch.no_grad():
            out = model.generate(features, language=language, task="transcribe", return_timestamps=False,
                                 prompt_ids=torch.tensor(context), max_new_tokens=MAX_NEW_TOKENS,
                                 do_sample=False, num_beams=1)
        sequence = out[0].tolist() if not hasattr(out, "sequences") else out.sequences[0].tolist()
        prompt = context + [generation.decoder_start_token_id, vocab.token_to_id(f"<|{language}|>"),
                            vocab.token_to_id("<|transcribe|>"), vocab.token_to_id("<|notimestamps|>")]
        for head in (prompt, prompt[len(context):]):
            if sequence[:len(head)] == head:
                sequence = sequence[len(head):]
                break
        generated = [t for t in sequence if t != generation.eos_token_id]
        for merged in (False, True):
            looped = ort_greedy(model_dir, features.numpy(), prompt, generation, layers, heads,
                                config.d_model // heads, merged)
            assert looped == generated, f"{name} after a prompt merged={merged}: ONNX {looped} != {generated}"
        references["prompted"].append({"audio": name, "language": language, "before": before,
                                       "prompt": prompt, "tokens": generated})
    (OUT / "reference.json").write_text(json.dumps(references, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


def real_layout_tokenizer():
    """Whisper's real id layout (51,865 tokens): 50,257 byte-level entries (the 256 bytes, then fillers that
    decode as plain text), then the special tokens at Whisper's ids and the 1,501 timestamps."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {symbol: i for i, symbol in enumerate(sorted(alphabet))}
    while len(vocab) < 50257:
        vocab[f"w{len(vocab)}"] = len(vocab)
    model = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    specials = (["<|endoftext|>", "<|startoftranscript|>"] + [f"<|{code}|>" for code in LANGUAGES] + TASKS
                + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
    model.add_special_tokens(specials)
    assert model.token_to_id("<|notimestamps|>") == 50363 and model.get_vocab_size() == 51865
    return model


def full_size(directory):
    """A whisper-base-size model (random weights) with Whisper's real vocabulary layout, for the benchmark:
    the optimum-layout ONNX graphs, the transformers checkpoint (for transformers and the CTranslate2 converter)
    and the tokenizer and configs."""
    torch.manual_seed(3)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    vocab = real_layout_tokenizer()
    config = config_for("base", vocab)
    model = WhisperForConditionalGeneration(config).eval()
    generation = generation_config(vocab, config)
    model.generation_config = generation
    vocab.save(str(out / "tokenizer.json"))
    config.save_pretrained(str(out))
    generation.save_pretrained(str(out))
    WhisperFeatureExtractor(feature_size=80).save_pretrained(str(out))
    model.save_pretrained(str(out / "transformers"))
    WhisperFeatureExtractor(feature_size=80).save_pretrained(str(out / "transformers"))
    from transformers import PreTrainedTokenizerFast
    PreTrainedTokenizerFast(tokenizer_object=vocab, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                            unk_token="<|endoftext|>", pad_token="<|endoftext|>").save_pretrained(
        str(out / "transformers"))
    export(model, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", nargs=2, metavar=("SIZE", "DIR"), help="write a `base` model to DIR instead")
    args = parser.parse_args()
    if args.size:
        full_size(args.size[1])
    else:
        fixtures()
