//! Voice cloning, black-box against `sauti serve`, with references made by another synthesizer
//! (`tools/make_clone_fixtures.sh`: eSpeak NG's Swahili voice at a low and a high pitch, encoded by ffmpeg):
//! the pitch of the clones, names, bad references and the base voices. Storage, privacy and similarity scores:
//! `tests/service/voice_cloning_storage.rs`.

use crate::common;

use common::cloning::{clone, clone_and_speak, form, reference, speak, start, BOUNDARY};
use common::{Server, KEY_A};

#[test]
fn cloned_voices_follow_the_reference_pitch_low_and_high() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    for (file, media) in [
        ("low.mp3", "audio/mpeg"),
        ("high.webm", "audio/webm"),
        ("low.wav", "audio/wav"),
    ] {
        let fields = [
            ("name", "Amani"),
            ("consent", "recorded by Amani, 2026-11-23"),
        ];
        let spoken = clone_and_speak(&server, file, media, &fields);
        let voice = &spoken.voice;
        let id = voice["voice_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("cv_"));
        assert_eq!(voice["name"], "Amani");
        assert_eq!(voice["status"], "ready");
        assert_eq!(
            spoken.reply.header("location"),
            Some(format!("/v1/voices/{id}").as_str())
        );
        assert!(voice["speech_seconds"].as_f64().unwrap() >= 3.0);
        let (rate, channels, _) = common::wav_properties(&spoken.wav);
        assert_eq!((rate, channels), (16_000, 1));
        let (ours, theirs) = (spoken.clone_f0, spoken.reference_f0);
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
fn converted_after_synthesis_the_pitch_follows_too() {
    // `clone.method = "dsp"` converts the base voice's output (PSOLA), the path neural base voices take.
    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__METHOD", "dsp")]);
    for (file, media) in [("low.mp3", "audio/mpeg"), ("high.webm", "audio/webm")] {
        let spoken = clone_and_speak(&server, file, media, &[]);
        let (voice, ours, theirs) = (spoken.voice, spoken.clone_f0, spoken.reference_f0);
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
fn a_cloned_voice_speaks_on_every_path_of_every_replica_and_is_refused_there_once_deleted() {
    use common::{method, post_json, Reply};
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let bytes = reference("high.mp3");
    let tts = |server: &Server, id: &str| speak(server, KEY_A, id);
    let agent = |server: &Server, id: &str| {
        post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &serde_json::json!({"text": "Habari", "voice_id": id}),
        )
    };
    let job = |server: &Server, id: &str| {
        post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &serde_json::json!({"text": "Habari ya asubuhi.", "voice_id": id}),
        )
    };
    type Speak<'a> = &'a dyn Fn(&Server, &str) -> Reply;
    let paths: [(&str, Speak, u16); 3] = [
        ("tts", &tts, 200),
        ("agent", &agent, 200),
        ("job", &job, 202),
    ];
    // A voice of its own for each path, so the path is the first use on each replica. With two replicas the
    // requests alternate: cloned on one, used on the other and back, deleted on the other, refused on the first
    // and the other.
    for (name, path, status) in paths {
        let reply = clone(
            &server,
            KEY_A,
            Some(("audio/mpeg", &bytes)),
            &[("name", name)],
        );
        assert_eq!(
            reply.status,
            201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let id = reply.json()["voice_id"].as_str().unwrap().to_string();
        for _ in 0..2 {
            let used = path(&server, &id);
            assert_eq!(
                used.status,
                status,
                "{name}: {}",
                String::from_utf8_lossy(&used.body)
            );
            if name == "agent" {
                // The reply is spoken in the cloned voice.
                let turn = used.json();
                assert_eq!(turn["voice_id"], id.as_str(), "{turn}");
                assert!(
                    turn["audio_base64"].as_str().unwrap().len() > 1000,
                    "{turn}"
                );
            }
        }
        let deleted = method(
            "DELETE",
            &server.url(&format!("/v1/voices/{id}")),
            Some(KEY_A),
        );
        assert!(deleted.status < 300, "{}", deleted.status);
        for _ in 0..2 {
            common::problem_body(&path(&server, &id), 404);
        }
    }
}
