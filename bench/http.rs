//! HTTP benchmark: requests per second and p99 latency of `GET /v1/voices` and of 200-character text-to-speech
//! on the embedded voice, against the release server, with `wrk` as the load generator; and the overhead of the
//! HTTP path over calling the synthesizer directly, measured in the same run.
//!
//! Run: `apt-get install -y wrk && cargo bench --bench http`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use sauti::audio;
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const KEY: &str = "bench-key-0123456789";
/// Alternating HTTP/direct pairs for the overhead figure.
const PAIRS: usize = 300;

const TEXT_200: &str = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu. Salio lako la akaunti ni shilingi elfu kumi \
na mbili. Ukitaka kutuma pesa, sema kiasi na namba ya simu ya mpokeaji, kisha thibitisha.";

struct WrkResult {
    requests_per_second: f64,
    median_ms: f64,
    p99_ms: f64,
}

fn to_ms(value: &str) -> f64 {
    let split = value
        .find(|c: char| c.is_alphabetic())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => number / 1000.0,
        "ms" => number,
        "s" => number * 1000.0,
        "m" => number * 60_000.0,
        _ => f64::NAN,
    }
}

fn wrk(args: &[&str]) -> WrkResult {
    let output = Command::new("wrk")
        .args(args)
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    let field = |prefix: &str, index: usize| {
        text.lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.split_whitespace().nth(index).map(str::to_string))
            .unwrap_or_default()
    };
    let result = WrkResult {
        requests_per_second: field("Requests/sec:", 1).parse().unwrap_or(f64::NAN),
        median_ms: to_ms(&field("50%", 1)),
        p99_ms: to_ms(&field("99%", 1)),
    };
    let non_2xx = field("Non-2xx", 4);
    assert!(non_2xx.is_empty(), "wrk saw non-2xx responses:\n{text}");
    result
}

fn main() {
    let data = tempfile::tempdir().expect("temp dir");
    let mut server = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data.path())
        .env("SAUTI__AUTH__API_KEYS", KEY)
        .env("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100000000")
        .env("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000000")
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .spawn()
        .expect("release server starts");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let base = loop {
        let line = lines
            .next()
            .and_then(Result::ok)
            .expect("server prints its address");
        if let Some(base) = line.strip_prefix("sauti listening on ") {
            break base.to_string();
        }
    };
    let key_header = format!("xi-api-key: {KEY}");
    let voices = wrk(&[
        "-t2",
        "-c64",
        "-d10s",
        "--latency",
        "-H",
        &key_header,
        &format!("{base}/v1/voices"),
    ]);

    let script = data.path().join("tts.lua");
    let body = serde_json::json!({ "text": TEXT_200 })
        .to_string()
        .replace('\'', "\\'");
    let lua = format!("wrk.method = 'POST'\nwrk.body = '{body}'\nwrk.headers['Content-Type'] = 'application/json'\n");
    std::fs::write(&script, lua).expect("lua script");
    let url = format!("{base}/v1/text-to-speech/zuri");
    let script = script.display().to_string();
    // The TTS workload: POST the 200-character text with `threads` wrk threads over `connections`.
    let tts_wrk = |threads: &str, connections: &str| {
        wrk(&[
            "-t",
            threads,
            "-c",
            connections,
            "-d10s",
            "--latency",
            "-H",
            &key_header,
            "-s",
            &script,
            &url,
        ])
    };
    let tts_loaded = tts_wrk("2", "4");

    // Overhead: alternate single requests (one keep-alive connection) with the same work called directly
    // (synthesise, encode the WAV, base64), pair by pair, so the machine's drifts in speed hit both sides
    // alike; compare the medians. wrk's first row above gives the same path's latency under its own load.
    let voice = EmbeddedVoice::zuri();
    let settings = VoiceSettings::default();
    let agent = ureq::AgentBuilder::new().build();
    let request = serde_json::json!({ "text": TEXT_200 });
    let mut http_times = Vec::new();
    let mut direct_times = Vec::new();
    for _ in 0..PAIRS {
        let start = Instant::now();
        let response = agent
            .post(&url)
            .set("xi-api-key", KEY)
            .send_json(request.clone())
            .expect("200");
        let mut body = Vec::new();
        std::io::Read::read_to_end(&mut response.into_reader(), &mut body).expect("body");
        http_times.push(start.elapsed());
        let start = Instant::now();
        let samples = voice.synthesize(TEXT_200, &settings).expect("synthesises");
        std::hint::black_box(
            base64::engine::general_purpose::STANDARD.encode(audio::encode_wav_16k(&samples)),
        );
        direct_times.push(start.elapsed());
    }
    let tts_serial = tts_wrk("1", "1");
    let _ = server.kill();
    let _ = server.wait();
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    let mut sorted = direct_times.clone();
    sorted.sort();
    let direct_p99 = sorted[sorted.len() * 99 / 100].as_secs_f64() * 1000.0;
    let http_median = median(http_times);
    let direct_median = median(direct_times);

    println!("release server on 127.0.0.1; wrk 10 s per load row; 200-character Swahili text");
    println!();
    println!("| workload | wrk | requests/s | median | p99 |");
    println!("|---|---|---|---|---|");
    let row = |name: &str, load: &str, r: &WrkResult| {
        println!(
            "| {name} | {load} | {:.0} | {:.2} ms | {:.2} ms |",
            r.requests_per_second, r.median_ms, r.p99_ms
        );
    };
    row("GET /v1/voices", "2 threads, 64 connections", &voices);
    row(
        "POST /v1/text-to-speech/zuri, 200 chars",
        "1 connection",
        &tts_serial,
    );
    row(
        "POST /v1/text-to-speech/zuri, 200 chars",
        "2 threads, 4 connections",
        &tts_loaded,
    );
    println!(
        "| same work called directly (synthesise + WAV + base64) | in-process, serial | {:.0} | {direct_median:.2} ms | {direct_p99:.2} ms |",
        1000.0 / direct_median
    );
    println!();
    println!(
        "HTTP overhead on 200-character TTS ({PAIRS} alternating request/direct pairs, medians): {http_median:.2} ms vs {direct_median:.2} ms = {:+.1}%",
        (http_median / direct_median - 1.0) * 100.0
    );
    println!("(targets: ≥ 20,000 req/s for GET /v1/voices on 2 cores; TTS overhead ≤ 5%)");
}
