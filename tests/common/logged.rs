//! A server whose log is kept: `sauti serve` on port 0 with key A and ONNX Runtime, its stderr written to a file,
//! for tests that search what it logged.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running server and its base URL.
pub struct Logged {
    pub child: Child,
    pub base: String,
}

impl Logged {
    /// Start `sauti serve ARGS…` with its data in `dir`, `env` besides, and its stderr written to `log`.
    pub fn start(dir: &Path, log: &Path, args: &[&str], env: &[(&str, String)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sauti"));
        command
            .arg("serve")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
            .env("SAUTI__STORAGE__DATA_DIR", dir)
            .env("SAUTI__MODELS__DIR", dir.join("models"))
            .env("SAUTI__AUTH__API_KEYS", super::KEY_A)
            .env("SAUTI__MODELS__ONNXRUNTIME", super::onnxruntime())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let base = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("sauti listening on ").map(str::to_string))
            .expect("the service listens");
        Self { child, base }
    }

    /// Stop it (its log is then whole).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.stop();
    }
}
