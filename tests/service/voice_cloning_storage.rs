//! Cloned voices kept and guarded: private to their key, surviving a restart, deletable, references kept only when
//! configured, and similarity scores with a speaker encoder.

use crate::common;

use common::cloning::{clone, reference, speak, start};
use common::{KEY_A, KEY_B};
use serde_json::json;

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
            // Nothing reaches it: every voice is flagged.
            ("SAUTI__CLONE__SIMILARITY_FLOOR", "1"),
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
    // Under the floor: flagged where its owner sees it, never passed off as a good clone.
    let warning = voice["warnings"][0].as_str().expect("a warning");
    assert!(
        warning.contains("below this server's floor (1.00)"),
        "{voice}"
    );
    assert_eq!(listed["warnings"], voice["warnings"]);

    // Without an encoder there is no score (rather than a made-up one).
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let reply = clone(&server, KEY_A, Some(("audio/mpeg", &bytes)), &[]);
    assert_eq!(reply.status, 201);
    assert!(reply.json().get("similarity").is_none());
    assert!(
        reply.json().get("warnings").is_none(),
        "nothing measured, nothing flagged"
    );
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

#[test]
fn metrics_count_cloned_voices_without_naming_them() {
    let data = common::temp_dir();
    let server = start(&data, &[("SAUTI__CLONE__SPEAKER_ENCODER", "")]);
    let bytes = reference("low.wav");
    let made = clone(&server, KEY_A, Some(("audio/wav", &bytes)), &[]);
    assert_eq!(made.status, 201);
    let id = made.json()["voice_id"].as_str().unwrap().to_string();
    assert_eq!(speak(&server, KEY_A, &id).status, 200);
    assert_eq!(speak(&server, KEY_A, "zuri").status, 200);
    // Read as anyone who reaches the port (metrics.access = "open", the default).
    let metrics = common::get(&server.url("/metrics"), None);
    assert_eq!(metrics.status, 200);
    let text = String::from_utf8(metrics.body).unwrap();
    assert!(!text.contains(&id), "the cloned voice's id is on /metrics");
    assert!(!text.contains("cv_"), "a cloned voice id is on /metrics");
    assert!(
        text.lines().any(|l| l.starts_with("sauti_tts_characters_total{")
            && l.contains("voice=\"cloned\"")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("sauti_tts_characters_total{") && l.contains("voice=\"zuri\"")),
        "{text}"
    );
}
