//! Tone-colour conversion benchmark: OpenVoice V2-size graphs (random weights, built once into
//! `target/bench-models/openvoice-v2` by `tools/make_openvoice_fixtures.py --size v2`; speed does not depend on
//! the weights) on 10 s of Swahili speech, timed in one run for sauti (the spectrogram in Rust, the graphs through
//! ONNX Runtime), coqui-tts's PyTorch implementation on the same architecture, and the signal-processing
//! conversion (PSOLA) that cloning falls back to. Then what the converter adds to a stream's first audio (the
//! first piece of a reply, converted before it is sent), and how far a stream converted piece by piece is from
//! the whole utterance converted at once.
//!
//! Run: `bash tools/python-env.sh` with the packages `tools/make_openvoice_fixtures.py` lists, then
//! `cargo bench --bench tone`.

#[path = "python.rs"]
mod python;
#[path = "speech.rs"]
mod speech;

use std::time::Instant;

use python::{root, run};
use sauti::audio::resample::resample;
use sauti::clone::neural::{Revoice, ToneProfile};
use sauti::clone::tone::ToneConverter;
use sauti::models::ModelSettings;
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};
use speech::median;

const RUNS: usize = 3;
const RATE: u32 = 22_050;

fn timed<T>(mut work: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = work();
    for _ in 0..RUNS {
        let start = Instant::now();
        last = work();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    (median(times), last)
}

const TORCH: &str = r#"
import sys, time, numpy as np, torch
from TTS.vc.configs.openvoice_config import OpenVoiceConfig
from TTS.vc.models.openvoice import OpenVoice
torch.set_num_threads(2)
torch.manual_seed(0)
model = OpenVoice(OpenVoiceConfig()).eval()
audio = torch.from_numpy(np.fromfile(sys.argv[1], dtype="<f4"))
def convert():
    with torch.no_grad():
        g, spec = model.extract_se(audio)
        model.inference(spec, {"g_src": g, "g_tgt": g})
convert()
times = []
for _ in range(3):
    start = time.perf_counter(); convert(); times.append((time.perf_counter() - start) * 1000)
print(sorted(times)[1])
"#;

fn main() {
    let python = root().join("target/py/bin/python");
    assert!(
        python.exists(),
        "no Python environment: run `bash tools/python-env.sh` first"
    );
    let dir = root().join("target/bench-models/openvoice-v2");
    if !dir.join("converter.onnx").exists() {
        run(
            &python,
            &[
                "tools/make_openvoice_fixtures.py",
                "--size",
                "v2",
                dir.to_str().unwrap(),
            ],
        );
    }
    let library = run(std::path::Path::new("bash"), &["tools/onnxruntime.sh"]);
    let settings = ModelSettings {
        onnxruntime: library.trim().into(),
        ..ModelSettings::default()
    };
    let converter = ToneConverter::load(&dir, &settings, 1).expect("the converter loads");
    let speech16 = speech::speech(10);
    let speech = resample(&speech16, 16_000, RATE);
    let seconds = speech.len() as f64 / f64::from(RATE);

    println!(
        "## Tone-colour conversion, 10 s of speech (OpenVoice V2 size, {RUNS} runs, medians)\n"
    );
    println!("| what | ms | real-time factor |");
    println!("|---|---|---|");
    let (tone_ms, tone) = timed(|| converter.tone(&speech).unwrap());
    let (convert_ms, converted) = timed(|| converter.convert(&speech, &tone, &tone, 1).unwrap());
    let (psola_ms, _) = timed(|| sauti::audio::psola::convert(&speech16, 16_000, 1.2, 1.05));
    let file = root().join("target/bench-models/tone-speech.f32");
    let bytes: Vec<u8> = speech.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&file, bytes).unwrap();
    let torch_ms: f64 = run(&python, &["-c", TORCH, file.to_str().unwrap()])
        .trim()
        .parse()
        .unwrap();
    let rtf = |ms: f64| ms / 1000.0 / seconds;
    println!(
        "| sauti: tone colour of the reference (once per clone) | {tone_ms:.0} | {:.3} |",
        rtf(tone_ms)
    );
    println!(
        "| sauti: conversion (spectrogram + converter) | {convert_ms:.0} | {:.3} |",
        rtf(convert_ms)
    );
    println!(
        "| coqui-tts PyTorch: tone colour + conversion, 2 threads | {torch_ms:.0} | {:.3} |",
        rtf(torch_ms)
    );
    println!(
        "| sauti: PSOLA conversion (the fallback) | {psola_ms:.0} | {:.3} |",
        rtf(psola_ms)
    );
    println!(
        "\nsauti / coqui-tts: {:.2}; converted {} samples of {}.",
        (tone_ms + convert_ms) / torch_ms,
        converted.len(),
        speech.len()
    );

    // A stream's first piece: the embedded voice's first sentence, synthesised then converted, whole (as
    // synchronous synthesis does) and handed on in parts (as a stream does).
    let voice = EmbeddedVoice::zuri();
    let first = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu.";
    let (synth_ms, piece) = timed(|| voice.synthesize(first, &VoiceSettings::default()).unwrap());
    let converter = std::sync::Arc::new(converter);
    let tones = ToneProfile {
        converter: "openvoice-v2".into(),
        speaker: tone.clone(),
        base: converter.tone(&resample(&piece, 16_000, RATE)).unwrap(),
    };
    let revoice = Revoice::new(std::sync::Arc::clone(&converter), &tones).unwrap();
    let (whole_ms, whole) = timed(|| revoice.apply(&piece).unwrap());
    let mut parts: Vec<Vec<f32>> = Vec::new();
    revoice
        .apply_parts(&piece, &mut |part| {
            parts.push(part);
            true
        })
        .unwrap();
    let first_part_ms = median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let mut at = f64::NAN;
                revoice
                    .apply_parts(&piece, &mut |_| {
                        at = start.elapsed().as_secs_f64() * 1000.0;
                        false
                    })
                    .unwrap();
                at
            })
            .collect(),
    );
    let joined = parts.concat();
    let (power, error) = whole
        .iter()
        .zip(&joined)
        .fold((0.0f64, 0.0f64), |(p, e), (a, b)| {
            (p + f64::from(*a).powi(2), e + f64::from(a - b).powi(2))
        });
    println!(
        "\n## A stream's first audio (the first sentence, {:.1} s)\n",
        piece.len() as f64 / 16_000.0
    );
    println!("| stage | ms |");
    println!("|---|---|");
    println!("| base synthesis (embedded voice) | {synth_ms:.0} |");
    println!("| the converter on the whole piece (synchronous synthesis) | {whole_ms:.0} |");
    println!("| **added to a stream's first audio**: the first part handed on ({} parts) | {first_part_ms:.0} |", parts.len());
    println!(
        "\nThe parts joined against the piece converted whole: {:.1} dB signal to difference.",
        10.0 * (power / error.max(1e-30)).log10()
    );

    // Pieces converted one by one against the whole converted at once, with the same noise for each frame: what
    // is left is what the joins cost.
    let hop = converter.settings().hop_length;
    let channels = converter.settings().channels;
    let piece_len = (2 * RATE as usize) / hop * hop;
    let (spec, frames) = converter.spectrogram(&speech);
    let noise = converter.noise(frames, 0);
    let whole = converter
        .convert_spectrogram(spec, frames, noise.clone(), &tone, &tone)
        .unwrap();
    let mut joined = Vec::new();
    for (i, part) in speech.chunks(piece_len).enumerate() {
        let (spec, count) = converter.spectrogram(part);
        let first = i * piece_len / hop;
        let slice: Vec<f32> = (0..channels)
            .flat_map(|c| noise[c * frames + first..c * frames + first + count].to_vec())
            .collect();
        joined.extend(
            converter
                .convert_spectrogram(spec, count, slice, &tone, &tone)
                .unwrap(),
        );
    }
    let n = whole.len().min(joined.len());
    let error: f64 = whole[..n]
        .iter()
        .zip(&joined[..n])
        .map(|(a, b)| f64::from(a - b).powi(2))
        .sum();
    let power: f64 = whole[..n].iter().map(|a| f64::from(*a).powi(2)).sum();
    let worst = whole[..n]
        .iter()
        .zip(&joined[..n])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "\nPieces of 2 s converted one by one against the whole at once (the same noise per frame): {:.1} dB \
         signal to difference, largest difference {worst:.4} (the output's peak: {:.4}).",
        10.0 * (power / error.max(1e-20)).log10(),
        whole.iter().fold(0.0f32, |m, s| m.max(s.abs()))
    );
}
