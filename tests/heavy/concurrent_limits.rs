//! Count limits under concurrent requests, black-box against `sauti serve`: many requests by one key at the same
//! moment never get past the cloned-voice cap or the unfinished-jobs limit, and every one over it gets the
//! limit's refusal.

use crate::common;

use std::sync::{Arc, Barrier};

use common::cloning::{clone, reference};
use common::{Server, KEY_A, KEY_B};
use serde_json::json;

/// Run `n` copies of `request` at once (each on its own thread, released together); their replies.
fn all_at_once(
    n: usize,
    request: impl Fn() -> common::Reply + Send + Sync + 'static,
) -> Vec<common::Reply> {
    let request = Arc::new(request);
    let barrier = Arc::new(Barrier::new(n));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (request, barrier) = (Arc::clone(&request), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                request()
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn cloned_voices(server: &Server, key: &str) -> usize {
    let voices = common::get(&server.url("/v1/voices"), Some(key)).json();
    voices["voices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["voice_id"].as_str().unwrap().starts_with("cv_"))
        .count()
}

#[test]
fn forty_concurrent_clones_leave_exactly_the_cap_of_twenty_voices() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Arc::new(Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__CLONE__QUEUE", "64"),
            ("SAUTI__CLONE__MAX_VOICES_PER_KEY", "20"),
            ("SAUTI__CLONE__SPEAKER_ENCODER", ""),
        ],
    ));
    let bytes = Arc::new(reference("low.wav"));
    let replies = {
        let server = Arc::clone(&server);
        all_at_once(40, move || {
            clone(
                &server,
                KEY_A,
                Some(("audio/wav", &bytes)),
                &[("name", "Amani")],
            )
        })
    };
    let created = replies.iter().filter(|r| r.status == 201).count();
    let refused: Vec<&common::Reply> = replies.iter().filter(|r| r.status != 201).collect();
    assert_eq!(created, 20, "201s among 40 concurrent clones");
    for reply in &refused {
        let problem = common::problem_body(reply, 409);
        assert!(
            problem["type"]
                .as_str()
                .unwrap()
                .ends_with("/errors/voice_limit_reached"),
            "{problem}"
        );
        assert!(
            problem["detail"].as_str().unwrap().contains("20"),
            "{problem}"
        );
    }
    assert_eq!(refused.len(), 20);
    assert_eq!(cloned_voices(&server, KEY_A), 20);
    // The cap is per key: another key still clones.
    let bytes = reference("low.wav");
    let other = clone(&server, KEY_B, Some(("audio/wav", &bytes)), &[]);
    assert_eq!(other.status, 201);
    // And it still holds after a restart, where the voices are read back from the database.
    drop(Arc::into_inner(server));
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__CLONE__SPEAKER_ENCODER", ""),
        ],
    );
    assert_eq!(cloned_voices(&server, KEY_A), 20);
    let again = clone(&server, KEY_A, Some(("audio/wav", &bytes)), &[]);
    common::problem_body(&again, 409);
}

#[test]
fn concurrent_job_requests_never_pass_the_unfinished_jobs_limit() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Arc::new(Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
            ("SAUTI__JOBS__MAX_UNFINISHED_PER_KEY", "3"),
            ("SAUTI__JOBS__WORKERS", "1"),
        ],
    ));
    // Long texts, so the first job is still running while the others arrive.
    let text = common::text_of(20_000);
    let replies = {
        let server = Arc::clone(&server);
        all_at_once(12, move || {
            common::post_json(
                &server.url("/v1/tts/jobs"),
                Some(KEY_A),
                &json!({"text": text, "voice_id": "zuri"}),
            )
        })
    };
    let accepted = replies.iter().filter(|r| r.status == 202).count();
    assert_eq!(accepted, 3, "202s among 12 concurrent job requests");
    for reply in replies.iter().filter(|r| r.status != 202) {
        let problem = common::problem_body(reply, 429);
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("at most 3 queued or running jobs"),
            "{problem}"
        );
        assert!(reply.header("retry-after").is_some());
    }
}
