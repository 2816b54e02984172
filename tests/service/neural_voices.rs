//! Neural voices through the real service: a configured VITS voice is listed and synthesises 16 kHz WAV; the
//! shipped voices whose models are not installed, and any voice when ONNX Runtime is missing, are listed
//! inactive with what to install, answer 503, and the service still starts.

use crate::common;

use base64::Engine;
use common::*;
use serde_json::json;

fn config_with_fixture_voices(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("voices.toml");
    let voices = format!(
        r#"
[[tts.voices]]
id = "tiny-mms"
name = "Tiny MMS"
model = "{mms}"
gender = "female"
description = "random-weight MMS-layout fixture"
licence = "CC-BY-NC-4.0"

[[tts.voices]]
id = "tiny-piper"
name = "Tiny Piper"
model = "{piper}"
locale = "sw-KE"
gender = "male"
description = "random-weight Piper-layout fixture, second speaker"
speaker = 1

[[tts.voices]]
id = "mms-swh"
name = "MMS Swahili"
model = "mms-tts-swh"
description = "not installed"
licence = "CC-BY-NC-4.0"
catalog = "mms-tts-swh"
"#,
        mms = fixture("vits/mms").display(),
        piper = fixture("vits/piper/sw-tiny.onnx").display(),
    );
    std::fs::write(&path, voices).unwrap();
    path
}

fn voice<'a>(list: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    list["voices"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["voice_id"] == id))
        .unwrap_or_else(|| panic!("{id} in {list}"))
}

#[test]
fn configured_vits_voices_synthesise_16k_wav_and_missing_ones_say_what_to_install() {
    let dir = temp_dir();
    let config = config_with_fixture_voices(&dir);
    let library = onnxruntime();
    let server = Server::start_with_config(
        dir.path(),
        &config,
        &[
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100"),
        ],
    );
    let list = get(&server.url("/v1/voices"), Some(KEY_A)).json();
    for id in ["tiny-mms", "tiny-piper"] {
        let v = voice(&list, id);
        assert_eq!(v["status"], "active", "{v}");
        assert_eq!(v["engine"], "vits");
        assert!(v.get("status_detail").is_none(), "{v}");
    }
    assert_eq!(voice(&list, "tiny-mms")["licence"], "CC-BY-NC-4.0");
    assert_eq!(voice(&list, "tiny-piper")["locale"], "sw-KE");
    let missing = voice(&list, "mms-swh");
    assert_eq!(missing["status"], "inactive");
    let detail = missing["status_detail"].as_str().unwrap();
    assert!(
        detail.contains("sauti models fetch mms-tts-swh"),
        "{detail}"
    );

    for id in ["tiny-mms", "tiny-piper"] {
        let text = "Habari za asubuhi. Nina shilingi 250.";
        let reply = post_json(
            &server.url(&format!("/v1/text-to-speech/{id}")),
            Some(KEY_A),
            &json!({"text": text, "voice_settings": {"speaking_rate": 1.1}}),
        );
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let body = reply.json();
        assert_eq!(body["voice_id"], id);
        let wav = base64::engine::general_purpose::STANDARD
            .decode(body["audio_base64"].as_str().unwrap())
            .unwrap();
        let (rate, channels, seconds) = wav_properties(&wav);
        assert_eq!((rate, channels), (16_000, 1));
        assert!(seconds > 0.5, "{id}: {seconds} s");
        assert!((seconds - body["duration_seconds"].as_f64().unwrap()).abs() < 0.002);
    }

    let reply = post_json(
        &server.url("/v1/text-to-speech/mms-swh"),
        Some(KEY_A),
        &json!({"text": "Habari"}),
    );
    let body = problem_body(&reply, 503);
    assert!(
        body["type"].as_str().unwrap().ends_with("/voice_inactive"),
        "{body}"
    );
    assert!(body["detail"]
        .as_str()
        .unwrap()
        .contains("sauti models fetch mms-tts-swh"));
    // Not transient: an operator must install the model, so no Retry-After.
    assert!(reply.header("retry-after").is_none());
}

#[test]
fn without_onnx_runtime_neural_voices_are_inactive_and_the_builtin_ones_work() {
    let dir = temp_dir();
    let config = config_with_fixture_voices(&dir);
    let server = Server::start_with_config(
        dir.path(),
        &config,
        &[
            (
                "SAUTI__MODELS__ONNXRUNTIME",
                "/nonexistent/libonnxruntime.so",
            ),
            ("ORT_DYLIB_PATH", ""),
        ],
    );
    let list = get(&server.url("/v1/voices"), Some(KEY_A)).json();
    let tiny = voice(&list, "tiny-mms");
    assert_eq!(tiny["status"], "inactive");
    assert!(
        tiny["status_detail"]
            .as_str()
            .unwrap()
            .contains("pip install onnxruntime==1.32.0"),
        "{tiny}"
    );
    assert_eq!(voice(&list, "zuri")["status"], "active");
    let reply = post_json(
        &server.url("/v1/text-to-speech/tiny-piper"),
        Some(KEY_A),
        &json!({"text": "Habari"}),
    );
    let body = problem_body(&reply, 503);
    assert!(
        body["detail"].as_str().unwrap().contains("onnxruntime"),
        "{body}"
    );
    let zuri = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &json!({"text": "Habari"}),
    );
    assert_eq!(zuri.status, 200);
}

#[test]
fn a_split_neural_voice_times_its_characters_and_a_whole_graph_says_it_cannot() {
    let dir = temp_dir();
    let config = config_with_fixture_voices(&dir);
    let library = onnxruntime();
    let server = Server::start_with_config(
        dir.path(),
        &config,
        &[("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap())],
    );
    let text = "Habari za jioni. Nina shilingi 250.";
    let body = json!({ "text": text });
    let url = |voice: &str, tail: &str| {
        server.url(&format!("/elevenlabs/v1/text-to-speech/{voice}{tail}"))
    };
    let audio = post_json(
        &url("tiny-mms", "?output_format=wav_16000"),
        Some(KEY_A),
        &body,
    );
    assert_eq!(audio.status, 200);
    assert_eq!(audio.header("content-type"), Some("audio/wav"));

    // The MMS fixture comes with its prior and decoder graphs: its own durations time every character.
    let timed = post_json(
        &url("tiny-mms", "/with-timestamps?output_format=pcm_16000"),
        Some(KEY_A),
        &body,
    );
    assert_eq!(
        timed.status,
        200,
        "{}",
        String::from_utf8_lossy(&timed.body)
    );
    let timed = timed.json();
    let alignment = &timed["alignment"];
    let characters: String = alignment["characters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(characters, text);
    let times = |key: &str| -> Vec<f64> {
        alignment[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect()
    };
    let (starts, ends) = (
        times("character_start_times_seconds"),
        times("character_end_times_seconds"),
    );
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    assert!(starts.iter().zip(&ends).all(|(s, e)| s <= e));
    let pcm = base64::engine::general_purpose::STANDARD
        .decode(timed["audio_base64"].as_str().unwrap())
        .unwrap();
    let seconds = pcm.len() as f64 / 32_000.0;
    assert!(
        *ends.last().unwrap() <= seconds + 0.02,
        "{ends:?} vs {seconds}"
    );
    assert!(
        *ends.last().unwrap() > seconds / 2.0,
        "{ends:?} vs {seconds}"
    );

    // A Piper voice is one graph without durations: refused, saying what can time words.
    let refused = post_json(&url("tiny-piper", "/with-timestamps"), Some(KEY_A), &body);
    let detail = problem_body(&refused, 422)["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("tiny-piper") && detail.contains("zuri") && detail.contains("split"),
        "{detail}"
    );
}
