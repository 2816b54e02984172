//! Helpers of the command-line tests: run the real binary and check what it prints.

use std::path::Path;
use std::process::{Command, Output};

pub fn sauti(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// A file under `tests/fixtures/audio`, as a path argument.
pub fn audio_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio")
        .join(name)
        .display()
        .to_string()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// (sample rate, channels, seconds) of a WAV file.
pub fn wav_properties(path: &Path) -> (u32, u16, f64) {
    let reader = hound::WavReader::open(path).expect("a valid WAV file");
    let spec = reader.spec();
    (
        spec.sample_rate,
        spec.channels,
        f64::from(reader.duration()) / f64::from(spec.sample_rate),
    )
}

/// The failure contract: non-zero exit and exactly one line on stderr that starts with "sauti:".
pub fn assert_one_line_error(output: &Output, mentions: &str) {
    assert!(!output.status.success(), "should fail");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line on stderr, got {stderr:?}"
    );
    assert!(
        stderr.starts_with("sauti: ") && stderr.contains(mentions),
        "{stderr:?}"
    );
}

/// `sauti` with ONNX Runtime available (`ORT_DYLIB_PATH`).
pub fn sauti_with_runtime(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(args)
        .env("ORT_DYLIB_PATH", super::onnxruntime())
        .output()
        .expect("the binary runs")
}

/// `sauti keys ARGS` against the data directory `data` (and the store `env` names, if any): what it prints;
/// panics unless it succeeds.
pub fn keys(data: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("keys")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__STORAGE__DATA_DIR", data)
        .envs(env.iter().copied())
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The id `sauti keys list` shows for the key named `name`.
pub fn listed_key_id(data: &Path, env: &[(&str, &str)], name: &str) -> String {
    keys(data, env, &["list"])
        .lines()
        .find(|l| l.contains(&format!("\t{name}\t")))
        .and_then(|l| l.split('\t').next())
        .expect("the key is listed")
        .to_string()
}
