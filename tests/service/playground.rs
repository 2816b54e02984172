//! The browser playground: served at `/` without a key, self-contained, and driven end to end in headless
//! Chromium (Playwright) — `tools/test.sh` installs Chromium and `playwright-core`.

use crate::common;

use std::path::Path;

use common::*;

#[test]
fn the_page_is_served_self_contained() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let reply = get(&server.url("/"), None);
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(reply
        .header("content-security-policy")
        .unwrap()
        .contains("connect-src 'self'"));
    let page = String::from_utf8(reply.body).unwrap();
    for id in [
        "tts-go",
        "stt-record",
        "agent-talk",
        "agent-scenario",
        "clone-go",
        "key",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // Works offline: nothing is fetched from elsewhere.
    assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("//cdn"));
}

/// The fake microphone: speech, then two seconds of silence (Chromium plays the file in a loop, so a live
/// conversation hears a turn end after each pass).
fn microphone(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let speech = root.join("tests/fixtures/audio/speech-pcm16-16000-1ch-2500ms.wav");
    let mut reader = hound::WavReader::open(&speech).unwrap();
    let spec = reader.spec();
    let mut samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    samples.extend(std::iter::repeat_n(0, spec.sample_rate as usize * 2));
    let path = dir.join("microphone.wav");
    let mut writer = hound::WavWriter::create(&path, spec).unwrap();
    for sample in samples {
        writer.write_sample(sample).unwrap();
    }
    writer.finalize().unwrap();
    path
}

/// Run tests/browser/playground.mjs against `server` in `mode` (`no-model` or `model`).
fn drive_chromium(server: &Server, mode: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = temp_dir();
    let microphone = microphone(scratch.path());
    let shots = root.join("target/browser/screenshots");
    common::browser::run(
        "playground.mjs",
        &[
            &server.base,
            KEY_A,
            microphone.to_str().unwrap(),
            shots.to_str().unwrap(),
            mode,
        ],
    );
}

#[test]
fn the_playground_works_in_chromium() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    drive_chromium(&server, "no-model");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(root
        .join("target/browser/screenshots/playground-agent.png")
        .exists());
}

#[test]
fn the_playground_talks_to_the_agent_in_chromium_with_a_model() {
    let data = temp_dir();
    let model = fixture("whisper/model");
    let library = onnxruntime();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__ASR__MODEL", model.to_str().unwrap()),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ],
    );
    drive_chromium(&server, "model");
}
