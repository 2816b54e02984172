//! Supervision under fault (needs `--features fault-injection`).
//!
//! Where the work runs: a panic inside a synthesis, a recognition, a dialogue turn or a job run fails that one
//! request (500 problem+json naming its request id) or job (`failed`, with a reason) alone; the next one
//! succeeds, no actor is restarted, and the fault is counted in `sauti_work_faults_total{actor}`.
//!
//! In the actors: the TtsActor, the AsrActor and the DialogueActor each panic on every third message; every
//! request still gets an answer, the actor is restarted (and counted in /metrics), and later requests succeed.
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
    counter_of(server, "sauti_actor_restarts_total", actor)
}

/// A counter of `/metrics` for one actor (0 before it was first counted).
fn counter_of(server: &Server, name: &str, actor: &str) -> u64 {
    let text = String::from_utf8(get(&server.url("/metrics"), None).body).unwrap();
    text.lines()
        .filter(|l| {
            l.split(['{', ' ']).next() == Some(name) && l.contains(&format!("actor=\"{actor}\""))
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

/// Work faults counted for one actor.
fn faults_of(server: &Server, actor: &str) -> u64 {
    counter_of(server, "sauti_work_faults_total", actor)
}

/// A 500 `internal_error` problem whose body names the request id the response carries (and `sent`, when the
/// client chose it).
fn assert_fault_answer(reply: &Reply, sent: Option<&str>) {
    let body = problem_body(reply, 500);
    assert!(
        body["type"]
            .as_str()
            .is_some_and(|t| t.ends_with("/errors/internal_error")),
        "{body}"
    );
    let header = reply.header("x-request-id").expect("a request id header");
    assert_eq!(body["request_id"], header, "{body}");
    if let Some(sent) = sent {
        assert_eq!(header, sent);
    }
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("request id")),
        "{body}"
    );
}

/// A synthesis request, with the request id the client chose.
fn speak(server: &Server, text: &str, request_id: &str) -> Reply {
    let body = serde_json::to_vec(&json!({ "text": text })).unwrap();
    call(
        "POST",
        &server.url("/v1/text-to-speech/zuri"),
        &[
            ("xi-api-key", KEY_A),
            ("content-type", "application/json"),
            ("x-request-id", request_id),
        ],
        Some(&body),
    )
}

/// A synthesis answer: 200 with the audio.
fn assert_audio(reply: &Reply) {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert!(
        body["audio_base64"].as_str().is_some_and(|a| a.len() > 100),
        "audio comes back"
    );
    assert_eq!(body["content_type"], "audio/wav");
}

#[test]
fn a_panic_in_synthesis_fails_that_request_alone_with_its_request_id() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI_FAULT_SYNTHESIS_EVERY", "2"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ],
    );
    assert_audio(&speak(&server, "Habari ya asubuhi", "synthesis-1"));
    // The second synthesis panics on its worker: that request alone fails, naming its id.
    assert_fault_answer(
        &speak(&server, "Habari ya mchana", "synthesis-2"),
        Some("synthesis-2"),
    );
    assert_audio(&speak(&server, "Habari ya jioni", "synthesis-3"));
    // An id the service made up is named the same way.
    let unnamed = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &json!({"text": "Usiku mwema"}),
    );
    assert_fault_answer(&unnamed, None);
    assert_audio(&speak(&server, "Karibu tena", "synthesis-5"));
    assert_eq!(faults_of(&server, "tts"), 2, "each fault is counted once");
    assert_eq!(
        restarts_of(&server, "tts"),
        0,
        "the actor was not restarted"
    );
    assert_eq!(get(&server.url("/readyz"), None).status, 200);
}

/// Create a job and wait for it to end.
fn finished_job(server: &Server, text: &str) -> serde_json::Value {
    let created = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": text }),
    );
    assert_eq!(
        created.status,
        202,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let id = created.json()["job_id"]
        .as_str()
        .expect("job_id")
        .to_string();
    let done = wait_for_job(server, KEY_A, &id, std::time::Duration::from_secs(120));
    assert!(
        done["status"] == "succeeded" || done["status"] == "failed",
        "the job ended in time: {done}"
    );
    done
}

#[test]
fn a_panic_in_a_job_run_fails_that_job_alone() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI_FAULT_JOB_EVERY", "2"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
        ],
    );
    let first = finished_job(&server, "Kazi ya kwanza inaendelea vizuri.");
    assert_eq!(first["status"], "succeeded", "{first}");
    let second = finished_job(&server, "Kazi ya pili itashindwa.");
    assert_eq!(second["status"], "failed", "{second}");
    assert!(
        second["error"]
            .as_str()
            .is_some_and(|e| e.contains("unexpectedly")),
        "the failed job says why: {second}"
    );
    let third = finished_job(&server, "Kazi ya tatu inafanikiwa.");
    assert_eq!(third["status"], "succeeded", "{third}");
    let audio = get(
        &server.url(&format!(
            "/v1/tts/jobs/{}/audio",
            third["job_id"].as_str().unwrap_or_default()
        )),
        Some(KEY_A),
    );
    assert_eq!(audio.status, 200);
    assert_eq!(faults_of(&server, "jobs"), 1);
    assert_eq!(restarts_of(&server, "jobs"), 0);
}

#[test]
fn a_panic_in_recognition_or_a_dialogue_turn_fails_that_request_alone() {
    let dir = temp_dir();
    let model = fixture("whisper/model");
    let library = onnxruntime();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI_FAULT_RECOGNITION_EVERY", "2"),
            ("SAUTI_FAULT_TURN_EVERY", "2"),
            ("SAUTI__ASR__MODEL", model.to_str().unwrap()),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "4"),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "10000"),
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
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let recognise = || {
        post_raw(
            &server.url("/v1/speech-to-text/"),
            Some(KEY_A),
            &content_type,
            &body,
        )
    };
    assert_eq!(recognise().status, 200);
    assert_fault_answer(&recognise(), None);
    let after = recognise();
    assert_eq!(
        after.status,
        200,
        "{}",
        String::from_utf8_lossy(&after.body)
    );
    assert_eq!(faults_of(&server, "asr"), 1);

    let converse = || {
        post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({"text": "Habari", "scenario": "general"}),
        )
    };
    assert_eq!(converse().status, 200);
    assert_fault_answer(&converse(), None);
    let after = converse();
    assert_eq!(
        after.status,
        200,
        "{}",
        String::from_utf8_lossy(&after.body)
    );
    assert_eq!(faults_of(&server, "dialogue"), 1);
    for actor in ["asr", "dialogue", "agent"] {
        assert_eq!(restarts_of(&server, actor), 0, "{actor} was not restarted");
    }
    assert_eq!(get(&server.url("/readyz"), None).status, 200);
}
