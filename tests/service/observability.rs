//! Request ids on every response and in problem bodies, and Prometheus metrics at `GET /metrics` with its three
//! access settings.

use crate::common;

use common::*;
use serde_json::json;

/// The value of one sample line (`name{labels} value`) whose text starts with `prefix`.
fn sample(metrics: &str, prefix: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn every_response_carries_a_request_id_and_problems_name_it() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let mut seen = std::collections::HashSet::new();
    for path in ["/healthz", "/v1/voices", "/nowhere"] {
        let reply = get(&server.url(path), Some(KEY_A));
        let id = reply
            .header("x-request-id")
            .expect("x-request-id")
            .to_string();
        assert_eq!(id.len(), 36, "a UUID: {id}");
        assert!(seen.insert(id), "ids are unique");
    }
    let reply = ureq::get(&server.url("/v1/voices/nobody"))
        .set("xi-api-key", KEY_A)
        .set("x-request-id", "client-chosen-42")
        .call()
        .unwrap_err();
    let ureq::Error::Status(404, response) = reply else {
        panic!("404 expected")
    };
    assert_eq!(response.header("x-request-id"), Some("client-chosen-42"));
    let body: serde_json::Value = response.into_json().unwrap();
    assert_eq!(body["request_id"], "client-chosen-42");
    assert_eq!(body["instance"], "/v1/voices/nobody");
}

#[test]
fn metrics_count_requests_synthesis_jobs_and_limits() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "3")]);
    let tts = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &json!({ "text": "Habari ya leo" }),
    );
    assert_eq!(tts.status, 200);
    let job = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Karibu sana." }),
    );
    assert_eq!(job.status, 202);
    let id = job.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for_job(&server, KEY_A, &id, std::time::Duration::from_secs(30))["status"],
        "succeeded"
    );
    for _ in 0..5 {
        get(&server.url("/v1/voices"), Some(KEY_B));
    }

    let reply = get(&server.url("/metrics"), None);
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let text = String::from_utf8(reply.body).unwrap();
    let count =
        |prefix: &str| sample(&text, prefix).unwrap_or_else(|| panic!("no {prefix} in\n{text}"));
    assert_eq!(
        count(
            r#"sauti_http_requests_total{route="/v1/text-to-speech/{voice_id}",method="POST",status="200"}"#
        ),
        1.0
    );
    assert_eq!(
        count(r#"sauti_http_requests_total{route="/v1/voices",method="GET",status="429"}"#),
        2.0
    );
    assert_eq!(
        count(r#"sauti_rate_limited_total{category="default"}"#),
        2.0
    );
    assert_eq!(
        count(r#"sauti_tts_characters_total{voice="zuri"}"#),
        "Habari ya leo".len() as f64 + "Karibu sana.".len() as f64
    );
    // The operations count what each request used, whichever path it came by: the answer and the job.
    assert_eq!(
        count(r#"sauti_usage_total{kind="tts_characters"}"#),
        "Habari ya leo".len() as f64 + "Karibu sana.".len() as f64
    );
    assert!(count(r#"sauti_tts_audio_milliseconds_total{voice="zuri"}"#) > 500.0);
    assert!(count(r#"sauti_tts_real_time_factor_count{engine="formant"}"#) >= 2.0);
    assert_eq!(count(r#"sauti_jobs_total{state="queued"}"#), 1.0);
    assert_eq!(count(r#"sauti_jobs_total{state="succeeded"}"#), 1.0);
    assert_eq!(count(r#"sauti_actor_queue_depth{actor="tts"}"#), 0.0);
    assert!(
        count(
            r#"sauti_http_request_duration_seconds_count{route="/v1/text-to-speech/{voice_id}",method="POST"}"#
        ) >= 1.0
    );
}

#[test]
fn metrics_access_can_need_a_key_or_be_off() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__METRICS__ACCESS", "key")]);
    let refused = get(&server.url("/metrics"), None);
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("content-type"),
        Some("application/problem+json")
    );
    assert_eq!(
        get(&server.url("/metrics"), Some("not-a-key-at-all")).status,
        401
    );
    assert_eq!(get(&server.url("/metrics"), Some(KEY_A)).status, 200);
    drop(server);

    let data = temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__METRICS__ACCESS", "off")]);
    assert_eq!(get(&server.url("/metrics"), Some(KEY_A)).status, 404);
}

/// The log lines of a server (format `format`, level info, one request a minute) that answered two requests
/// with the given ids, the second refused for its rate.
fn log_of_a_refusal(format: &str, ids: [&str; 2]) -> String {
    let data = temp_dir();
    let log = data.path().join("stderr.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data.path())
        .env("SAUTI__AUTH__API_KEYS", KEY_A)
        .env("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1")
        .env("SAUTI__LOG__FORMAT", format)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let base = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("sauti listening on ").map(str::to_string))
        .expect("the service listens");
    let statuses: Vec<u16> = ids
        .iter()
        .map(|id| {
            match ureq::get(&format!("{base}/v1/voices"))
                .set("xi-api-key", KEY_A)
                .set("x-request-id", id)
                .call()
            {
                Ok(response) => response.status(),
                Err(ureq::Error::Status(status, _)) => status,
                Err(error) => panic!("{error}"),
            }
        })
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(statuses, [200, 429]);
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn log_lines_written_for_a_request_name_its_id() {
    let text = log_of_a_refusal("text", ["first-7f3a", "second-over-limit"]);
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("rate limited"))
        .collect();
    assert_eq!(refused.len(), 1, "{text}");
    assert!(
        refused[0].ends_with(" request_id=second-over-limit"),
        "{text}"
    );
    let outside: Vec<&str> = text.lines().filter(|l| l.contains("request_id=")).collect();
    assert_eq!(
        outside, refused,
        "only lines written for a request name one: {text}"
    );

    let json = log_of_a_refusal("json", ["first-c21b", "zweite \"quoted\" id"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let refused: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["message"] == "rate limited")
        .collect();
    assert_eq!(refused.len(), 1, "{json}");
    assert_eq!(refused[0]["request_id"], "zweite \"quoted\" id");
    assert_eq!(refused[0]["category"], "default");
    assert!(
        lines
            .iter()
            .filter(|l| l.get("request_id").is_some())
            .count()
            == 1,
        "{json}"
    );
}
