//! The realtime voice agent from outside, through the `websockets` client library (tests/sdk/realtime_calls.py):
//! a spoken turn (the embedded voice's speech, recognised by the tiny Whisper fixture) answered with transcript,
//! reply and streamed audio in order; barge-in; typed turns; browser tokens (used once, expiring); malformed
//! messages, binary frames, wrong keys and a stalled client each ending only their own session; and a
//! simulated Twilio call with μ-law both ways.

use crate::common;

use base64::Engine as _;
use common::*;

fn speech(server: &Server, format: &str) -> Vec<u8> {
    let reply = post_json(
        &server.url(&format!("/v1/text-to-speech/baraka?output_format={format}")),
        Some(KEY_A),
        &serde_json::json!({ "text": "Nataka kujua salio la akaunti yangu ya akiba." }),
    );
    assert_eq!(reply.status, 200);
    base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap()
}

#[test]
fn a_realtime_conversation_through_a_websocket_client() {
    let _alone = common::alone();
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").to_str().unwrap(),
            ),
            (
                "SAUTI__MODELS__ONNXRUNTIME",
                onnxruntime().to_str().unwrap(),
            ),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
            ("SAUTI__REALTIME__TOKEN_TTL_SECONDS", "1"),
            ("SAUTI__REALTIME__IDLE_SECONDS", "4"),
        ],
    );
    let wav = data.path().join("speech.wav");
    std::fs::write(&wav, speech(&server, "wav_16000")).unwrap();
    let ulaw = data.path().join("speech.ulaw");
    std::fs::write(&ulaw, speech(&server, "ulaw_8000")).unwrap();
    let out = data.path().join("seen.json");
    common::sdk::run(
        "realtime_calls.py",
        &[
            &server.url(""),
            KEY_A,
            wav.to_str().unwrap(),
            ulaw.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    eprintln!("{seen:#}");

    // A spoken turn: the fixture's transcript, the banking scenario's reply, the reply spoken in pieces.
    let spoken = &seen["spoken"];
    assert!(!spoken["transcript"].as_str().unwrap().is_empty());
    assert!(spoken["session_id"].as_str().unwrap().starts_with("ses_"));
    assert!(spoken["audio_seconds"].as_f64().unwrap() > 1.0, "{spoken}");
    let sentences = spoken["reply"]
        .as_str()
        .unwrap()
        .matches(['.', '?', '!'])
        .count();
    assert!(spoken["pieces"].as_u64().unwrap() as usize >= sentences.min(2));

    // Barge-in: the reply stopped, and what the caller heard of it is a beginning of it.
    let barge = &seen["barge_in"];
    let (reply, heard) = (
        barge["reply"].as_str().unwrap(),
        barge["heard"].as_str().unwrap(),
    );
    // A second of it was played before the caller spoke: some words of it were heard, not all.
    assert!(
        !heard.is_empty() && reply.starts_with(heard) && heard.len() < reply.len(),
        "{barge}"
    );
    // Barge-in is answered as soon as the caller's voice is recognised as speech (100 ms of it).
    assert!(barge["seconds_to_interruption"].as_f64().unwrap() < 1.0);

    // Refusals: each ends its own session with a code and a reason; no key or a bad one is refused before
    // the upgrade, as is an unknown scenario (with a problem the client can read).
    let refusals = &seen["refusals"];
    assert_eq!(refusals["malformed"][0], 1008);
    assert!(refusals["malformed"][1]
        .as_str()
        .unwrap()
        .contains("malformed"));
    assert_eq!(refusals["binary"][0], 1003);
    assert_eq!(refusals["unknown_type"][0], 1008);
    assert!(refusals["unknown_type"][1]
        .as_str()
        .unwrap()
        .contains("order_pizza"));
    assert_eq!(refusals["bad_audio"][0], 1008);
    assert_eq!(refusals["wrong_key"], 401);
    assert_eq!(refusals["no_key"], 401);
    assert_eq!(refusals["unknown_scenario"], 422);
    assert!(refusals["unknown_scenario_body"]["detail"]
        .as_str()
        .unwrap()
        .contains("pizzeria"));

    // Tokens open one socket, and not after their time.
    let tokens = &seen["tokens"];
    assert_eq!(tokens["reused"][0], 401);
    assert!(tokens["reused"][1]
        .as_str()
        .unwrap()
        .contains("already used"));
    assert_eq!(tokens["expired"][0], 401);
    assert!(tokens["expired"][1].as_str().unwrap().contains("expired"));

    // The stalled client's session was closed by the server, while another conversation went on.
    assert_eq!(seen["stalled"][0], 1000, "{}", seen["stalled"]);
    assert!(seen["stalled"][1]
        .as_str()
        .unwrap()
        .contains("nothing was received"));

    // The phone call: two turns, each answered with μ-law audio and marks; hanging up closes normally.
    let phone = seen["phone"].as_array().unwrap();
    assert_eq!(phone.len(), 2);
    for turn in phone {
        assert!(turn["seconds"].as_f64().unwrap() > 1.0, "{turn}");
        assert!(turn["marks"].as_u64().unwrap() >= 1);
    }
    assert_eq!(seen["phone_close"][0], 1000);

    // Without an upgrade the path says so, as a problem.
    assert_eq!(seen["plain_get"][0], 426);
    assert_eq!(seen["plain_get"][1], "application/problem+json");

    // Metrics: sessions counted back to none, interruptions and voice-to-voice latency recorded.
    let metrics = String::from_utf8(get(&server.url("/metrics"), None).body).unwrap();
    let value = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    assert_eq!(value("sauti_realtime_sessions "), 0.0);
    assert!(value("sauti_realtime_interruptions_total") >= 1.0);
    assert!(value("sauti_realtime_voice_to_voice_seconds_count") >= 3.0);
}

#[test]
fn a_server_that_stops_tells_its_open_sessions_it_is_going_away() {
    let _alone = common::alone();
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    use tokio_tungstenite::tungstenite::{connect, Message};

    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").to_str().unwrap(),
            ),
            (
                "SAUTI__MODELS__ONNXRUNTIME",
                onnxruntime().to_str().unwrap(),
            ),
        ],
    );
    let url = server
        .url("/v1/voice-agent/realtime")
        .replace("http://", "ws://");
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY_A.parse().unwrap());
    let (mut socket, answer) = connect(request).expect("the socket opens");
    assert_eq!(answer.status(), 101);
    let hello = socket.read().unwrap();
    assert!(hello
        .to_text()
        .unwrap()
        .contains("conversation_initiation_metadata"));
    let status = server.terminate(std::time::Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let close = loop {
        match socket.read() {
            Ok(Message::Close(frame)) => break frame,
            Ok(_) => continue,
            Err(error) => panic!("no close frame before the connection ended: {error}"),
        }
    };
    let frame = close.expect("a close code and reason");
    assert_eq!(u16::from(frame.code), 1001);
    assert!(frame.reason.contains("shutting down"), "{}", frame.reason);
}
