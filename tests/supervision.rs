//! Supervision under fault (needs `--features fault-injection`): the TtsActor panics on every third message;
//! every request still gets an answer, the actor is restarted, and later requests succeed.
#![cfg(feature = "fault-injection")]

mod common;

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
    // Every third message still faults, so of the next three requests at least two succeed.
    let after: Vec<u16> = (0..3)
        .map(|_| post_json(&url, Some(KEY_A), &json!({"text": "Karibu"})).status)
        .collect();
    assert!(
        after.iter().filter(|s| **s == 200).count() >= 2,
        "the service still works: {after:?}"
    );
}
