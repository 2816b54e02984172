//! Supervision under fault (needs `--features fault-injection`): the TtsActor, the AsrActor and the
//! DialogueActor each panic on every third message; every request still gets an answer, the actor is restarted
//! (and counted in /metrics), and later requests succeed.
#![cfg(feature = "fault-injection")]

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn a_crashing_tts_actor_is_restarted_and_no_request_hangs() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI_FAULT_TTS_EVERY", "3"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
            ("SAUTI__SUPERVISOR__MAX_RESTARTS", "100"),
        ],
    );
    let url = server.url("/v1/text-to-speech/zuri");
    let mut statuses = Vec::new();
    for _ in 0..9 {
        let reply = post_json(&url, Some(KEY_A), &json!({"text": "Habari ya asubuhi"}));
        if reply.status == 503 {
            assert_eq!(
                reply.header("content-type"),
                Some("application/problem+json")
            );
            assert!(reply.header("retry-after").is_some());
        }
        statuses.push(reply.status);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&503),
        "faults were injected: {statuses:?}"
    );
    assert!(
        statuses.iter().filter(|s| **s == 200).count() >= 5,
        "later requests succeed: {statuses:?}"
    );

    // Fifty at once: every one is answered, none hangs.
    let replies: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..50)
            .map(|_| {
                scope.spawn(|| post_json(&url, Some(KEY_A), &json!({"text": "Asante"})).status)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).collect()
    });
    assert!(
        replies.iter().all(|s| *s == 200 || *s == 503),
        "{replies:?}"
    );
    let ready = get(&server.url("/readyz"), None);
    assert_eq!(ready.status, 200);
    assert!(
        ready.json()["actor_restarts"].as_u64().unwrap_or(0) >= 3,
        "{}",
        ready.json()
    );
    // Every third message still faults, so of the next three requests at least two succeed. They are paced like
    // the first ones: a request sent while the actor is being restarted after a fault is rightly 503 too.
    let after: Vec<u16> = (0..3)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            post_json(&url, Some(KEY_A), &json!({"text": "Karibu"})).status
        })
        .collect();
    assert!(
        after.iter().filter(|s| **s == 200).count() >= 2,
        "the service still works: {after:?}"
    );
}

/// A restart counter of `/metrics` for one actor.
fn restarts_of(server: &Server, actor: &str) -> u64 {
    let text = String::from_utf8(get(&server.url("/metrics"), None).body).unwrap();
    text.lines()
        .filter(|l| {
            l.starts_with("sauti_actor_restarts_total") && l.contains(&format!("actor=\"{actor}\""))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// Fifty requests at once against an actor that panics on every third message, then three more.
fn fifty_answered(server: &Server, actor: &str, request: impl Fn() -> Reply + Sync) {
    let replies: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..50).map(|_| scope.spawn(|| request().status)).collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).collect()
    });
    assert!(
        replies.iter().all(|s| *s == 200 || *s == 503),
        "{actor}: {replies:?}"
    );
    // A crash fails every message waiting in the mailbox, so under this fault rate most of a burst is 503.
    assert!(
        replies.contains(&503),
        "{actor}: faults were injected: {replies:?}"
    );
    assert!(
        restarts_of(server, actor) >= 1,
        "{actor}: restarts are counted in /metrics"
    );
    let after: Vec<u16> = (0..3).map(|_| request().status).collect();
    assert!(
        after.iter().filter(|s| **s == 200).count() >= 1,
        "{actor}: the service still works: {after:?}"
    );
}

#[test]
fn crashing_recognition_and_dialogue_actors_are_restarted_too() {
    let dir = temp_dir();
    let model = fixture("whisper/model");
    let library = onnxruntime();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI_FAULT_ASR_EVERY", "3"),
            ("SAUTI_FAULT_DIALOGUE_EVERY", "3"),
            ("SAUTI__ASR__MODEL", model.to_str().unwrap()),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "4"),
            ("SAUTI__ASR__QUEUE", "100"),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "10000"),
            ("SAUTI__SUPERVISOR__MAX_RESTARTS", "1000"),
        ],
    );
    let wav = std::fs::read(fixture("whisper/speech.wav")).unwrap();
    let boundary = "fault-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&wav);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let stt = server.url("/v1/speech-to-text/");
    fifty_answered(&server, "asr", || {
        post_raw(
            &stt,
            Some(KEY_A),
            &format!("multipart/form-data; boundary={boundary}"),
            &body,
        )
    });
    let converse = server.url("/v1/voice-agent/converse");
    fifty_answered(&server, "dialogue", || {
        post_json(
            &converse,
            Some(KEY_A),
            &json!({"text": "Habari", "scenario": "general"}),
        )
    });
    assert_eq!(get(&server.url("/readyz"), None).status, 200);
}

#[test]
fn a_crashing_realtime_session_ends_alone_with_a_close_frame() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI_FAULT_REALTIME_EVERY", "4"),
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").to_str().unwrap(),
            ),
            (
                "SAUTI__MODELS__ONNXRUNTIME",
                onnxruntime().to_str().unwrap(),
            ),
        ],
    );
    let said = common::sdk::run("realtime_crash.py", &[&server.url(""), KEY_A]);
    assert!(said.contains("crashed session closed: 1011"), "{said}");
    assert!(said.contains("bystander answered"), "{said}");
    // The service is whole: no supervised actor was restarted, and it still answers.
    assert_eq!(restarts_of(&server, "tts"), 0);
    assert_eq!(get(&server.url("/readyz"), None).status, 200);
}
