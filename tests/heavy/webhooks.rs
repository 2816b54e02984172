//! Post-call webhooks from outside: a receiver verifies the HMAC of a call's record (with no keyed digit in it) and
//! of a call that could not start; a receiver answering 500 is tried again with the same event id, through a
//! `kill -9` and a restart, until it takes the event; ten failures in a row disable the webhook, which the API
//! shows; a destination on 127.0.0.1 is refused unless the operator allows it.

use crate::common;

use std::time::{Duration, Instant};

use common::call_socket::{closed, open, send, until_reply};
use common::fake_http::{Answer, FakeHttp, Received};
use common::*;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

const PIN: &str = "5937";

fn server(data: &std::path::Path, bank: &FakeHttp, extra: &[(&str, &str)]) -> Server {
    let asr = fixture("whisper/model");
    let mut env = vec![
        ("SAUTI__ASR__MODEL", asr.to_str().unwrap()),
        ("SAUTI_BANKING_API", bank.base.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__WEBHOOKS__ALLOW_PRIVATE_DESTINATIONS", "true"),
    ];
    env.extend_from_slice(extra);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, *v)).collect();
    Server::start(data, &env)
}

fn set_webhook(server: &Server, url: &str) -> Value {
    let reply = call(
        "PUT",
        &server.url("/v1/voice-agent/webhook"),
        &[("xi-api-key", KEY_A), ("content-type", "application/json")],
        Some(json!({ "url": url }).to_string().as_bytes()),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

fn status(server: &Server) -> Value {
    get(&server.url("/v1/voice-agent/webhook"), Some(KEY_A)).json()
}

/// A short call on the ConvAI socket: the balance with a keyed PIN, then the caller leaves.
fn a_call(server: &Server) {
    let base = server.url("");
    let mut socket = open(
        base.trim_end_matches('/'),
        "/v1/voice-agent/realtime?scenario=banking",
    );
    let mut seen = Vec::new();
    for text in ["nataka kujua salio langu", "0123456789"] {
        send(&mut socket, json!({ "type": "user_message", "text": text }));
        until_reply(&mut socket, &mut seen);
    }
    send(
        &mut socket,
        json!({ "type": "user_dtmf", "digits": format!("{PIN}#") }),
    );
    until_reply(&mut socket, &mut seen);
    let _ = socket.close(None);
    let _ = closed(&mut socket, &mut seen);
}

/// Whether `request` carries a valid `ElevenLabs-Signature` for `secret`.
fn signed(request: &Received, secret: &str) -> bool {
    let header = request.header("elevenlabs-signature").unwrap_or_default();
    let Some((t, v0)) = header
        .split_once(',')
        .and_then(|(t, v)| Some((t.strip_prefix("t=")?, v.strip_prefix("v0=")?)))
    else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", request.raw).as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex == v0
}

fn wait_for(receiver: &FakeHttp, count: usize, within: Duration, what: &str) {
    wait_until(Instant::now() + within, what, || {
        receiver.received().len() >= count
    });
}

#[test]
fn a_receiver_verifies_the_signed_record_of_a_call_and_of_a_call_that_could_not_start() {
    let _alone = common::alone();
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "balance": "3,300" })));
    let receiver = FakeHttp::start(|_, _| Answer::json(200, json!({ "ok": true })));
    let data = temp_dir();
    let server = server(
        data.path(),
        &bank,
        &[("SAUTI__REALTIME__MAX_SESSIONS_PER_KEY", "1")],
    );
    assert_eq!(status(&server)["source"], "none");
    let set = set_webhook(&server, &format!("{}/hooks/sauti", receiver.base));
    let secret = set["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(
        status(&server)["secret"],
        json!(null),
        "the secret is shown once"
    );

    a_call(&server);
    wait_for(
        &receiver,
        1,
        Duration::from_secs(20),
        "the call's record was delivered",
    );
    let delivered = &receiver.received()[0];
    assert_eq!(
        (delivered.method.as_str(), delivered.path.as_str()),
        ("POST", "/hooks/sauti")
    );
    assert!(signed(delivered, &secret), "{:?}", delivered.headers);
    assert!(!signed(delivered, "whsec_not_the_secret"));
    assert!(
        !holds_number(delivered.raw.as_bytes(), PIN),
        "no keyed digit in the webhook: {}",
        delivered.raw
    );
    let body = &delivered.body;
    assert_eq!(body["type"], "post_call_transcription");
    assert_eq!(
        delivered.header("sauti-event-id"),
        body["event_id"].as_str()
    );
    let data = &body["data"];
    assert_eq!(data["agent_id"], "banking");
    assert_eq!(data["status"], "done");
    let said = messages(data);
    assert_eq!(said.len(), 6, "{said:?}");
    assert_eq!(said[4], "(vitufe) ****");
    assert!(said[5].contains("3,300"), "{said:?}");
    let listed = get(&server.url("/v1/convai/conversations"), Some(KEY_A)).json();
    assert_eq!(
        listed["conversations"][0]["conversation_id"],
        data["conversation_id"]
    );

    // A call over the key's sessions cannot start: the webhook hears of it too.
    let base = server.url("");
    let _first = open(
        base.trim_end_matches('/'),
        "/v1/voice-agent/realtime?scenario=banking",
    );
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
            format!(
                "{}/v1/voice-agent/realtime?scenario=health",
                base.trim_end_matches('/')
            )
            .replace("http://", "ws://"),
        )
        .unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY_A.parse().unwrap());
    assert!(
        tokio_tungstenite::tungstenite::connect(request).is_err(),
        "a second session is refused"
    );
    wait_for(
        &receiver,
        2,
        Duration::from_secs(10),
        "the refused call was told",
    );
    let failure = receiver.received()[1].clone();
    assert!(signed(&failure, &secret));
    assert_eq!(failure.body["type"], "call_initiation_failure");
    assert_eq!(failure.body["data"]["agent_id"], "health");
    assert_eq!(failure.body["data"]["metadata"]["status"], 429);
    assert_eq!(status(&server)["consecutive_failures"], 0);
}

#[test]
fn a_failing_receiver_is_retried_through_a_restart_and_ten_failures_disable_it() {
    let _alone = common::alone();
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "balance": "10" })));
    // Three refusals, then it takes the event.
    let flaky = FakeHttp::start(|_, index| match index {
        0..=2 => Answer::json(500, json!({ "error": "busy" })),
        _ => Answer::json(200, json!({})),
    });
    let data = temp_dir();
    let slow = [
        ("SAUTI__WEBHOOKS__RETRY_MS", "1500"),
        ("SAUTI__WEBHOOKS__MAX_RETRY_MS", "1500"),
    ];
    let first = server(data.path(), &bank, &slow);
    set_webhook(&first, &format!("{}/events", flaky.base));
    a_call(&first);
    wait_for(
        &flaky,
        2,
        Duration::from_secs(20),
        "the event was tried again",
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    wait_until(deadline, "two failures in a row shown", || {
        status(&first)["consecutive_failures"] == 2
    });
    first.crash();
    let restarted_at = flaky.received().len();
    assert!(restarted_at < 4, "still undelivered when the server died");

    let second = server(data.path(), &bank, &slow);
    wait_for(
        &flaky,
        4,
        Duration::from_secs(30),
        "the event was delivered after the restart",
    );
    let tries = flaky.received();
    let ids: Vec<&str> = tries
        .iter()
        .map(|r| r.header("sauti-event-id").unwrap())
        .collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one event, one id: {ids:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    wait_until(deadline, "the failures start over", || {
        status(&second)["consecutive_failures"] == 0
    });
    assert_eq!(status(&second)["enabled"], true);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(flaky.received().len(), 4, "delivered once taken");
    drop(second);

    // A receiver that never takes anything: ten failures in a row disable the webhook.
    let down = FakeHttp::start(|_, _| Answer::json(500, json!({})));
    let fast = [
        ("SAUTI__WEBHOOKS__RETRY_MS", "50"),
        ("SAUTI__WEBHOOKS__MAX_RETRY_MS", "200"),
    ];
    let third = server(data.path(), &bank, &fast);
    set_webhook(&third, &format!("{}/events", down.base));
    a_call(&third);
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_until(deadline, "the webhook was disabled", || {
        status(&third)["enabled"] == false
    });
    let shown = status(&third);
    assert_eq!(shown["consecutive_failures"], 10, "{shown}");
    assert!(
        shown["last_error"].as_str().unwrap().contains("500"),
        "{shown}"
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(down.received().len(), 10, "nothing more once disabled");
    // Setting it again enables it, and the waiting event goes out.
    let up = FakeHttp::start(|_, _| Answer::json(204, json!({})));
    set_webhook(&third, &format!("{}/events", up.base));
    wait_for(
        &up,
        1,
        Duration::from_secs(10),
        "the waiting event went out",
    );
}

#[test]
fn a_webhook_to_a_private_address_is_refused_unless_the_operator_allows_it() {
    let _alone = common::alone();
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest",
    ] {
        let reply = call(
            "PUT",
            &server.url("/v1/voice-agent/webhook"),
            &[("xi-api-key", KEY_A), ("content-type", "application/json")],
            Some(json!({ "url": url }).to_string().as_bytes()),
        );
        let problem = problem_body(&reply, 422);
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("allow_private_destinations"),
            "{url}: {problem}"
        );
    }
    for body in [
        json!({ "url": "ftp://files.example/hook" }),
        json!({ "url": "https://example.com/h", "secret": "short" }),
    ] {
        let reply = call(
            "PUT",
            &server.url("/v1/voice-agent/webhook"),
            &[("xi-api-key", KEY_A), ("content-type", "application/json")],
            Some(body.to_string().as_bytes()),
        );
        problem_body(&reply, 422);
    }
    assert_eq!(status(&server)["source"], "none");
    let removed = call(
        "DELETE",
        &server.url("/v1/voice-agent/webhook"),
        &[("xi-api-key", KEY_A)],
        None,
    );
    assert_eq!(removed.status, 404);
}
