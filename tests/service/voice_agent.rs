//! Black-box tests of `POST /v1/voice-agent/converse` (text mode) with the embedded scenario engine: the real
//! binary on 127.0.0.1:0, actions sent to a scripted webhook server on loopback.

use crate::common;

use base64::Engine as _;
use common::fake_http::{Answer, FakeHttp};
use common::*;
use serde_json::json;

/// Agent turns are "default" category requests; lift the limit out of the way of multi-turn tests.
const LIMITS: (&str, &str) = ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000");

fn converse(server: &Server, key: &str, body: serde_json::Value) -> Reply {
    post_json(&server.url("/v1/voice-agent/converse"), Some(key), &body)
}

/// The spec §2.7 fields plus session, timings and request id; the audio is 16 kHz mono WAV of the stated length.
fn assert_turn(reply: &Reply, scenario: &str, voice: &str) -> serde_json::Value {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert_eq!(body["content_type"], "audio/wav");
    assert_eq!(body["scenario"], scenario);
    assert_eq!(body["voice_id"], voice);
    assert!(!body["agent_text"].as_str().unwrap_or_default().is_empty());
    assert!(body["session_id"]
        .as_str()
        .is_some_and(|s| s.starts_with("ses_")));
    let wav = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().expect("audio"))
        .expect("base64");
    let (rate, channels, seconds) = wav_properties(&wav);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 0.3, "{seconds}");
    assert!((seconds - body["duration_seconds"].as_f64().unwrap()).abs() < 0.002);
    let timings = &body["timings_ms"];
    for stage in ["dialogue", "tts", "total"] {
        assert!(timings[stage].is_u64(), "timings_ms.{stage}: {timings}");
    }
    assert!(timings["total"].as_u64() >= timings["tts"].as_u64());
    assert_eq!(body["request_id"].as_str(), reply.header("x-request-id"));
    body
}

#[test]
fn a_text_turn_in_each_scenario_speaks_its_reply() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[LIMITS]);
    let body = assert_turn(
        &converse(&server, KEY_A, json!({ "text": "Habari yako?" })),
        "general",
        "baraka",
    );
    assert_eq!(body["user_text"], "Habari yako?");

    let body = assert_turn(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "Saa ngapi sasa?", "scenario": "general", "voice_id": "zuri" }),
        ),
        "general",
        "zuri",
    );
    assert!(
        body["agent_text"].as_str().unwrap().contains("saa "),
        "{body}"
    );

    let body = assert_turn(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "Nimepoteza kadi yangu ya benki", "scenario": "banking" }),
        ),
        "banking",
        "baraka",
    );
    assert!(
        body["agent_text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("kadi"),
        "{body}"
    );

    let body = assert_turn(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "Kliniki inafunguliwa saa ngapi?", "scenario": "health" }),
        ),
        "health",
        "baraka",
    );
    assert!(!body["agent_text"].as_str().unwrap().is_empty());
}

#[test]
fn send_money_over_two_turns_calls_the_transfer_action() {
    let bank = FakeHttp::start(|request, _| {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/transfers")
        );
        Answer::json(201, json!({ "reference": "TX12345" }))
    });
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[LIMITS, ("SAUTI_BANKING_API", bank.base.as_str())],
    );

    let first = converse(
        &server,
        KEY_A,
        json!({ "text": "Nataka kutuma pesa", "scenario": "banking" }),
    );
    let first = assert_turn(&first, "banking", "baraka");
    assert!(
        first["agent_text"].as_str().unwrap().contains("kiasi"),
        "{first}"
    );
    let session = first["session_id"].as_str().unwrap().to_string();

    let second = converse(
        &server,
        KEY_A,
        json!({ "text": "shilingi elfu tano kwa 0712 345 678", "scenario": "banking", "session_id": session }),
    );
    let second = assert_turn(&second, "banking", "baraka");
    assert_eq!(second["session_id"], session.as_str());
    let text = second["agent_text"].as_str().unwrap();
    assert!(
        text.contains("elfu tano")
            && text.contains("sifuri saba moja mbili, tatu nne tano, sita saba nane")
            && text.contains("Nithibitishe"),
        "{text}"
    );
    assert!(
        bank.received().is_empty(),
        "nothing is sent before the confirmation"
    );

    let third = converse(
        &server,
        KEY_A,
        json!({ "text": "Ndiyo", "scenario": "banking", "session_id": session }),
    );
    let third = assert_turn(&third, "banking", "baraka");
    let text = third["agent_text"].as_str().unwrap();
    assert!(
        text.contains("Imekamilika") && text.contains("TX12345"),
        "{text}"
    );
    let calls = bank.received();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].body,
        json!({ "amount": "5000", "phone": "0712345678" })
    );
}

#[test]
fn a_failing_action_gets_the_failure_reply() {
    let bank = FakeHttp::start(|_, _| Answer::json(500, json!({ "error": "down" })));
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[LIMITS, ("SAUTI_BANKING_API", bank.base.as_str())],
    );
    let first = converse(
        &server,
        KEY_A,
        json!({ "text": "nitatuma shilingi 5000 kwa 0712345678", "scenario": "banking" }),
    );
    let session = assert_turn(&first, "banking", "baraka")["session_id"].clone();
    let done = converse(
        &server,
        KEY_A,
        json!({ "text": "ndiyo", "scenario": "banking", "session_id": session }),
    );
    let text = assert_turn(&done, "banking", "baraka")["agent_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("hakuna pesa iliyotumwa"), "{text}");
    assert_eq!(bank.received().len(), 1);
}

#[test]
fn guardrails_answer_first() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[LIMITS]);
    let pin = converse(
        &server,
        KEY_A,
        json!({ "text": "PIN yangu ni 4827, nisaidie", "scenario": "banking" }),
    );
    let text = assert_turn(&pin, "banking", "baraka")["agent_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("usitaje PIN"), "{text}");
    assert!(!text.contains("4827"), "{text}");

    let emergency = converse(
        &server,
        KEY_A,
        json!({ "text": "Mtoto wangu ana degedege na anashindwa kupumua", "scenario": "health" }),
    );
    let text = assert_turn(&emergency, "health", "baraka")["agent_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.starts_with("Hii ni dharura"), "{text}");
    for number in ["112", "114", "115", "999"] {
        assert!(text.contains(number), "{number} in {text}");
    }

    let dose = converse(
        &server,
        KEY_A,
        json!({ "text": "Nipe dozi ya panadol kwa mtoto", "scenario": "health" }),
    );
    let text = assert_turn(&dose, "health", "baraka")["agent_text"]
        .as_str()
        .unwrap()
        .to_lowercase();
    assert!(
        !text.contains("mg") && !text.contains("vidonge 2"),
        "{text}"
    );
}

#[test]
fn bad_requests_get_problem_details() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[LIMITS]);
    let problem = |reply: &Reply, status: u16, needle: &str| {
        let body = problem_body(reply, status);
        assert!(body["detail"].as_str().unwrap().contains(needle), "{body}");
    };
    problem(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "habari", "scenario": "shopping" }),
        ),
        422,
        "unknown scenario",
    );
    problem(
        &converse(&server, KEY_A, json!({ "text": "   " })),
        422,
        "must not be empty",
    );
    problem(
        &converse(&server, KEY_A, json!({ "scenario": "general" })),
        422,
        "text",
    );
    problem(
        &converse(&server, KEY_A, json!({ "text": text_of(1001) })),
        422,
        "1000 characters",
    );
    problem(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "habari", "voice_id": "nobody" }),
        ),
        404,
        "voice_id",
    );
    problem(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "habari", "session_id": "ses_missing" }),
        ),
        404,
        "not found",
    );

    // A session is private to the key that started it, and bound to its scenario.
    let first = converse(
        &server,
        KEY_A,
        json!({ "text": "habari", "scenario": "banking" }),
    );
    let session = first.json()["session_id"].clone();
    problem(
        &converse(
            &server,
            KEY_B,
            json!({ "text": "habari", "scenario": "banking", "session_id": session }),
        ),
        404,
        "not found",
    );
    problem(
        &converse(
            &server,
            KEY_A,
            json!({ "text": "habari", "scenario": "health", "session_id": session }),
        ),
        409,
        "banking",
    );

    // A form without audio is the caller's mistake, whatever is installed: 422, not the 503 of the recognizer
    // this server lacks (tests/service/hard_edges.rs covers the valid request that gets it).
    let audio = post_raw(
        &server.url("/v1/voice-agent/converse/audio"),
        Some(KEY_A),
        "multipart/form-data; boundary=x",
        b"--x--\r\n",
    );
    problem(&audio, 422, "no `audio`");
}

#[test]
fn the_reply_comes_in_the_output_format_asked_for() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let turn = |query: &str| {
        post_json(
            &server.url(&format!("/v1/voice-agent/converse{query}")),
            Some(KEY_A),
            &json!({ "scenario": "banking", "text": "Nataka kujua salio langu" }),
        )
    };
    let reply = turn("?output_format=mp3_44100_128");
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert_eq!(body["content_type"], "audio/mpeg");
    let audio = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().unwrap())
        .unwrap();
    let (rate, channels, seconds) = common::ffmpeg::probe(&audio, &[]);
    assert_eq!((rate, channels), (44_100, 1));
    let promised = body["duration_seconds"].as_f64().unwrap();
    assert!((seconds - promised).abs() < 0.05, "{seconds} vs {promised}");
    // Telephony: μ-law at 8 kHz, one byte a sample.
    let ulaw = turn("?output_format=ulaw_8000").json();
    assert_eq!(ulaw["content_type"], "audio/basic");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(ulaw["audio_base64"].as_str().unwrap())
        .unwrap();
    let seconds = bytes.len() as f64 / 8_000.0;
    assert!((seconds - ulaw["duration_seconds"].as_f64().unwrap()).abs() < 0.01);
    // An unknown format is refused before the turn is taken.
    let refused = turn("?output_format=mp3");
    assert!(problem_body(&refused, 422)["detail"]
        .as_str()
        .unwrap()
        .contains("mp3_44100_128"));
}
