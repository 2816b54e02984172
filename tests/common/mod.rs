//! A real `sauti serve` on 127.0.0.1:0 for black-box tests, and a small HTTP client.

#![allow(dead_code)]

pub mod agent;
pub mod browser;
pub mod call_socket;
mod checks;
pub mod chunked;
pub mod cli;
pub mod cloning;
pub mod dictionaries;
pub mod fake_http;
pub mod ffmpeg;
pub mod head;
pub mod kept_alive;
pub mod logged;
pub mod moto;
pub mod multipart;
pub mod postgres;
pub mod readiness;
pub mod redis;
pub mod replicas;
pub mod sdk;
#[allow(unused_imports)]
pub use agent::agent_text;
// Each test binary uses its own share of the helpers.
#[allow(unused_imports)]
pub use checks::{holds_number, messages, wait_until};
mod wav;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use wav::{floats, wav_16k, wav_pcm, wav_properties};

use std::sync::{Mutex, MutexGuard, OnceLock};

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const KEY_A: &str = "test-key-alpha-0001";
pub const KEY_B: &str = "test-key-bravo-0002";

/// A running server process; killed when dropped. With `SAUTI_TEST_REPLICAS=2` it is two replicas sharing a
/// private PostgreSQL, Redis and S3 bucket, and [`Server::url`] alternates between them request by request.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// The development key the server printed, if it made one.
    pub created_key: Option<String>,
    /// The second replica, when there is one.
    pub replica: Option<Box<replicas::Replica>>,
}

impl Server {
    /// Start with the two test keys and extra environment settings.
    pub fn start(data_dir: &Path, env: &[(&str, &str)]) -> Server {
        let keys = format!("{KEY_A},{KEY_B}");
        let mut all: Vec<(&str, &str)> = vec![("SAUTI__AUTH__API_KEYS", keys.as_str())];
        all.extend_from_slice(env);
        Self::start_raw(data_dir, &all)
    }

    /// Start with the two test keys, an extra configuration file (`serve --config FILE`) and environment.
    pub fn start_with_config(data_dir: &Path, config: &Path, env: &[(&str, &str)]) -> Server {
        let keys = format!("{KEY_A},{KEY_B}");
        let mut all: Vec<(&str, &str)> = vec![("SAUTI__AUTH__API_KEYS", keys.as_str())];
        all.extend_from_slice(env);
        Self::spawn(data_dir, Some(config), &all)
    }

    /// Start with exactly the given environment settings (plus data dir and port 0).
    pub fn start_raw(data_dir: &Path, env: &[(&str, &str)]) -> Server {
        Self::spawn(data_dir, None, env)
    }

    fn spawn(data_dir: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Server {
        if replicas::wanted() {
            return replicas::start(data_dir, config, env);
        }
        Self::spawn_one(data_dir, config, env)
    }

    /// One server process.
    fn spawn_one(data_dir: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Server {
        let (child, base, created_key) = Self::launch(data_dir, config, env);
        Server {
            child,
            base,
            created_key,
            replica: None,
        }
    }

    /// Start `sauti serve` and wait until it listens: the process, its base URL and the development key it
    /// printed, if any.
    fn launch(
        data_dir: &Path,
        config: Option<&Path>,
        env: &[(&str, &str)],
    ) -> (Child, String, Option<String>) {
        let mut child = Self::command(data_dir, config, env)
            .spawn()
            .expect("sauti serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        // A development key, when one is made, is printed before the listening line.
        let mut created_key = None;
        let base = loop {
            let line = lines
                .next()
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("sauti serve exited before listening"));
            if let Some(base) = line.strip_prefix("sauti listening on ") {
                break base.to_string();
            }
            created_key = line
                .rsplit(' ')
                .next()
                .filter(|k| k.starts_with("sk_sauti_"))
                .map(str::to_string);
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        (child, base, created_key)
    }

    /// The `sauti serve` command of a test server: its data directory, port 0, its output piped.
    fn command(data_dir: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sauti"));
        command.arg("serve");
        if let Some(config) = config {
            command.arg("--config").arg(config);
        }
        command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
            .env("SAUTI__SERVER__PUBLIC_BASE_URL", "https://api.sauti.test")
            .env("SAUTI__STORAGE__DATA_DIR", data_dir)
            .env("SAUTI__MODELS__DIR", data_dir.join("models"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        command
    }

    /// Start a server (the two test keys and `env`) that is expected to stop by itself, perhaps before it
    /// listens; how it exited, or `None` if it still runs after `limit` (it is then killed).
    pub fn run_until_exit(
        data_dir: &Path,
        env: &[(&str, &str)],
        limit: Duration,
    ) -> Option<std::process::ExitStatus> {
        let keys = format!("{KEY_A},{KEY_B}");
        let mut child = Self::command(data_dir, None, env)
            .env("SAUTI__AUTH__API_KEYS", keys)
            .stdout(Stdio::null())
            .spawn()
            .expect("sauti serve starts");
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// How the process exited, if it has within `limit`.
    pub fn exit_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// `path` on this server; with two replicas, on each in turn.
    pub fn url(&self, path: &str) -> String {
        let base = match &self.replica {
            Some(replica) => replica.next_base(&self.base),
            None => &self.base,
        };
        format!("{base}{path}")
    }

    /// kill -9.
    pub fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(replica) = self.replica.as_mut() {
            replica.kill();
        }
    }

    /// SIGTERM, then the exit status within `limit`.
    pub fn terminate(mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        self.exit_within(limit)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response with status, headers and body, whatever the status.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build()
}

fn collect(result: Result<ureq::Response, ureq::Error>) -> Reply {
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport error: {e}"),
    };
    let status = response.status();
    let headers = response
        .headers_names()
        .into_iter()
        .filter_map(|n| response.header(&n).map(|v| (n.clone(), v.to_string())))
        .collect();
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut response.into_reader(), &mut body).expect("body");
    Reply {
        status,
        headers,
        body,
    }
}

pub fn get(url: &str, key: Option<&str>) -> Reply {
    let mut request = agent().get(url);
    if let Some(key) = key {
        request = request.set("xi-api-key", key);
    }
    collect(request.call())
}

pub fn post_json(url: &str, key: Option<&str>, body: &serde_json::Value) -> Reply {
    let mut request = agent().post(url);
    if let Some(key) = key {
        request = request.set("xi-api-key", key);
    }
    collect(request.send_json(body.clone()))
}

pub fn post_raw(url: &str, key: Option<&str>, content_type: &str, body: &[u8]) -> Reply {
    let mut request = agent().post(url).set("content-type", content_type);
    if let Some(key) = key {
        request = request.set("xi-api-key", key);
    }
    collect(request.send_bytes(body))
}

pub fn method(verb: &str, url: &str, key: Option<&str>) -> Reply {
    let mut request = agent().request(verb, url);
    if let Some(key) = key {
        request = request.set("xi-api-key", key);
    }
    collect(request.call())
}

/// Any request with exactly the given headers (no key unless one is among them).
pub fn call(verb: &str, url: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Reply {
    let mut request = agent().request(verb, url);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    collect(match body {
        Some(body) => request.send_bytes(body),
        None => request.call(),
    })
}

/// Poll a job until it ends (or `limit` passes); returns the last status body.
pub fn wait_for_job(
    server: &Server,
    key: &str,
    job_id: &str,
    limit: Duration,
) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    loop {
        let reply = get(&server.url(&format!("/v1/tts/jobs/{job_id}")), Some(key));
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let body = reply.json();
        let status = body["status"].as_str().unwrap_or_default().to_string();
        if status == "succeeded" || status == "failed" || Instant::now() > deadline {
            return body;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A Swahili text of exactly `n` characters.
pub fn text_of(n: usize) -> String {
    let sentence = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu leo. ";
    let mut text = sentence.repeat(n / sentence.len() + 1);
    text.truncate(n);
    text
}

pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

pub fn path_of(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().to_path_buf()
}

/// Assert a problem answer (status, `application/problem+json`, the same status in the body) and return its body.
pub fn problem_body(reply: &Reply, status: u16) -> serde_json::Value {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/problem+json")
    );
    let body = reply.json();
    assert_eq!(body["status"], status);
    body
}

/// The ONNX Runtime library: `ORT_DYLIB_PATH`, or the one `tools/onnxruntime.sh` installs from PyPI (it is
/// installed on first use, so the neural-voice tests always run).
pub fn onnxruntime() -> PathBuf {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
                return PathBuf::from(path);
            }
            let out = Command::new("bash")
                .arg("tools/onnxruntime.sh")
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stderr(Stdio::inherit())
                .output()
                .expect("bash runs tools/onnxruntime.sh");
            assert!(out.status.success(), "tools/onnxruntime.sh failed");
            PathBuf::from(String::from_utf8(out.stdout).expect("a path").trim())
        })
        .clone()
}

/// A file under `tests/fixtures`.
pub fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

/// POST with a declared length and whatever of its body is given (write errors are ignored: the server
/// may answer and close before the body is through); the status line and body of the answer.
pub fn send_raw(
    server: &Server,
    path: &str,
    content_type: &str,
    declared: usize,
    body: &[u8],
) -> (String, String) {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {declared}\r\n\r\n"
    );
    let _ = stream.write_all(head.as_bytes());
    for chunk in body.chunks(64 * 1024) {
        if stream.write_all(chunk).is_err() {
            break;
        }
    }
    head::read_answer(&mut stream)
}

/// Run alone: held for the length of a test, it keeps the other tests of its binary that take it waiting (the
/// `heavy` binary's tests, which measure memory, pacing and fairness on a machine they must have to themselves).
pub fn alone() -> Alone {
    static ALONE: Mutex<()> = Mutex::new(());
    // A test that failed while holding it poisons it; the next one still runs alone.
    Alone(
        ALONE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    )
}

/// What [`alone`] holds: the test's turn, held across its `.await`s too (it only orders tests, which never
/// wait for one another while holding it).
pub struct Alone(#[allow(dead_code)] MutexGuard<'static, ()>);
