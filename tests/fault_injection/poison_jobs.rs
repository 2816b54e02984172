//! A job whose work kills the server (needs `--features fault-injection`): with `SAUTI_FAULT_JOB_ABORT` the
//! process aborts when that job starts, as an out-of-memory kill would end it. The job is run again once after
//! the first death; after the second it is failed with a reason at the next start, and that start stays up.
#![cfg(feature = "fault-injection")]

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// What the poison job says: the fault switch aborts the process when a job with this text starts.
const POISON: &str = "Sentensi hii inazima seva.";

/// SIGABRT, the signal `abort()` ends a process with.
const SIGABRT: i32 = 6;

fn aborted(status: Option<std::process::ExitStatus>) -> bool {
    status.and_then(|s| s.signal()) == Some(SIGABRT)
}

#[test]
fn a_job_that_stops_the_server_twice_is_failed_and_not_run_again() {
    let dir = temp_dir();
    let env = [
        ("SAUTI_FAULT_JOB_ABORT", POISON),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
    ];

    // Start 1: a long job occupies the one job worker, so the poison job is queued behind it (its creation
    // is answered), and starts, killing the process, once the long one has finished.
    let mut server = Server::start(dir.path(), &env);
    let create = |server: &Server, text: &str| {
        let reply = post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({ "text": text }),
        );
        assert_eq!(
            reply.status,
            202,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()
    };
    let long = create(&server, &text_of(4_000));
    let long = long["job_id"].as_str().expect("job_id").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = get(&server.url(&format!("/v1/tts/jobs/{long}")), Some(KEY_A)).json();
        if status["status"] == "running" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the long job never ran: {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let poison = create(&server, POISON);
    assert_eq!(poison["status"], "queued", "{poison}");
    let poison = poison["job_id"].as_str().expect("job_id").to_string();
    let first = server.exit_within(Duration::from_secs(300));
    assert!(aborted(first), "start 1 is stopped by the job: {first:?}");

    // Start 2: the interrupted job is run once more, and stops the process again.
    let second = Server::run_until_exit(dir.path(), &env, Duration::from_secs(120));
    assert!(aborted(second), "start 2 is stopped by the job: {second:?}");

    // Start 3, the fault still in place: the job is failed with a reason instead of run, and the server stays up.
    let mut server = Server::start(dir.path(), &env);
    let failed = wait_for_job(&server, KEY_A, &poison, Duration::from_secs(30));
    assert_eq!(failed["status"], "failed", "{failed}");
    let reason = failed["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("stopped the server twice") && reason.contains("not be retried"),
        "{failed}"
    );
    let audio = get(
        &server.url(&format!("/v1/tts/jobs/{poison}/audio")),
        Some(KEY_A),
    );
    assert_eq!(audio.status, 409);
    assert!(
        String::from_utf8_lossy(&audio.body).contains("stopped the server twice"),
        "{}",
        String::from_utf8_lossy(&audio.body)
    );
    // The job before it finished normally, and the server keeps answering.
    assert_eq!(
        wait_for_job(&server, KEY_A, &long, Duration::from_secs(120))["status"],
        "succeeded"
    );
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
    assert_eq!(get(&server.url("/readyz"), None).status, 200);
    assert_eq!(server.exit_within(Duration::from_millis(500)), None);
    let created = create(&server, "Habari ya jioni.");
    let id = created["job_id"].as_str().expect("job_id");
    assert_eq!(
        wait_for_job(&server, KEY_A, id, Duration::from_secs(60))["status"],
        "succeeded",
        "other jobs still run"
    );
}

#[test]
fn a_job_interrupted_by_clean_stops_is_not_held_against_it() {
    let dir = temp_dir();
    let env = [
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
    ];
    let mut job = None;
    // Three stops asked for (SIGTERM) while the job runs: it is queued again each time, never failed.
    for stop in 0..3 {
        let server = Server::start(dir.path(), &env);
        let id = job.get_or_insert_with(|| {
            let reply = post_json(
                &server.url("/v1/tts/jobs"),
                Some(KEY_A),
                &json!({ "text": text_of(6_000) }),
            );
            assert_eq!(reply.status, 202);
            reply.json()["job_id"].as_str().expect("job_id").to_string()
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = get(&server.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A)).json();
            if status["status"] == "running" {
                break;
            }
            assert_ne!(status["status"], "failed", "stop {stop}: {status}");
            assert!(
                Instant::now() < deadline,
                "stop {stop}: never ran: {status}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = server.terminate(Duration::from_secs(30));
        assert!(
            status.is_some_and(|s| s.success()),
            "stop {stop}: {status:?}"
        );
    }
    let server = Server::start(dir.path(), &env);
    let id = job.expect("made");
    let done = wait_for_job(&server, KEY_A, &id, Duration::from_secs(300));
    assert_eq!(done["status"], "succeeded", "{done}");
}
