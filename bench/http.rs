//! HTTP benchmark: requests per second and p99 latency of `GET /v1/voices` and of 200-character text-to-speech
//! on the embedded voice, against the release server, with `wrk` as the load generator; and the overhead of the
//! HTTP path over calling the synthesizer directly, measured in the same run: in throughput (wrk keeping the
//! server's synthesis workers busy against as many threads calling the synthesizer) and in single-request
//! latency.
//!
//! Run: `apt-get install -y wrk && cargo bench --bench http`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use sauti::audio;
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

// The server's allocator, so both sides of the comparison allocate alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KEY: &str = "bench-key-0123456789";
/// Single HTTP requests and direct calls for each latency overhead, and the block length of the warm one.
const PAIRS: usize = 300;
const BLOCK: usize = 25;
/// Alternating HTTP/direct windows for the throughput overhead, and their length.
const ROUNDS: usize = 6;
const WINDOW: Duration = Duration::from_secs(4);
/// The server's synthesis workers (`tts.workers`, the default of 2), matched by the direct side's threads.
const WORKERS: usize = 2;

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
    // The TTS workload: POST the 200-character text over `connections` for `seconds`.
    let tts_wrk = |connections: &str, seconds: &str| {
        wrk(&[
            "-t1",
            "-c",
            connections,
            "-d",
            seconds,
            "--latency",
            "-H",
            &key_header,
            "-s",
            &script,
            &url,
        ])
    };
    let tts_serial = tts_wrk("1", "10s");

    // Throughput: windows of wrk keeping every synthesis worker busy alternate with windows of as many threads
    // calling the same work directly, so drifts in the machine's speed hit both sides alike.
    let window = format!("{}s", WINDOW.as_secs());
    let (mut http_requests, mut direct_calls) = (0.0, 0.0);
    // CPU seconds of the server process and of this process's direct-call threads, per request.
    let (mut server_cpu, mut direct_cpu, mut wrk_cpu) = (0.0, 0.0, 0.0);
    // The server's CPU split: its synthesis worker threads, and every other thread.
    let (mut workers_cpu, mut io_cpu) = (0.0, 0.0);
    let mut tts_loaded = Vec::new();
    for _ in 0..ROUNDS {
        let (before, wrk_before) = (cpu_seconds(server.id()), children_cpu_seconds());
        let threads_before = thread_cpu_seconds(server.id());
        let loaded = tts_wrk(&(2 * WORKERS).to_string(), &window);
        server_cpu += cpu_seconds(server.id()) - before;
        let threads_after = thread_cpu_seconds(server.id());
        workers_cpu += threads_after.0 - threads_before.0;
        io_cpu += threads_after.1 - threads_before.1;
        wrk_cpu += children_cpu_seconds() - wrk_before;
        http_requests += loaded.requests_per_second * WINDOW.as_secs_f64();
        tts_loaded.push(loaded);
        let before = cpu_seconds(std::process::id());
        direct_calls += direct_window(WORKERS, WINDOW) as f64;
        direct_cpu += cpu_seconds(std::process::id()) - before;
    }
    let span = ROUNDS as f64 * WINDOW.as_secs_f64();
    let (http_rps, direct_rps) = (http_requests / span, direct_calls / span);

    // Latency of single requests on one keep-alive connection against single direct calls, two ways: one by
    // one alternately (each side starts from the other's caches and from idle threads), and in alternating
    // blocks of back-to-back requests and calls (each side warm, as under a steady trickle of requests).
    let address = base.strip_prefix("http://").expect("http base");
    let mut client =
        RawClient::connect(address, &url, KEY, &serde_json::json!({ "text": TEXT_200 }));
    let alternating = latencies(&mut client, 1);
    let blocks = latencies(&mut client, BLOCK);
    let _ = server.kill();
    let _ = server.wait();

    println!("release server on 127.0.0.1; 200-character Swahili text; wrk and the server share the machine");
    println!();
    println!("| workload | load | requests/s | median | p99 |");
    println!("|---|---|---|---|---|");
    let row = |name: &str, load: &str, r: &WrkResult| {
        println!(
            "| {name} | {load} | {:.0} | {:.2} ms | {:.2} ms |",
            r.requests_per_second, r.median_ms, r.p99_ms
        );
    };
    row(
        "GET /v1/voices",
        "wrk, 2 threads, 64 connections, 10 s",
        &voices,
    );
    row(
        "POST /v1/text-to-speech/zuri",
        "wrk, 1 connection, 10 s",
        &tts_serial,
    );
    // The loaded windows as one row: mean rate, median of the medians, worst p99.
    let mut medians: Vec<f64> = tts_loaded.iter().map(|r| r.median_ms).collect();
    medians.sort_by(f64::total_cmp);
    let loaded = WrkResult {
        requests_per_second: http_rps,
        median_ms: medians[medians.len() / 2],
        p99_ms: tts_loaded.iter().map(|r| r.p99_ms).fold(0.0, f64::max),
    };
    let load = format!(
        "wrk, {} connections, {ROUNDS} windows of {window}",
        2 * WORKERS
    );
    row("POST /v1/text-to-speech/zuri", &load, &loaded);
    println!(
        "| same work called directly (synthesise + WAV + base64) | {WORKERS} threads, {ROUNDS} windows | {direct_rps:.0} | | |"
    );
    println!();
    let (server_ms, direct_ms) = (
        server_cpu / http_requests * 1e3,
        direct_cpu / direct_calls * 1e3,
    );
    println!(
        "CPU per request, server process vs direct calls (same windows): {server_ms:.2} ms vs {direct_ms:.2} ms = {:+.1}%",
        (server_ms / direct_ms - 1.0) * 100.0
    );
    let (workers_ms, io_ms) = (
        workers_cpu / http_requests * 1e3,
        io_cpu / http_requests * 1e3,
    );
    println!(
        "  server CPU per request by thread: synthesis workers {workers_ms:.2} ms, the rest (connections, HTTP, actors, encoding the body as it is sent) {io_ms:.2} ms"
    );
    println!(
        "Throughput overhead ({ROUNDS} alternating {window} windows): {http_rps:.1} vs {direct_rps:.1} per second = {:+.1}%",
        (direct_rps / http_rps - 1.0) * 100.0
    );
    let wrk_ms = wrk_cpu / http_requests * 1e3;
    println!(
        "  of which the load generator's own CPU (wrk reading the responses on the same cores): {wrk_ms:.2} ms per request = {:.1}% of a direct call",
        wrk_ms / direct_ms * 100.0
    );
    for ((http, direct), how) in [
        (alternating, "alternating one by one".to_string()),
        (blocks, format!("alternating blocks of {BLOCK}")),
    ] {
        println!(
            "Latency overhead ({PAIRS} single requests vs {PAIRS} direct calls, {how}, medians): {http:.2} ms vs {direct:.2} ms = {:+.1}%",
            (http / direct - 1.0) * 100.0
        );
    }
    println!("(targets: ≥ 20,000 req/s for GET /v1/voices on 2 cores; TTS overhead ≤ 5%)");
}

/// Median milliseconds of [`PAIRS`] single HTTP requests and [`PAIRS`] direct calls, alternating in blocks of
/// `block`.
fn latencies(client: &mut RawClient, block: usize) -> (f64, f64) {
    let (mut http, mut direct) = (Vec::new(), Vec::new());
    while http.len() < PAIRS {
        for _ in 0..block {
            let start = Instant::now();
            let length = client.post();
            http.push(start.elapsed());
            assert!(length > 100_000, "a 200-character synthesis");
        }
        for _ in 0..block {
            let start = Instant::now();
            std::hint::black_box(direct_call());
            direct.push(start.elapsed());
        }
    }
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    (median(http), median(direct))
}

/// What the server does for one request, called in-process: synthesise, encode the WAV, base64 it.
fn direct_call() -> String {
    thread_local! {
        static VOICE: EmbeddedVoice = EmbeddedVoice::zuri();
    }
    let samples = VOICE.with(|voice| {
        voice
            .synthesize(TEXT_200, &VoiceSettings::default())
            .expect("synthesises")
    });
    base64::engine::general_purpose::STANDARD.encode(audio::encode_wav_16k(&samples))
}

/// Calls completed by `threads` threads calling [`direct_call`] back to back for `window`.
fn direct_window(threads: usize, window: Duration) -> usize {
    let deadline = Instant::now() + window;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut calls = 0;
                    while Instant::now() < deadline {
                        std::hint::black_box(direct_call());
                        calls += 1;
                    }
                    calls
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    })
}

/// A minimal HTTP/1.1 client on one keep-alive connection, reading into a buffer it keeps, so that the
/// latency figure carries as little of the client's own cost as possible.
struct RawClient {
    stream: std::net::TcpStream,
    request: Vec<u8>,
    buffer: Vec<u8>,
}

impl RawClient {
    fn connect(address: &str, url: &str, key: &str, body: &serde_json::Value) -> Self {
        let stream = std::net::TcpStream::connect(address).expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        let path = url.split_once(address).map_or(url, |(_, path)| path);
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: {address}\r\nxi-api-key: {key}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        Self {
            stream,
            request: request.into_bytes(),
            buffer: vec![0; 4 << 20],
        }
    }

    /// Send the request and read the whole response; the body's length. Panics unless the status is 200.
    fn post(&mut self) -> usize {
        use std::io::{Read, Write};
        self.stream.write_all(&self.request).expect("request sent");
        let mut read = 0;
        let (head, length) = loop {
            let n = self
                .stream
                .read(&mut self.buffer[read..])
                .expect("response");
            assert!(n > 0, "connection closed");
            read += n;
            if let Some(end) = self.buffer[..read]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
            {
                let head = String::from_utf8_lossy(&self.buffer[..end]).to_ascii_lowercase();
                assert!(head.starts_with("http/1.1 200"), "{head}");
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .expect("content-length");
                break (end + 4, length);
            }
        };
        while read < head + length {
            read += self.stream.read(&mut self.buffer[read..]).expect("body");
        }
        length
    }
}

/// User + system CPU seconds a process has used so far (Linux `/proc/PID/stat`, clock ticks of 10 ms).
fn cpu_seconds(pid: u32) -> f64 {
    stat_seconds(pid, 11)
}

/// User + system CPU seconds of this process's children that have been waited for (the wrk runs).
fn children_cpu_seconds() -> f64 {
    stat_seconds(std::process::id(), 13)
}

/// CPU seconds of a process's synthesis worker threads (`sauti-synth-*`) and of its other threads.
fn thread_cpu_seconds(pid: u32) -> (f64, f64) {
    let (mut workers, mut others) = (0.0, 0.0);
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let seconds = stat_fields_seconds(&stat, 11);
        if stat.contains("(sauti-synth-") {
            workers += seconds;
        } else {
            others += seconds;
        }
    }
    (workers, others)
}

/// The sum of two adjacent clock-tick fields of `/proc/PID/stat`, counted after the command name (utime and
/// stime are the 12th and 13th there, cutime and cstime the 14th and 15th).
fn stat_seconds(pid: u32, first: usize) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat_fields_seconds(&stat, first)
}

/// [`stat_seconds`] of the text of a `stat` file.
fn stat_fields_seconds(stat: &str, first: usize) -> f64 {
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<f64> = after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    (fields.get(first).unwrap_or(&0.0) + fields.get(first + 1).unwrap_or(&0.0)) / 100.0
}
