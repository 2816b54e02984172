//! Command-line commands that run models in-process: `sauti stt` with a Whisper model and `sauti tts` with a
//! configured neural voice.

use crate::common;

use common::cli::{assert_one_line_error, sauti, sauti_with_runtime, stdout, wav_properties};

#[test]
fn stt_transcribes_in_process_with_a_whisper_model() {
    let model = common::fixture("whisper/model").display().to_string();
    let clip = common::fixture("whisper/speech.wav").display().to_string();
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::fixture("whisper/reference.json")).unwrap(),
    )
    .unwrap();
    let dir = common::temp_dir();
    // The fixture's transcripts were decoded with at most this many tokens.
    let config = dir.path().join("asr.toml");
    std::fs::write(
        &config,
        format!("[asr]\nmax_new_tokens = {}\n", reference["max_new_tokens"]),
    )
    .unwrap();
    let output = sauti_with_runtime(&[
        "stt",
        &clip,
        "--model",
        &model,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Whisper writes its timestamps by default: the text is the engine's, whose tokens tests/engines/whisper.rs
    // checks against transformers' own timestamp rules.
    let engine = sauti::asr::whisper::Whisper::load(
        std::path::Path::new(&model),
        &sauti::asr::whisper::WhisperOptions {
            sessions: 1,
            models: sauti::models::ModelSettings {
                onnxruntime: common::onnxruntime(),
                ..Default::default()
            },
            max_new_tokens: reference["max_new_tokens"].as_u64().unwrap() as usize,
            variant: String::new(),
        },
    )
    .unwrap();
    let samples = sauti::audio::load_16k(&std::fs::read(&clip).unwrap(), &Default::default())
        .unwrap()
        .samples;
    let heard = sauti::asr::Recognizer::transcribe(&engine, &samples, "sw").unwrap();
    assert!(!heard.text.is_empty());
    assert_eq!(stdout(&output).trim_end_matches('\n'), heard.text);
    let segments = sauti_with_runtime(&[
        "stt",
        &clip,
        "--model",
        &model,
        "--segments",
        "--config",
        config.to_str().unwrap(),
    ]);
    // One line per segment between Whisper's timestamps, inside the clip.
    let lines = stdout(&segments);
    assert_eq!(lines.lines().count(), heard.segments.len(), "{lines}");
    assert!(
        lines.starts_with(&format!("[{:7.2} – ", heard.segments[0].start)),
        "{lines}"
    );

    let missing = dir.path().join("no-model");
    assert_one_line_error(
        &sauti_with_runtime(&["stt", &clip, "--model", missing.to_str().unwrap()]),
        "sauti models fetch whisper-base",
    );
    assert_one_line_error(
        &sauti_with_runtime(&["stt", &clip, "--model", &model, "--language", "xx"]),
        "unsupported language",
    );
}

#[test]
fn tts_runs_a_configured_neural_voice_in_process() {
    let dir = common::temp_dir();
    let config = dir.path().join("voices.toml");
    std::fs::write(
        &config,
        format!(
            "[[tts.voices]]\nid = \"tiny\"\nname = \"Tiny\"\nmodel = \"{}\"\n",
            common::fixture("vits/mms").display()
        ),
    )
    .unwrap();
    let out = dir.path().join("tiny.wav");
    let output = sauti_with_runtime(&[
        "tts",
        "Habari za asubuhi",
        "-o",
        out.to_str().unwrap(),
        "--voice",
        "tiny",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (rate, channels, seconds) = wav_properties(&out);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 0.0);
    assert!(String::from_utf8_lossy(&output.stderr).contains("(vits)"));

    // A shipped voice whose model is not installed says what to install.
    assert_one_line_error(
        &sauti_with_runtime(&[
            "tts",
            "Habari",
            "-o",
            out.to_str().unwrap(),
            "--voice",
            "mms-swh",
        ]),
        "sauti models fetch mms-tts-swh",
    );
    assert_one_line_error(
        &sauti(&[
            "tts",
            "Habari",
            "-o",
            out.to_str().unwrap(),
            "--voice",
            "nobody",
        ]),
        "unknown voice",
    );
}

/// `sauti voices similarity` with the speaker encoder the environment names.
fn similarity(encoder: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["voices", "similarity"])
        .args(args)
        .env("ORT_DYLIB_PATH", common::onnxruntime())
        .env("SAUTI__CLONE__SPEAKER_ENCODER", encoder)
        .output()
        .expect("the binary runs")
}

#[test]
fn voices_similarity_measures_two_recordings_with_the_speaker_encoder() {
    let encoder = common::fixture("speaker/encoder.onnx")
        .display()
        .to_string();
    let low = common::fixture("clone/low.wav").display().to_string();
    let other = common::fixture("whisper/speech.wav").display().to_string();
    let same = similarity(&encoder, &[&low, &low]);
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert_eq!(stdout(&same).trim(), "similarity 1.000");
    let apart = similarity(&encoder, &[&low, &other, "--json"]);
    assert!(
        apart.status.success(),
        "{}",
        String::from_utf8_lossy(&apart.stderr)
    );
    let score = serde_json::from_str::<serde_json::Value>(&stdout(&apart)).unwrap()["similarity"]
        .as_f64()
        .expect("a number");
    assert!((-1.0..1.0).contains(&score), "{score}");

    let dir = common::temp_dir();
    let junk = dir.path().join("junk.wav");
    std::fs::write(&junk, b"not audio").unwrap();
    assert_one_line_error(
        &similarity(&encoder, &[&low, junk.to_str().unwrap()]),
        "not audio the service can decode",
    );
    let missing = dir.path().join("none").display().to_string();
    assert_one_line_error(
        &similarity(&missing, &[&low, &other]),
        "sauti models fetch speaker-resnet34",
    );
}
