//! Bounded work per request: a text that used to cost quadratic time, many of them from one key, and clients
//! that go away while their synthesis waits or runs.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, KEY_A, KEY_B};
use serde_json::json;

/// Digits and full stops without a sentence end: one enormous "sentence" at the slowest rate.
fn unpunctuated(chars: usize) -> String {
    let mut text = "99.999.999 ".repeat(chars / 11 + 1);
    text.truncate(chars);
    text.trim_end().to_string()
}

fn counter(server: &Server, name: &str) -> f64 {
    let metrics = common::get(&server.url("/metrics"), None);
    String::from_utf8_lossy(&metrics.body)
        .lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn one_key_sending_the_costliest_texts_does_not_stall_another_keys_synthesis() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let url = server.url("/v1/text-to-speech/zuri");
    let heavy = json!({"text": unpunctuated(2000), "voice_settings": {"speaking_rate": 0.25}});
    let attackers: Vec<_> = (0..3)
        .map(|_| {
            let (url, heavy) = (url.clone(), heavy.clone());
            std::thread::spawn(move || common::post_json(&url, Some(KEY_A), &heavy))
        })
        .collect();
    let job = common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": unpunctuated(20_000), "voice_settings": {"speaking_rate": 0.25}}),
    );
    assert_eq!(job.status, 202, "{}", String::from_utf8_lossy(&job.body));

    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let short = common::post_json(&url, Some(KEY_B), &json!({"text": "Habari ya asubuhi."}));
    let waited = started.elapsed();
    assert_eq!(
        short.status,
        200,
        "{}",
        String::from_utf8_lossy(&short.body)
    );
    // Not a speed measurement: a stalled pool made this wait two minutes and then answer 503.
    assert!(
        waited < Duration::from_secs(30),
        "another key's short synthesis waited {waited:?}"
    );
    for attacker in attackers {
        let reply = attacker.join().unwrap();
        assert!(
            reply.status == 200 || reply.status == 503,
            "{} {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        );
        if reply.status == 200 {
            let audio = reply.json()["duration_seconds"].as_f64().unwrap();
            assert!(
                audio > 60.0,
                "2,000 characters at a quarter speed: {audio} s"
            );
        }
    }
}

#[test]
fn a_client_that_goes_away_stops_its_synthesis() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__TTS__WORKERS", "1")]);
    let address = server.base.trim_start_matches("http://").to_string();
    let body =
        json!({"text": unpunctuated(2000), "voice_settings": {"speaking_rate": 0.25}}).to_string();
    // Five requests on one worker: while the first runs the others wait; then every client hangs up.
    let streams: Vec<TcpStream> = (0..5)
        .map(|_| {
            let mut stream = TcpStream::connect(&address).unwrap();
            let head = format!(
                "POST /v1/text-to-speech/zuri HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    drop(streams);

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut cancelled = 0.0;
    while Instant::now() < deadline {
        cancelled = counter(&server, "sauti_cancelled_work_total{actor=\"tts\"}");
        if cancelled >= 4.0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        cancelled >= 4.0,
        "synthesis whose clients left was not stopped: {cancelled}"
    );
    let short = common::post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_B),
        &json!({"text": "Asante sana."}),
    );
    assert_eq!(
        short.status,
        200,
        "{}",
        String::from_utf8_lossy(&short.body)
    );
}
