//! The official client SDKs, the voice-agent frameworks and the reference decoders from PyPI (`tools/pypi.sh`
//! installs each pinned group into target/pypi), and the scripts under tests/sdk that drive sauti with them.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use super::{fixture, onnxruntime, Server};

/// A server for the SDK tests: Swahili recognised by the CTC fixture (words timed), every other language and
/// translation by the Whisper fixture (English words timed by forced alignment with the CTC fixture), limits
/// raised.
pub fn server(data: &tempfile::TempDir) -> Server {
    let config = data.path().join("routes.toml");
    std::fs::write(
        &config,
        format!(
            "[[asr.ctc]]\nlanguages = [\"sw\"]\nalign = [\"en\"]\nmodel = {:?}\ncatalog = \"swahili-test\"\n",
            fixture("ctc/model").to_str().unwrap()
        ),
    )
    .unwrap();
    Server::start_with_config(
        data.path(),
        &config,
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").to_str().unwrap(),
            ),
            (
                "SAUTI__MODELS__ONNXRUNTIME",
                onnxruntime().to_str().unwrap(),
            ),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ],
    )
}

/// The directory `tools/pypi.sh {group}` installed its pinned packages in (once per test binary).
fn installed(group: &str, dir: &'static OnceLock<String>) -> &'static str {
    dir.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let output = Command::new("bash")
            .arg(format!("{root}/tools/pypi.sh"))
            .arg(group)
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "tools/pypi.sh {group}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    })
}

/// Run tests/sdk/`script` with `args` and the official SDKs; panics with its output unless it succeeds.
pub fn run(script: &str, args: &[&str]) -> String {
    static SDKS: OnceLock<String> = OnceLock::new();
    run_with(installed("sdks", &SDKS), script, args)
}

static FRAMEWORKS: OnceLock<String> = OnceLock::new();

/// Run tests/sdk/`script` with `args` and the voice-agent frameworks (Pipecat, LiveKit Agents).
pub fn run_framework(script: &str, args: &[&str]) -> String {
    run_with(installed("frameworks", &FRAMEWORKS), script, args)
}

/// A models folder with the turn-taking models (Silero VAD, Smart Turn v3) installed through the catalog, as an
/// operator without internet would: `sauti models import` from the Pipecat package the frameworks group holds.
pub fn turn_models() -> &'static Path {
    static MODELS: OnceLock<std::path::PathBuf> = OnceLock::new();
    MODELS.get_or_init(|| {
        let pipecat = Path::new(installed("frameworks", &FRAMEWORKS)).join("pipecat/audio");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/turn-models");
        for (name, folder) in [
            ("silero-vad", "vad/data"),
            ("smart-turn-v3", "turn/smart_turn/data"),
        ] {
            let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
                .args(["models", "import", "--name", name, "--dir"])
                .arg(&dir)
                .arg(pipecat.join(folder))
                .output()
                .expect("sauti runs");
            assert!(
                output.status.success(),
                "sauti models import {name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        dir
    })
}

/// Run tests/sdk/`script` with `args` and the reference decoders (pyctcdecode with KenLM).
pub fn run_decoders(script: &str, args: &[&str]) -> String {
    static DECODERS: OnceLock<String> = OnceLock::new();
    run_with(installed("decoders", &DECODERS), script, args)
}

fn run_with(path: &str, script: &str, args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(root.join("tests/sdk").join(script))
        .args(args)
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{script}: {text}");
    text
}
