//! Speech recognition benchmark: a whisper-base-size random-weight model (speed does not depend on the
//! weights), 30 s of Swahili speech, decoding forced to exactly 100 tokens, timed in one run for sauti
//! (in-process, fp32 and int8 graphs), transformers eager, the bare ONNX Runtime Python session on the same
//! files (fp32 and int8), and faster-whisper's CTranslate2 engine (int8 and float32) converted from the same
//! model. Also reports how far sauti's features are from transformers' and how many tokens agree.
//!
//! Run: `bash tools/python-env.sh && target/py/bin/pip install ctranslate2 faster-whisper && cargo bench --bench asr`
//! (the model is built once in `target/bench-models/whisper-base`).

#[path = "python.rs"]
mod python;
#[path = "speech.rs"]
mod speech;

use std::path::{Path, PathBuf};
use std::time::Instant;

use python::{root, run};
use sauti::asr::mel::LogMel;
use sauti::asr::whisper::{Whisper, WhisperOptions};
use sauti::models::ModelSettings;
use speech::{median, speech};

const RUNS: usize = 5;
const TOKENS: usize = 100;

/// engine, variant, (features, encoder, decode, total) ms, tokens.
struct Row {
    engine: String,
    variant: String,
    ms: [f64; 4],
    tokens: Vec<u32>,
}

fn sauti_row(dir: &Path, variant: &str, library: &Path, samples: &[f32]) -> Row {
    let options = WhisperOptions {
        sessions: 1,
        models: ModelSettings {
            onnxruntime: library.to_path_buf(),
            ..ModelSettings::default()
        },
        max_new_tokens: TOKENS,
        variant: variant.to_string(),
    };
    let model = Whisper::load(dir, &options).expect("the benchmark model loads");
    model.decode_exactly(samples, "sw", TOKENS).unwrap();
    let (mut features, mut total) = (Vec::new(), Vec::new());
    let mut tokens = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        model.features(samples);
        features.push(start.elapsed().as_secs_f64() * 1000.0);
        let start = Instant::now();
        tokens = model.decode_exactly(samples, "sw", TOKENS).unwrap();
        total.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    assert_eq!(tokens.len(), TOKENS);
    Row {
        engine: "sauti (in-process)".into(),
        variant: if variant.is_empty() {
            "fp32".into()
        } else {
            "int8 (quantize_dynamic)".into()
        },
        ms: [median(features), f64::NAN, f64::NAN, median(total)],
        tokens,
    }
}

fn main() {
    let python = root().join("target/py/bin/python");
    assert!(
        python.exists(),
        "no Python environment: run `bash tools/python-env.sh` first"
    );
    let dir = root().join("target/bench-models/whisper-base");
    if !dir.join("encoder_model.onnx").exists() {
        run(
            &python,
            &[
                "tools/make_whisper_fixtures.py",
                "--size",
                "base",
                dir.to_str().unwrap(),
            ],
        );
    }
    if !dir.join("ct2-int8").exists() || !dir.join("encoder_model_quantized.onnx").exists() {
        run(
            &python,
            &["bench/asr_reference.py", "prepare", dir.to_str().unwrap()],
        );
    }
    let library = PathBuf::from(run(Path::new("bash"), &["tools/onnxruntime.sh"]).trim());
    // Everyone reads the same 16-bit WAV.
    let wav = root().join("target/bench-models/asr-30s.wav");
    std::fs::write(&wav, sauti::audio::encode_wav_16k(&speech(30))).unwrap();
    let samples = sauti::audio::load_16k(&std::fs::read(&wav).unwrap(), &Default::default())
        .unwrap()
        .samples;
    let features_file = root().join("target/bench-models/asr-30s-features.f32");

    let mut rows = vec![
        sauti_row(&dir, "", &library, &samples),
        sauti_row(&dir, "_quantized", &library, &samples),
    ];
    let reference: serde_json::Value = serde_json::from_str(&run(
        &python,
        &[
            "bench/asr_reference.py",
            "run",
            dir.to_str().unwrap(),
            wav.to_str().unwrap(),
            &RUNS.to_string(),
            &TOKENS.to_string(),
            features_file.to_str().unwrap(),
        ],
    ))
    .expect("reference JSON");
    for row in reference["rows"].as_array().unwrap() {
        let ms = |key: &str| row[key].as_f64().unwrap_or(f64::NAN);
        rows.push(Row {
            engine: row["engine"].as_str().unwrap().into(),
            variant: row["variant"].as_str().unwrap().into(),
            ms: [
                ms("features_ms"),
                ms("encoder_ms"),
                ms("decode_ms"),
                ms("total_ms"),
            ],
            tokens: row["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap() as u32)
                .collect(),
        });
    }
    // sauti again after the references, so drift over the run shows.
    rows.push(sauti_row(&dir, "", &library, &samples));
    rows.push(sauti_row(&dir, "_quantized", &library, &samples));

    let theirs: Vec<f32> = std::fs::read(&features_file)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let ours = LogMel::new(80).features(&samples);
    let feature_diff = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    print_table(&rows, feature_diff);
}

fn print_table(rows: &[Row], feature_diff: f32) {
    let find = |engine: &str, variant: &str| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.engine.starts_with(engine) && r.variant.starts_with(variant))
            .collect()
    };
    let total = |engine: &str, variant: &str| {
        median(find(engine, variant).iter().map(|r| r.ms[3]).collect())
    };
    let reference = total("faster-whisper", "int8");
    let transformers_tokens = find("transformers", "")
        .first()
        .map(|r| r.tokens.clone())
        .unwrap_or_default();
    let agree = |tokens: &[u32]| {
        tokens
            .iter()
            .zip(&transformers_tokens)
            .take_while(|(a, b)| a == b)
            .count()
    };
    println!(
        "\nWhisper base size (random weights), 30 s of audio, exactly {TOKENS} tokens, greedy, median of {RUNS}; machine: {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| engine | precision | features ms | encoder ms | decode ms | total ms | × faster-whisper int8 | tokens = transformers (prefix) |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut seen = std::collections::HashSet::new();
    for row in rows {
        if !seen.insert((row.engine.clone(), row.variant.clone())) {
            continue;
        }
        let runs = find(&row.engine, &row.variant);
        let column = |i: usize| median(runs.iter().map(|r| r.ms[i]).collect());
        let cell = |v: f64| {
            if v.is_nan() {
                "—".to_string()
            } else {
                format!("{v:.0}")
            }
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2} | {}/{} |",
            row.engine,
            row.variant,
            cell(column(0)),
            cell(column(1)),
            cell(column(2)),
            cell(column(3)),
            column(3) / reference,
            agree(&row.tokens),
            row.tokens.len()
        );
    }
    println!("log-mel features: sauti vs transformers WhisperFeatureExtractor, max |diff| = {feature_diff:.2e}");
    println!(
        "sauti int8 / faster-whisper int8 = {:.2} (target ≤ 1.0); sauti fp32 / faster-whisper int8 = {:.2}",
        total("sauti", "int8") / reference,
        total("sauti", "fp32") / reference
    );
}
