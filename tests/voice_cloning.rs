//! Voice cloning, black-box against `sauti serve`, with references made by another synthesizer
//! (`tools/make_clone_fixtures.sh`: eSpeak NG's Swahili voice at a low and a high pitch, encoded by ffmpeg).

mod common;

use base64::Engine as _;
use common::{Reply, Server, KEY_A, KEY_B};
use serde_json::json;

const BOUNDARY: &str = "sauti-clone-boundary-51c2";

fn form(audio: Option<(&str, &[u8])>, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some((media, bytes)) = audio {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"reference\"\r\nContent-Type: {media}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn clone(
    server: &Server,
    key: &str,
    audio: Option<(&str, &[u8])>,
    fields: &[(&str, &str)],
) -> Reply {
    common::post_raw(
        &server.url("/v1/voice-clone/"),
        Some(key),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &form(audio, fields),
    )
}

fn reference(name: &str) -> Vec<u8> {
    std::fs::read(common::fixture(&format!("clone/{name}"))).unwrap()
}

fn median_f0(samples: &[f32]) -> f32 {
    sauti::audio::pitch::quantile(&sauti::audio::pitch::track(samples, 16_000), 0.5).unwrap()
}

fn speak(server: &Server, key: &str, voice: &str) -> Reply {
    common::post_json(
        &server.url(&format!("/v1/text-to-speech/{voice}")),
        Some(key),
        &json!({"text": "Habari za asubuhi. Karibu sana, rafiki yangu, tutaonana kesho jioni."}),
    )
}

fn start(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

#[test]
fn cloned_voices_follow_the_reference_pitch_low_and_high() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    for (file, media) in [
        ("low.mp3", "audio/mpeg"),
        ("high.webm", "audio/webm"),
        ("low.wav", "audio/wav"),
    ] {
        let bytes = reference(file);
        let reply = clone(
            &server,
            KEY_A,
            Some((media, &bytes)),
            &[
                ("name", "Amani"),
                ("consent", "recorded by Amani, 2026-11-23"),
            ],
        );
        assert_eq!(
            reply.status,
            201,
            "{file}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        let voice = reply.json();
        let id = voice["voice_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("cv_"));
        assert_eq!(voice["name"], "Amani");
        assert_eq!(voice["status"], "ready");
        assert_eq!(
            reply.header("location"),
            Some(format!("/v1/voices/{id}").as_str())
        );
        assert!(voice["speech_seconds"].as_f64().unwrap() >= 3.0);

        let spoken = speak(&server, KEY_A, &id);
        assert_eq!(
            spoken.status,
            200,
            "{}",
            String::from_utf8_lossy(&spoken.body)
        );
        let wav = base64::engine::general_purpose::STANDARD
            .decode(spoken.json()["audio_base64"].as_str().unwrap())
            .unwrap();
        let (rate, channels, _) = common::wav_properties(&wav);
        assert_eq!((rate, channels), (16_000, 1));
        let ours = median_f0(
            &sauti::audio::load_16k(&wav, &Default::default())
                .unwrap()
                .samples,
        );
        let theirs = median_f0(
            &sauti::audio::load_16k(&bytes, &Default::default())
                .unwrap()
                .samples,
        );
        let error = (ours - theirs).abs() / theirs;
        eprintln!("{file}: reference median F0 {theirs:.1} Hz, clone {ours:.1} Hz");
        assert!(
            error <= 0.15,
            "{file}: reference {theirs:.0} Hz, clone {ours:.0} Hz ({:.0} %)",
            error * 100.0
        );
    }
    // The low and the high reference land on different base voices.
    let voices = common::get(&server.url("/v1/voices"), Some(KEY_A)).json();
    let cloned: Vec<&serde_json::Value> = voices["voices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["voice_id"].as_str().unwrap().starts_with("cv_"))
        .collect();
    assert_eq!(cloned.len(), 3);
    assert!(cloned
        .iter()
        .all(|v| v["status"] == "active" && v["created_at"].is_string()));
    let genders: std::collections::HashSet<&str> = cloned
        .iter()
        .map(|v| v["gender"].as_str().unwrap())
        .collect();
    assert_eq!(genders.len(), 2, "{cloned:?}");
}

#[test]
fn names_default_and_are_truncated() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let bytes = reference("low.mp3");
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    assert_eq!(reply.status, 201);
    assert_eq!(reply.json()["name"], "Cloned Voice");
    let long = "Sauti ya Amani ".repeat(10);
    let reply = clone(
        &server,
        KEY_A,
        Some(("audio/mpeg", &bytes)),
        &[("name", &long)],
    );
    assert_eq!(reply.status, 201);
    let name = reply.json()["name"].as_str().unwrap().to_string();
    assert_eq!(name.chars().count(), 100);
    assert!(long.starts_with(&name));
}

#[test]
fn bad_references_get_clear_problems() {
    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__MAX_UPLOAD_BYTES", "1048576")]);
    let short = reference("short.wav");
    let body = common::problem_body(
        &clone(&server, KEY_A, Some(("audio/wav", &short)), &[]),
        422,
    );
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("s of speech") && detail.contains("at least 3 s"),
        "{detail}"
    );

    let silence = sauti::audio::encode_wav_16k(&vec![0.0; 16_000 * 10]);
    let body = common::problem_body(
        &clone(&server, KEY_A, Some(("audio/wav", &silence)), &[]),
        422,
    );
    assert!(body["detail"].as_str().unwrap().contains("0.0 s of speech"));

    common::problem_body(
        &clone(
            &server,
            KEY_A,
            Some(("audio/wav", b"definitely not audio")),
            &[],
        ),
        422,
    );
    common::problem_body(&clone(&server, KEY_A, None, &[("name", "x")]), 422);
    let big = form(Some(("audio/wav", &vec![0u8; 1024 * 1024 + 1])), &[]);
    let (status, _) = common::send_raw(
        &server,
        "/v1/voice-clone/",
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        big.len(),
        &big,
    );
    assert!(status.contains("413"), "{status:?}");
    let reply = common::post_raw(
        &server.url("/v1/voice-clone/"),
        Some(KEY_A),
        "application/json",
        b"{}",
    );
    common::problem_body(&reply, 415);
}

#[test]
fn a_cloned_voice_is_private_survives_a_restart_and_can_be_deleted() {
    let data = common::temp_dir();
    let id;
    {
        let server = start(&data, &[]);
        let bytes = reference("high.mp3");
        let reply = clone(
            &server,
            KEY_A,
            Some(("audio/mpeg", &bytes)),
            &[("name", "Neema")],
        );
        assert_eq!(
            reply.status,
            201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        id = reply.json()["voice_id"].as_str().unwrap().to_string();

        // Another key sees nothing of it.
        common::problem_body(
            &common::get(&server.url(&format!("/v1/voices/{id}")), Some(KEY_B)),
            404,
        );
        common::problem_body(&speak(&server, KEY_B, &id), 404);
        let job = common::post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_B),
            &json!({"text": "Habari", "voice_id": id}),
        );
        common::problem_body(&job, 404);
        let turn = common::post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_B),
            &json!({"text": "Habari", "voice_id": id}),
        );
        common::problem_body(&turn, 404);
        let listed = common::get(&server.url("/v1/voices"), Some(KEY_B)).json();
        assert!(!listed.to_string().contains(&id));
        common::problem_body(
            &common::method(
                "DELETE",
                &server.url(&format!("/v1/voices/{id}")),
                Some(KEY_B),
            ),
            404,
        );

        // Its owner uses it for jobs and agent turns too.
        let job = common::post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({"text": "Habari za jioni, rafiki.", "voice_id": id}),
        );
        assert_eq!(job.status, 202);
        let done = common::wait_for_job(
            &server,
            KEY_A,
            job.json()["job_id"].as_str().unwrap(),
            std::time::Duration::from_secs(30),
        );
        assert_eq!(done["status"], "succeeded", "{done}");
        let turn = common::post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({"text": "Habari", "voice_id": id}),
        );
        assert_eq!(turn.status, 200);
        assert_eq!(turn.json()["voice_id"], id.as_str());
        server.terminate(std::time::Duration::from_secs(10));
    }
    let server = start(&data, &[]);
    let voice = common::get(&server.url(&format!("/v1/voices/{id}")), Some(KEY_A));
    assert_eq!(voice.status, 200, "the voice survives a restart");
    assert_eq!(voice.json()["name"], "Neema");
    assert_eq!(speak(&server, KEY_A, &id).status, 200);

    // Built-in voices cannot be deleted; the owner deletes theirs, after which it is gone.
    common::problem_body(
        &common::method("DELETE", &server.url("/v1/voices/zuri"), Some(KEY_A)),
        409,
    );
    let deleted = common::method(
        "DELETE",
        &server.url(&format!("/v1/voices/{id}")),
        Some(KEY_A),
    );
    assert_eq!(deleted.status, 204);
    common::problem_body(
        &common::get(&server.url(&format!("/v1/voices/{id}")), Some(KEY_A)),
        404,
    );
    common::problem_body(&speak(&server, KEY_A, &id), 404);
    common::problem_body(
        &common::method(
            "DELETE",
            &server.url(&format!("/v1/voices/{id}")),
            Some(KEY_A),
        ),
        404,
    );
}

/// The clone's median F0 against the reference's, for a voice made from `file` on `server`.
fn pitch_error(server: &Server, file: &str, media: &str) -> (serde_json::Value, f32, f32) {
    let bytes = reference(file);
    let reply = clone(server, KEY_A, Some((media, &bytes)), &[]);
    assert_eq!(
        reply.status,
        201,
        "{file}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    let voice = reply.json();
    let spoken = speak(server, KEY_A, voice["voice_id"].as_str().unwrap());
    assert_eq!(
        spoken.status,
        200,
        "{}",
        String::from_utf8_lossy(&spoken.body)
    );
    let wav = base64::engine::general_purpose::STANDARD
        .decode(spoken.json()["audio_base64"].as_str().unwrap())
        .unwrap();
    let ours = median_f0(
        &sauti::audio::load_16k(&wav, &Default::default())
            .unwrap()
            .samples,
    );
    let theirs = median_f0(
        &sauti::audio::load_16k(&bytes, &Default::default())
            .unwrap()
            .samples,
    );
    (voice, ours, theirs)
}

#[test]
fn converted_after_synthesis_the_pitch_follows_too() {
    // `clone.method = "dsp"` converts the base voice's output (PSOLA), the path neural base voices take.
    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__METHOD", "dsp")]);
    for (file, media) in [("low.mp3", "audio/mpeg"), ("high.webm", "audio/webm")] {
        let (voice, ours, theirs) = pitch_error(&server, file, media);
        assert_eq!(voice["method"], "dsp");
        eprintln!("{file} (dsp): reference median F0 {theirs:.1} Hz, clone {ours:.1} Hz");
        assert!(
            (ours - theirs).abs() / theirs <= 0.15,
            "{file}: reference {theirs:.0} Hz, clone {ours:.0} Hz"
        );
    }
}

#[test]
fn a_base_voice_that_cannot_be_measured_or_is_missing_is_refused_with_a_reason() {
    let data = common::temp_dir();
    let config = data.path().join("clone.toml");
    std::fs::write(
        &config,
        format!(
            "[[tts.voices]]\nid = \"tiny\"\nname = \"Tiny\"\nmodel = \"{}\"\n\n[clone]\nbase_voice = \"tiny\"\n",
            common::fixture("vits/mms").display()
        ),
    )
    .unwrap();
    let library = common::onnxruntime();
    let server = Server::start_with_config(
        data.path(),
        &config,
        &[("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap())],
    );
    let bytes = reference("low.mp3");
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    // The tiny random-weight voice babbles without a pitch: nothing to measure the speaker against.
    let body = common::problem_body(&reply, 503);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("\"tiny\" cannot be measured"),
        "{body}"
    );

    // A base voice that does not exist is named.
    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__BASE_VOICE", "nobody")]);
    let body = common::problem_body(
        &clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]),
        503,
    );
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("\"nobody\" is unavailable"),
        "{body}"
    );
}

#[test]
fn with_a_speaker_encoder_each_voice_reports_its_similarity() {
    let data = common::temp_dir();
    let encoder = common::fixture("speaker/encoder.onnx");
    let library = common::onnxruntime();
    let server = start(
        &data,
        &[
            ("SAUTI__CLONE__SPEAKER_ENCODER", encoder.to_str().unwrap()),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ],
    );
    let bytes = reference("low.mp3");
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let voice = reply.json();
    let similarity = voice["similarity"].as_f64().expect("a similarity score");
    assert!((-1.0..=1.0).contains(&similarity), "{similarity}");
    let listed = common::get(
        &server.url(&format!(
            "/v1/voices/{}",
            voice["voice_id"].as_str().unwrap()
        )),
        Some(KEY_A),
    )
    .json();
    assert_eq!(listed["similarity"], voice["similarity"]);

    // Without an encoder there is no score (rather than a made-up one).
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    assert_eq!(reply.status, 201);
    assert!(reply.json().get("similarity").is_none());
}

#[test]
fn references_are_kept_only_when_configured_and_go_with_the_voice() {
    let bytes = reference("low.mp3");
    let data = common::temp_dir();
    let server = start(&data, &[]);
    assert_eq!(
        clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]).status,
        201
    );
    assert!(!data.path().join("voices").exists(), "not kept by default");

    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__KEEP_REFERENCE", "true")]);
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    assert_eq!(reply.status, 201);
    let id = reply.json()["voice_id"].as_str().unwrap().to_string();
    let kept = data.path().join("voices").join(format!("{id}.wav"));
    let (rate, channels, seconds) = common::wav_properties(&std::fs::read(&kept).unwrap());
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 10.0);
    let deleted = common::method(
        "DELETE",
        &server.url(&format!("/v1/voices/{id}")),
        Some(KEY_A),
    );
    assert_eq!(deleted.status, 204);
    assert!(!kept.exists(), "the reference goes with the voice");
}
