//! Rate limits shared by two replicas through Redis (`limits.redis_url`): the configured rate holds in total
//! across both, with the same `X-RateLimit-*` and `Retry-After`; while Redis is down or frozen each replica falls
//! back to its own limiter (or refuses with 503 `rate_limits_unavailable`, when so configured), nothing answers
//! 500, and the shared limits resume when Redis is back.

use crate::common;

use std::time::{Duration, Instant};

use common::redis::Redis;
use common::*;
use serde_json::json;

/// What two replicas share besides Redis, kept for as long as they run.
type Shared = (common::postgres::Postgres, [tempfile::TempDir; 2]);

/// Two replicas as the replicas guide sets them up: the same Redis and the same store (a key's id, which its limits
/// are counted under, is keyed by the store's secret), each with a data directory of its own.
fn replicas(redis: &Redis, extra: &[(&str, &str)]) -> (Server, Server, Shared) {
    let url = redis.url();
    let postgres = common::postgres::Postgres::start();
    let store = postgres.url();
    let mut env = vec![
        ("SAUTI__LIMITS__REDIS_URL", url.as_str()),
        ("SAUTI__LIMITS__REDIS_PREFIX", "replicas-test"),
        ("SAUTI__STORAGE__URL", store.as_str()),
    ];
    env.extend_from_slice(extra);
    let dirs = [temp_dir(), temp_dir()];
    let a = Server::start(dirs[0].path(), &env);
    let b = Server::start(dirs[1].path(), &env);
    (a, b, (postgres, dirs))
}

fn remaining(reply: &Reply) -> u64 {
    reply
        .header("x-ratelimit-remaining")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no x-ratelimit-remaining: {}", reply.status))
}

#[test]
fn twelve_syntheses_over_two_replicas_allow_exactly_ten() {
    let redis = Redis::start();
    let (a, b, _dirs) = replicas(
        &redis,
        &[("SAUTI__LIMITS__UNAUTHENTICATED_PER_MINUTE", "4")],
    );
    let mut answers = Vec::new();
    for i in 0..12 {
        let server = if i % 2 == 0 { &a } else { &b };
        let reply = post_json(
            &server.url("/v1/text-to-speech/zuri"),
            Some(KEY_A),
            &json!({ "text": "Habari" }),
        );
        assert_eq!(reply.header("x-ratelimit-limit"), Some("10"));
        answers.push(reply);
    }
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(&statuses[..10], &[200; 10], "{statuses:?}");
    assert_eq!(&statuses[10..], &[429, 429], "{statuses:?}");
    // One count for both: the remaining allowance falls by one a request, whichever replica answers.
    let left: Vec<u64> = answers[..10].iter().map(remaining).collect();
    assert_eq!(left, (0..10).rev().collect::<Vec<u64>>());
    for refused in &answers[10..] {
        // The next request is allowed one emission interval (6 s at 10 a minute) after the tenth.
        let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=6).contains(&retry), "Retry-After {retry}");
        assert_eq!(remaining(refused), 0);
        let body = problem_body(refused, 429);
        assert!(body["detail"]
            .as_str()
            .unwrap()
            .contains("10 requests per minute"));
    }
    // Another key has its own allowance, on either replica.
    let other = post_json(
        &b.url("/v1/text-to-speech/zuri"),
        Some(KEY_B),
        &json!({ "text": "Habari" }),
    );
    assert_eq!(other.status, 200);
    assert_eq!(remaining(&other), 9);

    // Requests without a valid key are counted per address, across replicas too: 4 a minute.
    let strangers: Vec<u16> = (0..6)
        .map(|i| {
            let server = if i % 2 == 0 { &a } else { &b };
            get(&server.url("/v1/voices"), Some("not-a-key")).status
        })
        .collect();
    assert_eq!(strangers, [401, 401, 401, 401, 429, 429]);
}

#[test]
fn while_redis_is_down_or_frozen_replicas_count_on_their_own_and_then_share_again() {
    let mut redis = Redis::start();
    let (a, b, _dirs) = replicas(&redis, &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")]);
    let voices = |server: &Server| get(&server.url("/v1/voices"), Some(KEY_A));
    // Counted once for both replicas: a, b, a see the allowance fall each time. Counted apart, the third would
    // be at most one below the first, never below the second in between.
    let shared = |a: &Server, b: &Server| {
        let first = remaining(&voices(a));
        let second = remaining(&voices(b));
        let third = remaining(&voices(a));
        first > second && second > third
    };
    wait_until_shared(&a, &b, &shared);

    let readiness =
        |server: &Server| get(&server.url("/readyz"), None).json()["rate_limits"].clone();
    assert_eq!(readiness(&a), "shared");
    redis.stop();
    let down = readiness(&b);
    assert!(
        down.as_str()
            .unwrap()
            .contains("counting in this replica meanwhile"),
        "{down}"
    );
    for i in 0..20 {
        let reply = voices(if i % 2 == 0 { &a } else { &b });
        assert_eq!(reply.status, 200, "request {i} with Redis down");
    }
    redis.resume();
    wait_until_shared(&a, &b, &shared);

    // A Redis that accepts connections but never answers: each request waits at most limits.redis_timeout_ms.
    // After one timeout a replica leaves Redis alone for a second: the requests after it do not wait.
    redis.freeze(true);
    let frozen = Instant::now();
    for i in 0..6 {
        let started = Instant::now();
        let reply = voices(if i % 2 == 0 { &a } else { &b });
        assert_eq!(reply.status, 200, "request {i} with Redis frozen");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
    // Two timeouts of 250 ms (one a replica), the other requests at once.
    assert!(
        frozen.elapsed() < Duration::from_millis(1500),
        "{:?}",
        frozen.elapsed()
    );
    redis.freeze(false);
    wait_until_shared(&a, &b, &shared);

    let metrics = String::from_utf8(get(&a.url("/metrics"), None).body).unwrap();
    let failures = metrics
        .lines()
        .find(|l| l.starts_with("sauti_rate_limit_store_failures_total"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(failures >= 10.0, "failures counted: {failures}");
}

fn wait_until_shared(a: &Server, b: &Server, shared: &dyn Fn(&Server, &Server) -> bool) {
    let started = Instant::now();
    while !shared(a, b) {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the replicas did not share their limits again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn configured_to_refuse_replicas_answer_503_while_redis_is_down() {
    let mut redis = Redis::start();
    let (a, _b, _dirs) = replicas(&redis, &[("SAUTI__LIMITS__REDIS_UNREACHABLE", "refuse")]);
    assert_eq!(get(&a.url("/v1/voices"), Some(KEY_A)).status, 200);
    redis.stop();
    let refused = get(&a.url("/v1/voices"), Some(KEY_A));
    let body = problem_body(&refused, 503);
    assert!(
        body["type"]
            .as_str()
            .unwrap()
            .ends_with("/errors/rate_limits_unavailable"),
        "{body}"
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    // What is not rate limited still answers.
    assert_eq!(get(&a.url("/healthz"), None).status, 200);
    redis.resume();
    let started = Instant::now();
    while get(&a.url("/v1/voices"), Some(KEY_A)).status != 200 {
        assert!(started.elapsed() < Duration::from_secs(15), "no recovery");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_keys_realtime_sessions_are_counted_across_replicas() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    use tokio_tungstenite::tungstenite::{connect, Error};

    let redis = Redis::start();
    let (whisper, library) = (fixture("whisper/model"), onnxruntime());
    let (a, b, _dirs) = replicas(
        &redis,
        &[
            ("SAUTI__REALTIME__MAX_SESSIONS_PER_KEY", "1"),
            ("SAUTI__ASR__MODEL", whisper.to_str().unwrap()),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ],
    );
    let open = |server: &Server, key: &str| {
        let url = server
            .url("/v1/voice-agent/realtime")
            .replace("http://", "ws://");
        let mut request = url.into_client_request().unwrap();
        request
            .headers_mut()
            .insert("xi-api-key", key.parse().unwrap());
        match connect(request) {
            Ok((socket, _)) => Ok(socket),
            Err(Error::Http(answer)) => Err(answer.status().as_u16()),
            Err(error) => panic!("{error}"),
        }
    };
    let mut first = open(&a, KEY_A).expect("the key's first session");
    assert_eq!(
        open(&b, KEY_A).err(),
        Some(429),
        "one session a key, across replicas"
    );
    let other = open(&b, KEY_B).expect("another key has its own");
    drop(other);
    // Closed on one replica, the seat is free on the other.
    first.close(None).unwrap();
    while first.read().is_ok() {}
    let started = Instant::now();
    loop {
        match open(&b, KEY_A) {
            Ok(_) => break,
            Err(429) if started.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(status) => panic!("the seat was not given back: {status}"),
        }
    }
}
