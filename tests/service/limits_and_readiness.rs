//! Rate-limit categories and wording, a job whose audio is gone, and readiness on a damaged database, black-box
//! against `sauti serve`.

use crate::common;

use std::time::Duration;

use common::kept_alive::KeptAlive;
use common::{get, method, post_json, problem_body, Server, KEY_A};
use serde_json::json;

#[test]
fn head_on_a_job_counts_against_the_status_limit_like_get() {
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__STATUS_PER_MINUTE", "3"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100"),
        ],
    );
    let url = server.url("/v1/tts/jobs/job_00000000000000000000000000000000");
    for left in ["2", "1", "0"] {
        let head = method("HEAD", &url, Some(KEY_A));
        assert_eq!(head.status, 404);
        assert_eq!(head.header("x-ratelimit-limit"), Some("3"));
        assert_eq!(head.header("x-ratelimit-remaining"), Some(left));
    }
    // The HEADs used up the status allowance, so a GET is refused, naming that category.
    let refused = get(&url, Some(KEY_A));
    let problem = problem_body(&refused, 429);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("3 requests per minute for status/polling"),
        "{detail}"
    );
    // Other endpoints are in their own category.
    assert_eq!(get(&server.url("/v1/voices"), Some(KEY_A)).status, 200);
}

#[test]
fn one_keep_alive_connection_is_counted_like_many() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "4")]);
    let mut connection = KeptAlive::open(&server);
    let mut resets = Vec::new();
    for left in ["3", "2", "1", "0"] {
        let answer = connection.get("/v1/voices", KEY_A);
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("x-ratelimit-limit"), Some("4"));
        assert_eq!(answer.header("x-ratelimit-remaining"), Some(left));
        resets.push(
            answer
                .header("x-ratelimit-reset")
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
    }
    // Each request used up more of the allowance, so the whole of it is back later each time (15 s a request).
    assert!(resets.windows(2).all(|w| w[1] >= w[0] + 14), "{resets:?}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        (now + 59..=now + 61).contains(&resets[3]),
        "{resets:?} at {now}"
    );
    // Over the limit, on the same connection and on a new one alike.
    let refused = connection.get("/v1/voices", KEY_A);
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(get(&server.url("/v1/voices"), Some(KEY_A)).status, 429);
    // Another key on the same connection has an allowance of its own.
    let other = connection.get("/v1/voices", common::KEY_B);
    assert_eq!(other.status, 200);
    assert_eq!(other.header("x-ratelimit-remaining"), Some("3"));
    assert_eq!(connection.get("/v1/voices", KEY_A).status, 429);
}

#[test]
fn requests_without_a_valid_key_are_told_which_limit_they_hit() {
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__UNAUTHENTICATED_PER_MINUTE", "2")],
    );
    let url = server.url("/v1/voices");
    assert_eq!(get(&url, None).status, 401);
    assert_eq!(get(&url, Some("not-a-key-at-all")).status, 401);
    let refused = get(&url, None);
    let problem = problem_body(&refused, 429);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("2 requests per minute for requests without a valid API key"),
        "{detail}"
    );
    assert!(!detail.contains("default"), "{detail}");
    assert!(refused.header("retry-after").is_some());
    // A valid key is not held back by the unauthenticated limit.
    assert_eq!(get(&url, Some(KEY_A)).status, 200);
}

#[test]
fn a_succeeded_job_whose_audio_is_gone_answers_410_for_good() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let created = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari ya asubuhi, karibu sana."}),
    );
    assert_eq!(created.status, 202);
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let job = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(job["status"], "succeeded");
    let audio_url = server.url(&format!("/v1/tts/jobs/{id}/audio"));
    assert_eq!(get(&audio_url, Some(KEY_A)).status, 200);

    std::fs::remove_file(data.path().join("jobs").join(format!("{id}.wav"))).unwrap();
    let gone = get(&audio_url, Some(KEY_A));
    let problem = problem_body(&gone, 410);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/errors/audio_gone"),
        "{problem}"
    );
    assert_eq!(problem["title"], "Gone");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("no longer stored"),
        "{problem}"
    );
    assert_eq!(gone.header("retry-after"), None);
    // The job itself still reads as succeeded.
    assert_eq!(
        get(&server.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A)).json()["status"],
        "succeeded"
    );
}

#[test]
fn readiness_fails_when_the_jobs_table_cannot_be_read() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let ready = get(&server.url("/readyz"), None);
    assert_eq!(ready.status, 200);
    // Without the turn-taking models, sessions detect speech by its energy and end turns after a silence.
    assert_eq!(
        ready.json()["turns"],
        serde_json::json!({"vad": "energy", "smart_turn": false})
    );
    assert!(server.terminate(Duration::from_secs(20)).is_some());

    // Overwrite the jobs table's root page with garbage, leaving the rest of the file as it was.
    let path = data.path().join("sauti.db");
    let (root, page_size): (i64, i64) = {
        let c = rusqlite::Connection::open(&path).unwrap();
        let root = c
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let size = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        (root, size)
    };
    let mut bytes = std::fs::read(&path).unwrap();
    let start = usize::try_from((root - 1) * page_size).unwrap();
    let end = start + usize::try_from(page_size).unwrap();
    for (i, byte) in bytes[start..end].iter_mut().enumerate() {
        *byte = (i * 37 % 251) as u8 | 0x80;
    }
    std::fs::write(&path, bytes).unwrap();

    let server = Server::start(data.path(), &[]);
    let ready = get(&server.url("/readyz"), None);
    let problem = problem_body(&ready, 503);
    assert!(
        problem["detail"].as_str().unwrap().contains("database"),
        "{problem}"
    );
    assert!(ready.header("retry-after").is_some());
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
}
