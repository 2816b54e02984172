//! Two replicas sharing PostgreSQL (`storage.url`) and one audio folder, a client alternating between them:
//! a job created on one is run once and served by either, dictionaries and keys made on one are seen on the
//! other, a revoked key stops working on both, and a PostgreSQL restart gives 503 `storage_unavailable`
//! meanwhile and loses nothing. Jobs under failure are in `replicas/jobs.rs`; cloned voices and agent
//! conversations in `replicas/conversations.rs`.

use crate::common;
#[path = "replicas/conversations.rs"]
mod conversations;
#[path = "replicas/jobs.rs"]
mod jobs;

use std::time::{Duration, Instant};

use common::postgres::Postgres;
use common::*;
use serde_json::json;

/// Two replicas on `postgres` sharing the audio folder in `data`, with limits out of the way and `extra`.
fn replicas(
    postgres: &Postgres,
    data: &tempfile::TempDir,
    extra: &[(&str, &str)],
) -> (Server, Server) {
    let url = postgres.url();
    let mut env = vec![
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    (
        Server::start(data.path(), &env),
        Server::start(data.path(), &env),
    )
}

/// A job queued on `server` with `text`: its id.
fn queue_job(server: &Server, text: &str) -> String {
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
    reply.json()["job_id"].as_str().unwrap().to_string()
}

/// A job made on `made_on` with `text`, once it has succeeded as `served_by` sees it: its id.
fn job_done(made_on: &Server, served_by: &Server, text: &str) -> String {
    let id = queue_job(made_on, text);
    let done = wait_for_job(served_by, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    id
}

/// `reply` is the 503 `storage_unavailable` problem.
fn storage_unavailable(reply: &Reply) {
    let problem = problem_body(reply, 503);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/errors/storage_unavailable"),
        "{problem}"
    );
}

/// Try `attempt` every few milliseconds until it gives a value; past `within`, fail with its last complaint.
fn eventually<T>(within: Duration, mut attempt: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + within;
    loop {
        match attempt() {
            Ok(value) => return value,
            Err(complaint) => assert!(Instant::now() < deadline, "{complaint}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_alternating_between_two_replicas_sees_one_service() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(&postgres, &data, &[]);
    for server in [&a, &b] {
        let ready = get(&server.url("/readyz"), None);
        assert_eq!(ready.status, 200);
        assert_eq!(ready.json()["storage"], "postgres");
    }

    // Jobs: created on either, each run exactly once, read and downloaded on the other.
    let ids: Vec<String> = (0..6)
        .map(|i| {
            let server = if i % 2 == 0 { &a } else { &b };
            queue_job(
                server,
                &format!("Habari za asubuhi. Hii ni kazi namba {i}."),
            )
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let other = if i % 2 == 0 { &b } else { &a };
        let done = wait_for_job(other, KEY_A, id, Duration::from_secs(60));
        assert_eq!(done["status"], "succeeded", "{done}");
        let audio = get(&other.url(&format!("/v1/tts/jobs/{id}/audio")), Some(KEY_A));
        assert_eq!(audio.status, 200);
        let (rate, channels, seconds) = wav_properties(&audio.body);
        assert_eq!((rate, channels), (16_000, 1));
        assert!(seconds > 0.5, "{seconds}");
        // Another key still cannot see it, on either replica.
        assert_eq!(
            get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_B)).status,
            404
        );
    }

    // A pronunciation dictionary made on A is read, listed and used on B.
    let made = common::dictionaries::create(&a, KEY_A, &common::dictionaries::rules_body());
    assert_eq!(made.status, 201);
    let id = made.json()["id"].as_str().unwrap().to_string();
    let read = get(
        &b.url(&format!("/v1/pronunciation-dictionaries/{id}")),
        Some(KEY_A),
    );
    assert_eq!(read.status, 200, "{}", String::from_utf8_lossy(&read.body));
    let spoken =
        common::dictionaries::speak(&b, KEY_A, common::dictionaries::locator(&made.json()));
    assert_eq!(
        spoken.status,
        200,
        "{}",
        String::from_utf8_lossy(&spoken.body)
    );
}

#[test]
fn a_key_made_with_the_cli_works_on_every_replica_until_revoked() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(&postgres, &data, &[]);
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
            .args(args)
            .env("SAUTI__STORAGE__URL", postgres.url())
            .env("SAUTI__STORAGE__DATA_DIR", data.path())
            .output()
            .expect("sauti runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (key, made) = cli(&["keys", "create", "--name", "tawi la Arusha"]);
    let id = made.split_whitespace().nth(1).unwrap().to_string();
    let seen = |server: &Server, status: u16| {
        eventually(Duration::from_secs(10), || {
            let reply = get(&server.url("/v1/voices"), Some(&key));
            (reply.status == status)
                .then_some(())
                .ok_or_else(|| format!("still {} on {}", reply.status, server.base))
        })
    };
    seen(&a, 200);
    seen(&b, 200);
    cli(&["keys", "revoke", &id]);
    seen(&a, 401);
    seen(&b, 401);
}

#[test]
fn a_postgres_restart_gives_503_meanwhile_and_loses_nothing() {
    let mut postgres = Postgres::start();
    let data = temp_dir();
    let (a, _b) = replicas(&postgres, &data, &[]);
    let id = job_done(&a, &a, "Karibu tena.");

    postgres.stop();
    let during = get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A));
    storage_unavailable(&during);
    let created = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Habari." }),
    );
    assert_eq!(created.status, 503);
    assert_eq!(get(&a.url("/readyz"), None).status, 503);
    // An agent turn cannot keep its conversation: 503 too, never a reply that would be forgotten.
    let turn = post_json(
        &a.url("/v1/voice-agent/converse"),
        Some(KEY_A),
        &json!({ "text": "Habari, salio langu ni kiasi gani?" }),
    );
    storage_unavailable(&turn);

    postgres.resume();
    let after = eventually(Duration::from_secs(30), || {
        let after = get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A));
        (after.status == 200)
            .then(|| after.json())
            .ok_or_else(|| format!("no recovery: {}", after.status))
    });
    assert_eq!(after["status"], "succeeded");
    let again = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Habari." }),
    );
    assert_eq!(again.status, 202);
    let turn = post_json(
        &a.url("/v1/voice-agent/converse"),
        Some(KEY_A),
        &json!({ "text": "Habari za mchana" }),
    );
    assert_eq!(turn.status, 200, "{}", String::from_utf8_lossy(&turn.body));
}

#[test]
fn a_key_alternating_between_replicas_is_stopped_exactly_at_its_limit() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let shared = [("SAUTI__STORAGE__URL", postgres.url())];
    let shared: Vec<(&str, &str)> = shared.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let key = common::cli::keys(
        data.path(),
        &shared,
        &["create", "--name", "wakala", "--character-limit", "200"],
    )
    .trim()
    .to_string();
    let (a, b) = replicas(&postgres, &data, &[]);
    // Four clients at once, each alternating between the replicas, 20 characters a request: exactly ten fit.
    let text = "Karibu tena, asante.";
    assert_eq!(text.chars().count(), 20);
    let statuses: Vec<(u16, Option<String>)> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..4)
            .map(|client| {
                let (a, b, key) = (&a, &b, &key);
                scope.spawn(move || {
                    (0..6)
                        .map(|i| {
                            let server = if (client + i) % 2 == 0 { a } else { b };
                            let reply = post_json(
                                &server.url("/v1/text-to-speech/zuri"),
                                Some(key),
                                &json!({ "text": text }),
                            );
                            let cost = reply.header("character-cost").map(str::to_string);
                            (reply.status, cost)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect()
    });
    let spoken: Vec<_> = statuses
        .iter()
        .filter(|(status, _)| *status == 200)
        .collect();
    assert_eq!(spoken.len(), 10, "{statuses:?}");
    assert!(statuses
        .iter()
        .all(|(status, _)| matches!(status, 200 | 429)));
    let headers: u64 = spoken
        .iter()
        .map(|(_, cost)| cost.as_ref().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(headers, 200);
    for server in [&a, &b] {
        let usage = get(&server.url("/v1/usage"), Some(&key)).json();
        assert_eq!(usage["totals"]["characters"], 200.0, "{usage}");
        let month = get(&server.url("/v1/user/subscription"), Some(&key)).json();
        assert_eq!(month["character_count"], 200);
    }
}
