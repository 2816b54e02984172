//! Monthly limits per key, black box: a key made with `sauti keys create --character-limit` is stopped exactly at
//! its limit whichever dialect it synthesises through, with 429 `quota_exceeded` naming the reset time; a request
//! that is wrong is still 422; the usage report and the subscription equal the sum of the `character-cost`
//! headers; `sauti keys update` raises the limit on the running server; a restart keeps the count; an audio
//! seconds limit stops recognition the same way.

use crate::common;

use common::cli::{keys, listed_key_id};
use common::multipart::{form, Part, BOUNDARY};
use common::*;
use serde_json::{json, Value};

/// A speakable Swahili text of exactly `n` characters.
fn text_of(n: usize) -> String {
    let words = "habari njema karibu tena asante sana rafiki yangu mpendwa ";
    let mut text: String = words.chars().cycle().take(n).collect();
    if text.ends_with(' ') {
        text.pop();
        text.push('a');
    }
    text
}

fn speak(server: &Server, key: &str, path: &str, chars: usize) -> Reply {
    let text = text_of(chars);
    let body = match path {
        "/v1/audio/speech" => json!({"model": "tts-1", "voice": "zuri", "input": text}),
        _ => json!({ "text": text }),
    };
    post_json(&server.url(path), Some(key), &body)
}

fn cost(reply: &Reply) -> u64 {
    reply
        .header("character-cost")
        .expect("a character-cost header")
        .parse()
        .unwrap()
}

fn subscription(server: &Server, key: &str, path: &str) -> Value {
    let reply = get(&server.url(path), Some(key));
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

fn assert_over_quota(reply: &Reply) {
    let problem = problem_body(reply, 429);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/quota_exceeded"),
        "{problem}"
    );
    assert!(reply.header("character-cost").is_none());
    let wait: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!(wait > 0 && wait <= 31 * 86_400, "{wait}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("next_character_count_reset_unix"),
        "{detail}"
    );
}

#[test]
fn a_character_limit_stops_a_key_exactly_in_every_dialect_and_survives_a_restart() {
    let data = temp_dir();
    let key = keys(
        data.path(),
        &[],
        &[
            "create",
            "--name",
            "duka la Mwanza",
            "--character-limit",
            "100",
        ],
    )
    .trim()
    .to_string();
    let id = listed_key_id(data.path(), &[], "duka la Mwanza");
    let env = [("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")];
    let server = Server::start(data.path(), &env);

    let mut charged = 0;
    for path in [
        "/v1/text-to-speech/zuri",
        "/elevenlabs/v1/text-to-speech/zuri",
        "/v1/audio/speech",
    ] {
        let reply = speak(&server, &key, path, 30);
        assert_eq!(reply.status, 200, "{path}");
        charged += cost(&reply);
    }
    assert_eq!(charged, 90);
    // 30 more would pass the limit: refused, and nothing is counted for it.
    for path in [
        "/v1/text-to-speech/zuri/stream",
        "/elevenlabs/v1/text-to-speech/zuri/with-timestamps",
    ] {
        assert_over_quota(&speak(&server, &key, path, 30));
    }
    // A request that is wrong is still told so.
    let empty = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(&key),
        &json!({"text": ""}),
    );
    problem_body(&empty, 422);
    // Exactly the rest fits; then nothing does. Another key is not touched.
    let rest = speak(
        &server,
        &key,
        "/elevenlabs/v1/text-to-speech/zuri/stream",
        10,
    );
    assert_eq!(rest.status, 200);
    charged += cost(&rest);
    assert_over_quota(&speak(&server, &key, "/v1/text-to-speech/zuri", 1));
    assert_eq!(
        speak(&server, KEY_A, "/v1/text-to-speech/zuri", 30).status,
        200
    );

    // The usage report, the subscription (both dialects) and the CLI say the same as the headers.
    let usage = get(&server.url("/v1/usage"), Some(&key));
    assert_eq!(usage.status, 200);
    let usage = usage.json();
    assert_eq!(
        usage["totals"]["characters"],
        json!(charged as f64),
        "{usage}"
    );
    let by_voice: f64 = usage["usage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["kind"] == "characters" && row["voice_id"] == "zuri")
        .map(|row| row["amount"].as_f64().unwrap())
        .sum();
    assert_eq!(by_voice, 100.0);
    let month = subscription(&server, &key, "/v1/user/subscription");
    assert_eq!(month["character_count"], 100);
    assert_eq!(month["character_limit"], 100);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let reset = month["next_character_count_reset_unix"].as_i64().unwrap();
    assert!(reset > now && reset <= now + 31 * 86_400, "{month}");
    assert_eq!(
        subscription(&server, &key, "/elevenlabs/v1/user/subscription"),
        month
    );
    assert!(keys(data.path(), &[], &["usage", &id]).contains("100 / 100"));
    let bad_range = get(
        &server.url("/v1/usage?from=2026-12-01&to=2026-11-01"),
        Some(&key),
    );
    problem_body(&bad_range, 422);

    // A raised limit applies at once; a restart keeps the count.
    keys(
        data.path(),
        &[],
        &["update", &id, "--character-limit", "150"],
    );
    assert_eq!(
        speak(&server, &key, "/v1/text-to-speech/zuri", 30).status,
        200
    );
    server.terminate(std::time::Duration::from_secs(20));
    let server = Server::start(data.path(), &env);
    let month = subscription(&server, &key, "/v1/user/subscription");
    assert_eq!(
        (
            month["character_count"].as_i64(),
            month["character_limit"].as_i64()
        ),
        (Some(130), Some(150))
    );
    assert_over_quota(&speak(&server, &key, "/v1/text-to-speech/zuri", 21));
}

#[test]
fn an_audio_seconds_limit_stops_recognition() {
    let data = temp_dir();
    let key = keys(
        data.path(),
        &[],
        &["create", "--name", "kliniki", "--audio-seconds-limit", "4"],
    )
    .trim()
    .to_string();
    let server = common::sdk::server(&data);
    let audio = std::fs::read(fixture("audio/speech-pcm16-16000-1ch-2500ms.wav")).unwrap();
    let recognise = || {
        let body = form(&[
            ("audio", Part::File("audio/wav", &audio)),
            ("language", Part::Text("sw")),
        ]);
        post_raw(
            &server.url("/v1/speech-to-text"),
            Some(&key),
            &format!("multipart/form-data; boundary={BOUNDARY}"),
            &body,
        )
    };
    assert_eq!(recognise().status, 200);
    let refused = recognise();
    assert_over_quota(&refused);
    let month = subscription(&server, &key, "/v1/user/subscription");
    assert_eq!(month["audio_seconds_count"], 2.5);
    assert_eq!(month["audio_seconds_limit"], 4.0);
    let usage = get(&server.url("/v1/usage"), Some(&key)).json();
    assert_eq!(usage["totals"]["audio_seconds"], 2.5);
}
