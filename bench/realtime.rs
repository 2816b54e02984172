//! Streaming and realtime benchmark, measured in one run against the release server on this machine:
//!
//! 1. **Streaming synthesis** of 200 characters: time to the first audio byte of
//!    `POST /v1/text-to-speech/{voice}/stream` and the stream's whole time, against the non-streamed seed path's
//!    time for the same text (the reference), with the full-size random-weight MMS-TTS model (speed does not
//!    depend on the weights) and the embedded voice. Targets: first audio ≤ 500 ms, stream ≤ 1.05 × whole.
//! 2. **Input streaming** ([`realtime_input`]): first audio on the `stream-input` socket after the first
//!    clause of a reply sent word by word, against the streamed seed path's first byte for that clause.
//! 3. **Realtime turns** ([`realtime_turns`]) over the WebSocket, the caller's speech sent in real time,
//!    recognised by the whisper-base-size int8 model (at most 20 new tokens) or the XLS-R-size int8 CTC model,
//!    answered by the scenario engine, spoken by the embedded voice, in 1 to 40 sessions at once, with
//!    recognition started when the caller falls quiet and without: voice-to-voice (end of the caller's speech →
//!    first reply audio, end-of-turn silence included) p50 and p95, and how far the sending fell behind real
//!    time; where recognition saturates shows as the voice-to-voice rise. Targets: one call ≤ 0.6 s, ten ≤ 1.2 s.
//!
//! Run: `bash tools/python-env.sh && cargo bench --bench realtime` (models are built once in target/bench-models;
//! `-- streaming` runs the first two parts alone, `-- input` the second with the embedded voices alone, which
//! needs no models; `-- turns` the third alone, `SAUTI_BENCH_RECOGNIZER=CTC` or `=whisper` the third with one recognizer). The neural voice is measured twice: with its split graphs (decoded
//! window by window) and as one graph (each sentence whole).

#[path = "python.rs"]
pub(crate) mod python;
#[path = "realtime_input.rs"]
mod realtime_input;
#[path = "realtime_turns.rs"]
mod realtime_turns;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use python::{root, run};

pub(crate) const KEY: &str = "bench-key-000001";
pub(crate) const RUNS: usize = 5;
const TEXT_200: &str =
    "Habari ya asubuhi, karibu kwenye huduma ya benki yetu. Salio lako ni shilingi elfu kumi \
na mbili. Ukitaka kutuma pesa, sema kiasi na namba ya simu ya mpokeaji. Asante kwa kutuchagua leo.";

pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_server(config: &Path, data: &Path, env: &[(&str, String)]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sauti"));
    command
        .args(["serve", "--config"])
        .arg(config)
        .current_dir(root())
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data)
        .env("SAUTI__AUTH__API_KEYS", KEY)
        .env("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100000")
        .env("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000")
        .env("SAUTI__REALTIME__MAX_SESSIONS_PER_KEY", "100")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("sauti serve starts");
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

pub(crate) fn median(values: Vec<f64>) -> f64 {
    percentile(values, 0.5)
}

/// The `q` quantile; NaN when nothing was measured.
pub(crate) fn percentile(mut values: Vec<f64>, q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n => values[((n - 1) as f64 * q).round() as usize],
    }
}

/// Seconds to the first byte and to the last of a POST answer.
fn timed_post(url: &str, text: &str) -> (f64, f64) {
    let start = Instant::now();
    let response = ureq::post(url)
        .set("xi-api-key", KEY)
        .send_json(serde_json::json!({ "text": text }))
        .expect("synthesis answers");
    let mut reader = response.into_reader();
    let mut first = [0u8; 1];
    reader.read_exact(&mut first).expect("a first byte");
    let first_byte = start.elapsed().as_secs_f64();
    std::io::copy(&mut reader, &mut std::io::sink()).expect("the body");
    (first_byte, start.elapsed().as_secs_f64())
}

fn streaming(server: &Server, voice: &str) -> [f64; 4] {
    let stream = server.base.clone() + &format!("/v1/text-to-speech/{voice}/stream");
    let whole = server.base.clone() + &format!("/v1/text-to-speech/{voice}");
    timed_post(&stream, TEXT_200);
    timed_post(&whole, TEXT_200);
    let (mut first, mut streamed, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (f, s) = timed_post(&stream, TEXT_200);
        first.push(f);
        streamed.push(s);
        reference.push(timed_post(&whole, TEXT_200).1);
    }
    let (first, streamed, reference) = (median(first), median(streamed), median(reference));
    [first, streamed, reference, streamed / reference]
}

/// The same model without its split graphs (links to the whole graph and its text files), for comparison.
fn one_graph(split: &Path) -> std::path::PathBuf {
    let folder = split.with_file_name("mms-full-one-graph");
    std::fs::create_dir_all(&folder).unwrap();
    for name in [
        "model.onnx",
        "vocab.json",
        "config.json",
        "tokenizer_config.json",
    ] {
        let link = folder.join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(split.join(name), &link).unwrap();
        }
    }
    folder
}

fn main() {
    if std::env::args().any(|a| a == "input") {
        // The embedded voices alone: no models to make, no Python environment.
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("none.toml");
        std::fs::write(&config, "").unwrap();
        let server = start_server(&config, data.path(), &[]);
        realtime_input::table(&server, &["zuri", "baraka"]);
        return;
    }
    let python = root().join("target/py/bin/python");
    assert!(
        python.exists(),
        "no Python environment: run `bash tools/python-env.sh` first"
    );
    let models = root().join("target/bench-models");
    let vits = models.join("mms-full");
    if !vits.join("model.prior.onnx").exists() {
        run(
            &python,
            &[
                "tools/make_vits_fixtures.py",
                "--full-size",
                vits.to_str().unwrap(),
            ],
        );
    }
    let whisper = models.join("whisper-base");
    if !whisper.join("encoder_model.onnx").exists() {
        run(
            &python,
            &[
                "tools/make_whisper_fixtures.py",
                "--size",
                "base",
                whisper.to_str().unwrap(),
            ],
        );
    }
    // The int8 graphs (ONNX Runtime's dynamic quantisation, as `bench/asr_reference.py prepare` makes them).
    if !whisper
        .join("decoder_with_past_model_quantized.onnx")
        .exists()
    {
        let quantize = "import sys\n\
            from onnxruntime.quantization import QuantType, quantize_dynamic\n\
            for stem in ('encoder_model', 'decoder_model', 'decoder_with_past_model'):\n    \
            quantize_dynamic(f'{sys.argv[1]}/{stem}.onnx', f'{sys.argv[1]}/{stem}_quantized.onnx', \
            weight_type=QuantType.QInt8)\n";
        run(&python, &["-c", quantize, whisper.to_str().unwrap()]);
    }
    let library = run(Path::new("bash"), &["tools/onnxruntime.sh"])
        .trim()
        .to_string();
    let config = models.join("realtime-voices.toml");
    std::fs::write(
        &config,
        format!(
            "[[tts.voices]]\nid = \"mms-full\"\nname = \"bench\"\nmodel = \"{}\"\n\n\
             [[tts.voices]]\nid = \"mms-full-one-graph\"\nname = \"bench\"\nmodel = \"{}\"\n",
            vits.display(),
            one_graph(&vits).display()
        ),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = start_server(
        &config,
        data.path(),
        &[
            ("SAUTI__MODELS__ONNXRUNTIME", library.clone()),
            ("SAUTI__ASR__MODEL", whisper.display().to_string()),
            ("SAUTI__ASR__VARIANT", "_quantized".into()),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "20".into()),
        ],
    );

    let turns_only = std::env::args().any(|a| a == "turns");
    if !turns_only {
        println!("## Streaming synthesis, 200 characters ({RUNS} runs, medians)\n");
        println!("| voice | first audio ms | stream ms | whole (seed path) ms | stream / whole |");
        println!("|---|---|---|---|---|");
        for voice in ["mms-full", "mms-full-one-graph", "zuri"] {
            let [first, streamed, whole, ratio] = streaming(&server, voice);
            println!(
                "| {voice} | {:.0} | {:.0} | {:.0} | {ratio:.3} |",
                first * 1000.0,
                streamed * 1000.0,
                whole * 1000.0
            );
        }

        realtime_input::table(&server, &["mms-full", "zuri"]);
    }

    if std::env::args().any(|a| a == "streaming") {
        return;
    }

    drop(server);
    realtime_turns::tables(&config, &library, &whisper);
}
