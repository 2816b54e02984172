//! ONNX Runtime's own messages in the service log: at `info` a start-up with a neural voice stays readable (the
//! runtime's chatter is kept at `debug`/`trace`), and asking for `onnxruntime=debug` brings it back.

use crate::common;

use common::*;
use serde_json::json;

/// Start `sauti serve` with a fixture neural voice and JSON logs filtered by `filter`, synthesise once, stop
/// it, and return its log lines.
fn log_lines(filter: &str) -> Vec<serde_json::Value> {
    let dir = temp_dir();
    let config = dir.path().join("voices.toml");
    std::fs::write(
        &config,
        format!(
            "[[tts.voices]]\nid = \"tiny\"\nname = \"Tiny\"\nmodel = \"{}\"\n",
            fixture("vits/mms").display()
        ),
    )
    .unwrap();
    let log = dir.path().join("stderr.log");
    let config_arg = config.display().to_string();
    let mut server = common::logged::Logged::start(
        dir.path(),
        &log,
        &["--config", &config_arg],
        &[
            ("SAUTI__LOG__FORMAT", "json".into()),
            ("RUST_LOG", filter.to_string()),
        ],
    );
    let base = server.base.clone();
    let reply = post_json(
        &format!("{base}/v1/text-to-speech/tiny"),
        Some(KEY_A),
        &json!({"text": "Habari za asubuhi"}),
    );
    server.stop();
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn from_runtime(line: &serde_json::Value) -> bool {
    line["target"] == "onnxruntime"
}

#[test]
fn the_runtime_keeps_quiet_at_info_and_speaks_at_debug() {
    let info = log_lines("info");
    let chatter: Vec<_> = info
        .iter()
        .filter(|l| from_runtime(l) && l["level"] != "WARN" && l["level"] != "ERROR")
        .collect();
    assert!(chatter.is_empty(), "{chatter:?}");
    assert!(
        info.len() < 40,
        "{} log lines at info: {info:#?}",
        info.len()
    );
    assert!(
        info.iter().any(|l| l["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ONNX Runtime loaded"))
            || l["message"]
                .as_str()
                .is_some_and(|m| m.contains("ONNX Runtime loaded"))),
        "{info:#?}"
    );

    let debug = log_lines("info,onnxruntime=debug");
    let runtime: Vec<_> = debug.iter().filter(|l| from_runtime(l)).collect();
    assert!(!runtime.is_empty(), "no runtime messages at debug");
    assert!(runtime.iter().all(|l| l["level"] != "INFO"), "{runtime:?}");
}
