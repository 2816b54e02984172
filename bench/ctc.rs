//! CTC recognition benchmark: an XLS-R-300m-size random-weight `Wav2Vec2ForCTC` (speed does not depend on the
//! weights), 30 s of Swahili speech, timed in one run for sauti (in-process: normalisation, the graph, greedy
//! decoding with word timings; fp32 and int8 graphs), the bare ONNX Runtime Python session on the same graphs, and
//! transformers eager on the same weights. Also reports how far sauti's logits are from transformers' and
//! whether the transcripts agree.
//!
//! Run: `bash tools/python-env.sh && cargo bench --bench ctc` (the model, about 1.3 GB, is built once in
//! `target/bench-models/ctc-xlsr-300m`).

#[path = "python.rs"]
mod python;
#[path = "speech.rs"]
mod speech;

use std::path::{Path, PathBuf};
use std::time::Instant;

use python::{root, run};
use sauti::asr::ctc::{Ctc, CtcOptions};
use sauti::asr::Recognizer;
use sauti::models::ModelSettings;
use speech::{median, speech};

const RUNS: usize = 3;
const SECONDS: usize = 30;

/// engine, variant, milliseconds, transcript.
struct Row {
    engine: String,
    variant: String,
    ms: f64,
    text: String,
}

fn load(dir: &Path, variant: &str, library: &Path) -> Ctc {
    let options = CtcOptions {
        sessions: 1,
        models: ModelSettings {
            onnxruntime: library.to_path_buf(),
            ..ModelSettings::default()
        },
        variant: variant.to_string(),
        window_seconds: SECONDS as f64,
        overlap_seconds: 2.0,
        lm: None,
        search: Default::default(),
    };
    Ctc::load(dir, &options).expect("the benchmark model loads")
}

fn sauti_row(dir: &Path, variant: &str, library: &Path, samples: &[f32]) -> Row {
    let model = load(dir, variant, library);
    model.transcribe(samples, "sw").unwrap();
    let mut times = Vec::new();
    let mut text = String::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        text = model.transcribe(samples, "sw").unwrap().text;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    Row {
        engine: "sauti (in-process)".into(),
        variant: if variant.is_empty() {
            "fp32".into()
        } else {
            "int8 (quantize_dynamic)".into()
        },
        ms: median(times),
        text,
    }
}

fn main() {
    let python = root().join("target/py/bin/python");
    assert!(
        python.exists(),
        "no Python environment: run `bash tools/python-env.sh` first"
    );
    let dir = root().join("target/bench-models/ctc-xlsr-300m");
    if !dir.join("model.safetensors").exists() {
        run(
            &python,
            &[
                "tools/make_ctc_fixtures.py",
                "--size",
                "xlsr-300m",
                dir.to_str().unwrap(),
            ],
        );
    }
    if !dir.join("model_quantized.onnx").exists() {
        run(
            &python,
            &["bench/ctc_reference.py", "prepare", dir.to_str().unwrap()],
        );
    }
    let library = PathBuf::from(run(Path::new("bash"), &["tools/onnxruntime.sh"]).trim());
    let wav = root().join("target/bench-models/ctc-30s.wav");
    std::fs::write(&wav, sauti::audio::encode_wav_16k(&speech(SECONDS))).unwrap();
    let samples = sauti::audio::load_16k(&std::fs::read(&wav).unwrap(), &Default::default())
        .unwrap()
        .samples;

    let mut rows = vec![
        sauti_row(&dir, "", &library, &samples),
        sauti_row(&dir, "_quantized", &library, &samples),
    ];
    let reference: serde_json::Value = serde_json::from_str(&run(
        &python,
        &[
            "bench/ctc_reference.py",
            "run",
            dir.to_str().unwrap(),
            wav.to_str().unwrap(),
            &RUNS.to_string(),
        ],
    ))
    .expect("reference JSON");
    for row in reference["rows"].as_array().unwrap() {
        rows.push(Row {
            engine: row["engine"].as_str().unwrap().into(),
            variant: row["variant"].as_str().unwrap().into(),
            ms: row["ms"].as_f64().unwrap(),
            text: row["text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        });
    }
    // sauti again after the references, so drift over the run shows.
    rows.push(sauti_row(&dir, "", &library, &samples));
    rows.push(sauti_row(&dir, "_quantized", &library, &samples));

    let theirs: Vec<f32> = std::fs::read(dir.join("reference-logits.f32"))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let (ours, _) = load(&dir, "", &library).logits(&samples).unwrap();
    let logit_diff = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    print_table(&rows, logit_diff, ours.len() == theirs.len());
}

fn print_table(rows: &[Row], logit_diff: f32, same_shape: bool) {
    let runs = |engine: &str, variant: &str| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.engine.starts_with(engine) && r.variant.starts_with(variant))
            .collect()
    };
    let ms =
        |engine: &str, variant: &str| median(runs(engine, variant).iter().map(|r| r.ms).collect());
    let bare = ms("onnxruntime (Python)", "fp32");
    let transformers = runs("transformers", "")
        .first()
        .map(|r| r.text.clone())
        .unwrap_or_default();
    println!(
        "\nXLS-R-300m size (random weights), {SECONDS} s of audio, greedy CTC, median of {RUNS}; machine: {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| engine | precision | ms | RTF | × bare ONNX Runtime fp32 | transcript = transformers |"
    );
    println!("|---|---|---|---|---|---|");
    let mut seen = std::collections::HashSet::new();
    for row in rows {
        if !seen.insert((row.engine.clone(), row.variant.clone())) {
            continue;
        }
        let ms = ms(&row.engine, &row.variant);
        println!(
            "| {} | {} | {ms:.0} | {:.3} | {:.2} | {} |",
            row.engine,
            row.variant,
            ms / 1000.0 / SECONDS as f64,
            ms / bare,
            if row.text == transformers {
                "yes"
            } else {
                "no"
            }
        );
    }
    println!(
        "logits: sauti vs transformers, same shape: {same_shape}, max |diff| = {logit_diff:.2e}"
    );
    let (sauti, same) = ("sauti (in-process)", "onnxruntime (Python), no spinning");
    println!(
        "sauti / bare ONNX Runtime (library defaults): fp32 {:.2} (target ≤ 1.05), int8 {:.2}",
        ms(sauti, "fp32") / bare,
        ms(sauti, "int8") / ms("onnxruntime (Python)", "int8")
    );
    println!(
        "sauti / bare ONNX Runtime with sauti's session settings (no spinning): fp32 {:.2}, int8 {:.2}",
        ms(sauti, "fp32") / ms(same, "fp32"),
        ms(sauti, "int8") / ms(same, "int8")
    );
}
