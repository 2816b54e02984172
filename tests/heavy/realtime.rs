//! The realtime voice agent from outside, through the `websockets` client library (tests/sdk/realtime_calls.py):
//! a spoken turn (the embedded voice's speech, recognised by the tiny Whisper fixture) answered with transcript,
//! reply and streamed audio in order; barge-in; typed turns; browser tokens (used once, expiring); malformed
//! messages, binary frames, wrong keys and a stalled client each ending only their own session; and a
//! simulated Twilio call with μ-law both ways.

use crate::common;

use base64::Engine as _;
use common::*;

fn speech(server: &Server, format: &str) -> Vec<u8> {
    said(
        server,
        format,
        "Nataka kujua salio la akaunti yangu ya akiba.",
    )
}

fn said(server: &Server, format: &str, text: &str) -> Vec<u8> {
    let reply = post_json(
        &server.url(&format!("/v1/text-to-speech/baraka?output_format={format}")),
        Some(KEY_A),
        &serde_json::json!({ "text": text }),
    );
    assert_eq!(reply.status, 200);
    base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap()
}

/// A server with the tiny Whisper fixture for recognition, and `extra` settings.
fn agent_server(data: &std::path::Path, extra: &[(&str, &str)]) -> Server {
    let asr = fixture("whisper/model");
    let ort = onnxruntime();
    let mut env = vec![
        ("SAUTI__ASR__MODEL", asr.to_str().unwrap()),
        ("SAUTI__MODELS__ONNXRUNTIME", ort.to_str().unwrap()),
    ];
    env.extend_from_slice(extra);
    Server::start(data, &env)
}

#[test]
fn a_realtime_conversation_through_a_websocket_client() {
    let _alone = common::alone();
    let data = temp_dir();
    let server = agent_server(
        data.path(),
        &[
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
    let (eeh, sawa) = (data.path().join("eeh.wav"), data.path().join("sawa.wav"));
    std::fs::write(&eeh, said(&server, "wav_16000", "Eeh.")).unwrap();
    std::fs::write(&sawa, said(&server, "wav_16000", "Sawa.")).unwrap();
    common::sdk::run(
        "realtime_calls.py",
        &[
            &server.url(""),
            KEY_A,
            wav.to_str().unwrap(),
            ulaw.to_str().unwrap(),
            out.to_str().unwrap(),
            eeh.to_str().unwrap(),
            sawa.to_str().unwrap(),
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
    // Barge-in is answered once the caller has spoken over the reply for `realtime.min_interruption_ms` (500 ms).
    assert!(barge["seconds_to_interruption"].as_f64().unwrap() < 1.0);

    // A listener's "eeh" or "sawa" over a reply stops nothing: no interruption, no turn, and the reply's audio
    // goes on.
    for (name, murmur) in seen["murmurs"].as_object().unwrap() {
        assert!(
            murmur["murmur_seconds"].as_f64().unwrap() < 1.0,
            "{name}: {murmur}"
        );
        assert_eq!(murmur["interruptions"], 0, "{name}: {murmur}");
        assert_eq!(murmur["transcripts"], 0, "{name}: {murmur}");
        assert!(
            murmur["audio_after"].as_u64().unwrap() >= 1,
            "{name}: {murmur}"
        );
    }
    assert_eq!(seen["murmurs"].as_object().unwrap().len(), 2);

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
    assert!(value("sauti_realtime_backchannels_total") >= 2.0);
    assert!(value("sauti_realtime_voice_to_voice_seconds_count") >= 3.0);
}

#[test]
fn a_server_that_stops_tells_its_open_sessions_it_is_going_away() {
    let _alone = common::alone();
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    use tokio_tungstenite::tungstenite::{connect, Message};

    let data = temp_dir();
    let server = agent_server(data.path(), &[]);
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

#[test]
fn a_silent_caller_is_reprompted_then_hung_up_on_and_a_long_call_is_closed_politely() {
    let _alone = common::alone();
    let data = temp_dir();
    let scenarios = data.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let with_call = |id: &str, call: &str| {
        let source = std::fs::read_to_string(root.join(format!("scenarios/{id}.toml"))).unwrap();
        // The scenario's own `[call]` table gains the test's keys.
        let changed = source.replacen("\n[call]\n", &format!("\n[call]\n{call}"), 1);
        assert_ne!(changed, source, "{id} has a [call] table");
        std::fs::write(scenarios.join(format!("{id}.toml")), changed).unwrap();
    };
    with_call(
        "general",
        "silence_reprompt_seconds = 1\nsilence_reprompts = 1\nsilence_reprompt = \"Bado uko nami?\"\n\
         silence_goodbye = \"Sijakusikia, kwaheri.\"\n",
    );
    with_call(
        "health",
        "silence_reprompt_seconds = 0\nmax_call_seconds = 4\nmax_call_closing = \"Muda umeisha, kwaheri.\"\n",
    );
    let server = agent_server(
        data.path(),
        &[
            (
                "SAUTI__DIALOGUE__SCENARIOS_DIR",
                scenarios.to_str().unwrap(),
            ),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let out = data.path().join("seen.json");
    common::sdk::run(
        "realtime_silence.py",
        &[&server.url(""), KEY_A, out.to_str().unwrap()],
    );
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    eprintln!("{seen:#}");
    let said = |call: &serde_json::Value| -> Vec<String> {
        call["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "agent_response")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };

    // Silence: one re-prompt after a second of it, then the goodbye, then the call ends (end_call, close 1000).
    let silent = &seen["silent"];
    assert_eq!(
        said(silent),
        ["Bado uko nami?", "Sijakusikia, kwaheri."],
        "{silent}"
    );
    let events = silent["events"].as_array().unwrap();
    let first = events
        .iter()
        .find(|e| e["type"] == "agent_response")
        .unwrap();
    let at = first["at"].as_f64().unwrap();
    assert!((0.9..3.0).contains(&at), "re-prompted after {at} s");
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["reason"].as_str()),
        (Some("end_call"), Some("silence")),
        "{silent}"
    );
    assert_eq!(silent["close"][0], 1000);

    // Length: the call is closed politely once it has lasted max_call_seconds.
    let long = &seen["long"];
    let texts = said(long);
    assert_eq!(
        texts.last().map(String::as_str),
        Some("Muda umeisha, kwaheri."),
        "{long}"
    );
    let last = long["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["reason"], "max_duration", "{long}");
    assert!(long["seconds"].as_f64().unwrap() >= 4.0, "{long}");
    assert_eq!(long["close"][0], 1000);
}
