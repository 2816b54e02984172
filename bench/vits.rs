//! Neural voice benchmark: a full-size random-weight MMS-TTS model (hidden 192, 6 layers, upsampling [8,8,2,2]
//! from 512 channels — speed does not depend on the weights), 200 and 1,000 characters of Swahili, timed in one
//! run as (1) sauti over HTTP, (2) the bare ONNX Runtime Python session on the same graph, (3) transformers eager,
//! plus ONNX Runtime variants (optimisation levels, threads, an int8 decoder) with their waveform difference.
//!
//! Run: `bash tools/python-env.sh && cargo bench --bench vits` (the Python environment — torch, transformers,
//! onnx, onnxruntime — lives in `target/py`; the model is built once in `target/bench-models`).

#[path = "python.rs"]
mod python;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use python::{root, run};
use sauti::tts::normalize::normalize;

const RUNS: usize = 3;

/// engine, variant, characters, seconds, audio seconds, max |diff| from the fp32 graph.
type Row = (String, String, usize, f64, f64, Option<f64>);
const KEY: &str = "bench-key-000001";
const PARAGRAPH: &str = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu. Salio lako ni TSh 12,500 tarehe \
12/03/2025. Ukitaka kutuma pesa, sema kiasi na namba ya simu ya mpokeaji. Tawi letu liko wazi kuanzia saa 08:00 \
hadi saa 16:30. Asante kwa kutuchagua, na uwe na siku njema! ";

fn text_of(chars: usize) -> String {
    let mut text = String::new();
    while text.chars().count() < chars {
        text.push_str(PARAGRAPH);
    }
    let cut: String = text.chars().take(chars).collect();
    cut.rsplit_once(' ')
        .map_or(cut.clone(), |(head, _)| head.to_string())
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(config: &Path, data: &Path, library: &str) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["serve", "--config"])
        .arg(config)
        .current_dir(root())
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data)
        .env("SAUTI__AUTH__API_KEYS", KEY)
        .env("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100000")
        .env("SAUTI__MODELS__ONNXRUNTIME", library)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .expect("sauti serve starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let base = loop {
        let line = lines.next().and_then(Result::ok).expect("sauti listens");
        if let Some(base) = line.strip_prefix("sauti listening on ") {
            break base.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server { child, base }
}

/// Median seconds and audio seconds of synthesising `text` over HTTP.
fn http(server: &Server, voice: &str, text: &str, runs: usize) -> (f64, f64) {
    let body = serde_json::json!({
        "text": text,
        "voice_settings": {"noise_scale": 0.667, "noise_scale_duration": 0.0}
    });
    let url = format!("{}/v1/text-to-speech/{voice}", server.base);
    let once = || {
        let reply: serde_json::Value = ureq::post(&url)
            .set("xi-api-key", KEY)
            .send_json(body.clone())
            .expect("synthesis succeeds")
            .into_json()
            .expect("json");
        reply["duration_seconds"].as_f64().unwrap_or(0.0)
    };
    once();
    let mut times = Vec::new();
    let mut audio = 0.0;
    for _ in 0..runs {
        let start = Instant::now();
        audio = once();
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], audio)
}

fn main() {
    let python = root().join("target/py/bin/python");
    assert!(
        python.exists(),
        "no Python environment: run `bash tools/python-env.sh` first"
    );
    let models = root().join("target/bench-models");
    let full = models.join("mms-full");
    if !full.join("model.onnx").exists() || !full.join("transformers").exists() {
        run(
            &python,
            &[
                "tools/make_vits_fixtures.py",
                "--full-size",
                full.to_str().unwrap(),
            ],
        );
    }
    if !models.join("mms-full-int8/model.onnx").exists() {
        run(
            &python,
            &["bench/vits_reference.py", "prepare", full.to_str().unwrap()],
        );
    }
    let library = run(Path::new("bash"), &["tools/onnxruntime.sh"])
        .trim()
        .to_string();

    let texts: Vec<(usize, String)> = [200, 1000].iter().map(|&n| (n, text_of(n))).collect();
    let spec: Vec<serde_json::Value> = texts
        .iter()
        .map(|(n, t)| serde_json::json!({"chars": n, "normalized": normalize(t)}))
        .collect();
    let texts_json = models.join("texts.json");
    std::fs::write(&texts_json, serde_json::to_string(&spec).unwrap()).unwrap();
    let config = models.join("voices.toml");
    std::fs::write(
        &config,
        format!(
            "[[tts.voices]]\nid = \"bench-fp32\"\nname = \"bench\"\nmodel = \"{}\"\n\n\
             [[tts.voices]]\nid = \"bench-int8\"\nname = \"bench int8\"\nmodel = \"{}\"\n",
            full.display(),
            models.join("mms-full-int8").display()
        ),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = start_server(&config, data.path(), &library);

    // sauti before and after the references, so drift over the run shows and is averaged.
    let mut rows: Vec<Row> = Vec::new();
    let sauti = |rows: &mut Vec<_>| {
        for (chars, text) in &texts {
            let voices: &[&str] = if *chars <= 200 {
                &["bench-fp32", "bench-int8"]
            } else {
                &["bench-fp32"]
            };
            for &voice in voices {
                let (seconds, audio) = http(&server, voice, text, RUNS);
                rows.push((
                    "sauti HTTP".into(),
                    voice.into(),
                    *chars,
                    seconds,
                    audio,
                    None,
                ));
            }
        }
    };
    sauti(&mut rows);
    let reference: serde_json::Value = serde_json::from_str(&run(
        &python,
        &[
            "bench/vits_reference.py",
            "run",
            full.to_str().unwrap(),
            texts_json.to_str().unwrap(),
            &RUNS.to_string(),
        ],
    ))
    .expect("reference JSON");
    sauti(&mut rows);
    for row in reference["rows"].as_array().unwrap() {
        rows.push((
            row["engine"].as_str().unwrap().into(),
            row["variant"].as_str().unwrap().into(),
            row["chars"].as_u64().unwrap() as usize,
            row["seconds"].as_f64().unwrap(),
            row["audio_seconds"].as_f64().unwrap(),
            row["max_diff"].as_f64(),
        ));
    }
    print_table(&rows);
}

fn print_table(rows: &[Row]) {
    let median_of = |engine: &str, variant: &str, chars: usize| {
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|r| r.0 == engine && r.1 == variant && r.2 == chars)
            .map(|r| r.3)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    println!(
        "\nMMS-TTS size VITS (random weights), {RUNS} runs each, median; machine: {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| engine | variant | chars | seconds | audio s | RTF | × bare ONNX Runtime | max |diff| vs fp32 |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut seen = std::collections::HashSet::new();
    for (engine, variant, chars, _, audio, diff) in rows {
        if !seen.insert((engine.clone(), variant.clone(), *chars)) {
            continue;
        }
        let seconds = median_of(engine, variant, *chars).unwrap_or(f64::NAN);
        let bare =
            median_of("onnxruntime", "optimisation all, 2 threads", *chars).unwrap_or(f64::NAN);
        println!(
            "| {engine} | {variant} | {chars} | {seconds:.2} | {audio:.1} | {:.3} | {:.2} | {} |",
            seconds / audio,
            seconds / bare,
            diff.map_or("—".into(), |d| format!("{d:.1e}"))
        );
    }
    for chars in [200, 1000] {
        let sauti = median_of("sauti HTTP", "bench-fp32", chars).unwrap_or(f64::NAN);
        let bare =
            median_of("onnxruntime", "optimisation all, 2 threads", chars).unwrap_or(f64::NAN);
        let eager = median_of("transformers", "eager, 2 threads", chars).unwrap_or(f64::NAN);
        println!(
            "{chars} chars: sauti HTTP / bare ONNX Runtime = {:.2} (target ≤ 1.05); transformers / sauti = {:.2} (target ≥ 1.2)",
            sauti / bare,
            eager / sauti
        );
    }
}
