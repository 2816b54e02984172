//! ElevenLabs' input-streaming sockets, black box: text streamed in word by word comes back as audio of the
//! whole text's length with each message's characters timed; the key may come in the first message; refusals
//! before the upgrade are problems, after it closes with their codes before any audio; the multi-context socket
//! refuses a sixth context with an error naming it and stays open; inactivity, malformed messages and a revoked
//! key close the socket.

use crate::common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::cli::{keys, listed_key_id};
use common::*;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::stream::MaybeTlsStream;
use tokio_tungstenite::tungstenite::{connect, Error, Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

const TEXT: &str = "Habari za asubuhi! Salio la akaunti yako ni shilingi elfu tatu, \
                    na ada ya kutuma pesa ni shilingi hamsini tu. Karibu tena.";

fn server(data: &tempfile::TempDir) -> Server {
    Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ],
    )
}

fn open(server: &Server, path: &str, key: Option<&str>) -> Result<Socket, (u16, Value)> {
    let url = server.url(path).replace("http://", "ws://");
    let mut request = url.into_client_request().unwrap();
    if let Some(key) = key {
        request
            .headers_mut()
            .insert("xi-api-key", key.parse().unwrap());
    }
    match connect(request) {
        Ok((socket, _)) => {
            if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
                stream
                    .set_read_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
            }
            Ok(socket)
        }
        Err(Error::Http(answer)) => {
            let body = answer.body().clone().unwrap_or_default();
            let problem = serde_json::from_slice(&body).unwrap_or(Value::Null);
            Err((answer.status().as_u16(), problem))
        }
        Err(error) => panic!("{error}"),
    }
}

fn send(socket: &mut Socket, message: Value) {
    socket
        .send(Message::Text(message.to_string().into()))
        .unwrap();
}

/// Every message until the socket closes: the JSON messages, and the close code and reason.
fn read_to_close(socket: &mut Socket) -> (Vec<Value>, Option<(u16, String)>) {
    let mut messages = Vec::new();
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => messages.push(serde_json::from_str(text.as_str()).unwrap()),
            Ok(Message::Close(frame)) => {
                return (
                    messages,
                    frame.map(|f| (u16::from(f.code), f.reason.to_string())),
                )
            }
            Ok(_) => {}
            Err(_) => return (messages, None),
        }
    }
}

/// Messages until one with `isFinal` (for `context`, when given) arrives.
fn read_to_final(socket: &mut Socket, context: Option<&str>) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let Message::Text(text) = socket.read().expect("a message") else {
            continue;
        };
        let message: Value = serde_json::from_str(text.as_str()).unwrap();
        let done = message["isFinal"] == true && context.is_none_or(|c| message["contextId"] == c);
        messages.push(message);
        if done {
            return messages;
        }
    }
}

/// The 16 kHz PCM of the audio messages, in order.
fn pcm(messages: &[Value]) -> Vec<u8> {
    messages
        .iter()
        .filter_map(|m| m["audio"].as_str())
        .flat_map(|a| base64::engine::general_purpose::STANDARD.decode(a).unwrap())
        .collect()
}

fn stream_words(socket: &mut Socket, text: &str) {
    for (i, word) in text.split(' ').enumerate() {
        let word = if i == 0 {
            word.to_string()
        } else {
            format!(" {word}")
        };
        send(socket, json!({ "text": word }));
    }
}

#[test]
fn a_text_streamed_word_by_word_is_spoken_whole_with_each_message_timed() {
    let data = temp_dir();
    let server = server(&data);
    let path = "/elevenlabs/v1/text-to-speech/zuri/stream-input?output_format=pcm_16000";
    let mut socket = open(&server, path, Some(KEY_A)).unwrap();
    send(
        &mut socket,
        json!({"text": " ", "voice_settings": {"stability": 0.5, "speed": 1.0},
                             "generation_config": {"chunk_length_schedule": [50, 90]}}),
    );
    stream_words(&mut socket, TEXT);
    send(&mut socket, json!({"text": ""}));
    let (messages, close) = read_to_close(&mut socket);
    assert_eq!(close.map(|c| c.0), Some(1000));
    let last = messages.last().unwrap();
    assert_eq!(last["isFinal"], true, "{last}");
    assert!(
        last.get("contextId").is_none(),
        "the single stream names no context"
    );

    // The audio is the whole text: as long as the same text synthesised at once (pieces may pause a little
    // differently), and heard in more than one message (speech started before the end of the text).
    let audio = pcm(&messages);
    let whole = post_json(
        &server.url("/elevenlabs/v1/text-to-speech/zuri?output_format=pcm_16000"),
        Some(KEY_A),
        &json!({ "text": TEXT }),
    );
    assert_eq!(whole.status, 200);
    let ratio = audio.len() as f64 / whole.body.len() as f64;
    assert!((0.85..1.25).contains(&ratio), "{ratio}");
    let with_audio = messages.iter().filter(|m| m["audio"].is_string()).count();
    assert!(with_audio >= 3, "{with_audio} audio messages");

    // Each message's characters are timed within its own audio, in order; together they spell the text.
    let mut spelled = String::new();
    for message in messages.iter().filter(|m| m["audio"].is_string()) {
        let seconds = base64::engine::general_purpose::STANDARD
            .decode(message["audio"].as_str().unwrap())
            .unwrap()
            .len() as f64
            / 32_000.0;
        let alignment = &message["alignment"];
        let chars = alignment["chars"].as_array().unwrap();
        let starts = alignment["charStartTimesMs"].as_array().unwrap();
        let durations = alignment["charDurationsMs"].as_array().unwrap();
        assert_eq!(
            (chars.len(), starts.len()),
            (durations.len(), durations.len())
        );
        let mut last_start = 0;
        for (start, duration) in starts.iter().zip(durations) {
            let (start, duration) = (start.as_u64().unwrap(), duration.as_u64().unwrap());
            assert!(start >= last_start, "{alignment}");
            assert!(
                (start + duration) as f64 <= seconds * 1000.0 + 1.0,
                "{alignment}"
            );
            last_start = start;
        }
        spelled.extend(chars.iter().map(|c| c.as_str().unwrap().to_string()));
        assert!(message["normalizedAlignment"]["chars"].is_array());
    }
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(squeeze(&spelled), squeeze(TEXT));
}

#[test]
fn with_sync_alignment_the_times_run_on_across_messages() {
    let data = temp_dir();
    let server = server(&data);
    let path = "/v1/text-to-speech/baraka/stream-input?output_format=pcm_16000&sync_alignment=true";
    let mut socket = open(&server, path, Some(KEY_A)).unwrap();
    send(
        &mut socket,
        json!({"text": " ", "generation_config": {"chunk_length_schedule": [50]}}),
    );
    stream_words(&mut socket, TEXT);
    send(&mut socket, json!({"text": ""}));
    let (messages, _) = read_to_close(&mut socket);
    let seconds = pcm(&messages).len() as f64 / 32_000.0;
    let starts: Vec<u64> = messages
        .iter()
        .filter(|m| m["alignment"].is_object())
        .flat_map(|m| {
            m["alignment"]["charStartTimesMs"]
                .as_array()
                .unwrap()
                .clone()
        })
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert!(starts.len() > TEXT.len() / 2);
    assert!(starts.windows(2).all(|s| s[0] <= s[1]), "{starts:?}");
    let last = *starts.last().unwrap() as f64 / 1000.0;
    assert!(
        last > seconds * 0.8 && last <= seconds + 0.01,
        "{last} of {seconds} s"
    );
}

#[test]
fn the_key_may_come_in_the_first_message_and_a_wrong_one_closes_before_any_audio() {
    let data = temp_dir();
    let server = server(&data);
    let path = "/v1/text-to-speech/baraka/stream-input?output_format=mp3_22050_32";
    let mut socket = open(&server, path, None).unwrap();
    send(&mut socket, json!({"text": " ", "xi_api_key": KEY_A}));
    send(
        &mut socket,
        json!({"text": "Asante sana kwa kupiga simu. ", "flush": true}),
    );
    send(&mut socket, json!({"text": ""}));
    let (messages, close) = read_to_close(&mut socket);
    assert_eq!(close.map(|c| c.0), Some(1000));
    let mp3 = pcm(&messages);
    assert!(mp3.len() > 2_000, "{} bytes", mp3.len());
    assert!(
        mp3.starts_with(b"\xff") || mp3.starts_with(b"ID3"),
        "MPEG audio"
    );

    for (first, reason) in [
        (
            json!({"text": " ", "xi_api_key": "sk_wrong"}),
            "invalid API key",
        ),
        (
            json!({"text": " ", "authorization": "Bearer sk_wrong"}),
            "invalid API key",
        ),
        (json!({"text": "Habari "}), "missing API key"),
    ] {
        let mut socket = open(&server, path, None).unwrap();
        send(&mut socket, first);
        send(&mut socket, json!({"text": "Habari yako? ", "flush": true}));
        let (messages, close) = read_to_close(&mut socket);
        assert!(messages.is_empty(), "{messages:?}");
        let (code, said) = close.expect("a close frame");
        assert_eq!(code, 1008);
        assert!(said.contains(reason), "{said}");
    }
}

#[test]
fn refusals_before_the_upgrade_are_problems() {
    let data = temp_dir();
    let server = server(&data);
    let plain = get(
        &server.url("/elevenlabs/v1/text-to-speech/zuri/multi-stream-input"),
        Some(KEY_A),
    );
    assert_eq!(plain.status, 426);
    for (path, status) in [
        ("/elevenlabs/v1/text-to-speech/nobody/stream-input", 404),
        (
            "/elevenlabs/v1/text-to-speech/zuri/stream-input?output_format=wav_1",
            422,
        ),
        (
            "/elevenlabs/v1/text-to-speech/zuri/multi-stream-input?inactivity_timeout=0",
            422,
        ),
        (
            "/elevenlabs/v1/text-to-speech/zuri/stream-input?model_id=nope",
            422,
        ),
        (
            "/v1/text-to-speech/zuri/multi-stream-input?language_code=fr",
            422,
        ),
    ] {
        let (got, problem) = open(&server, path, Some(KEY_A)).expect_err(path);
        assert_eq!(got, status, "{path}: {problem}");
        assert_eq!(problem["status"], status, "{problem}");
    }
    // Another key's header is checked before the upgrade too.
    let (got, _) = open(
        &server,
        "/v1/text-to-speech/zuri/stream-input",
        Some("sk_nope"),
    )
    .err()
    .unwrap();
    assert_eq!(got, 401);
}

#[test]
fn the_multi_context_socket_keeps_its_contexts_apart_and_refuses_a_sixth() {
    let data = temp_dir();
    let server = server(&data);
    let path = "/elevenlabs/v1/text-to-speech/zuri/multi-stream-input?output_format=pcm_16000";
    let mut socket = open(&server, path, Some(KEY_A)).unwrap();
    for i in 0..5 {
        send(
            &mut socket,
            json!({"text": " ", "context_id": format!("c{i}")}),
        );
    }
    send(&mut socket, json!({"text": " ", "context_id": "c5"}));
    let Message::Text(text) = socket.read().unwrap() else {
        panic!("a text message");
    };
    let refusal: Value = serde_json::from_str(text.as_str()).unwrap();
    assert_eq!(refusal["error"], "max_active_conversations", "{refusal}");
    assert_eq!(refusal["contextId"], "c5");

    // The socket is still open: a keep-alive, then one context speaks and closes, while another is closed
    // with nothing said.
    send(&mut socket, json!({"text": ""}));
    send(
        &mut socket,
        json!({"text": "Ndiyo, nimekusikia.", "context_id": "c1"}),
    );
    send(
        &mut socket,
        json!({"context_id": "c1", "close_context": true}),
    );
    let said = read_to_final(&mut socket, Some("c1"));
    assert!(said.iter().all(|m| m["contextId"] == "c1"), "{said:?}");
    assert!(
        pcm(&said).len() > 16_000,
        "at least half a second of speech"
    );
    send(
        &mut socket,
        json!({"context_id": "c2", "close_context": true}),
    );
    let closed = read_to_final(&mut socket, Some("c2"));
    assert!(pcm(&closed).is_empty());

    // A new context now fits, and close_socket ends every context, then the socket.
    send(
        &mut socket,
        json!({"text": "Kwaheri. ", "context_id": "c6"}),
    );
    send(&mut socket, json!({"close_socket": true}));
    let (messages, close) = read_to_close(&mut socket);
    assert_eq!(close.map(|c| c.0), Some(1000));
    let finals: Vec<&str> = messages
        .iter()
        .filter(|m| m["isFinal"] == true)
        .map(|m| m["contextId"].as_str().unwrap())
        .collect();
    for context in ["c0", "c3", "c4", "c6"] {
        assert!(finals.contains(&context), "{finals:?}");
    }
    assert!(pcm(&messages).len() > 8_000);
}

#[test]
fn silence_malformed_messages_and_a_revoked_key_close_the_socket() {
    let data = temp_dir();
    let key = keys(data.path(), &[], &["create", "--name", "streamer"])
        .trim()
        .to_string();
    let server = server(&data);
    let path = "/elevenlabs/v1/text-to-speech/zuri/stream-input?inactivity_timeout=1";
    let mut quiet = open(&server, path, Some(KEY_A)).unwrap();
    send(&mut quiet, json!({"text": " "}));
    let started = Instant::now();
    let (_, close) = read_to_close(&mut quiet);
    assert_eq!(close.as_ref().map(|c| c.0), Some(1008), "{close:?}");
    assert!(close.unwrap().1.contains("inactivity_timeout"));
    assert!(started.elapsed() < Duration::from_secs(5));

    let mut garbled = open(&server, path, Some(KEY_A)).unwrap();
    garbled.send(Message::Text("{not json".into())).unwrap();
    let (_, close) = read_to_close(&mut garbled);
    assert_eq!(close.map(|c| c.0), Some(1008));

    let mut revoked = open(
        &server,
        "/v1/text-to-speech/zuri/multi-stream-input",
        Some(&key),
    )
    .unwrap();
    send(&mut revoked, json!({"text": " ", "context_id": "a"}));
    keys(
        data.path(),
        &[],
        &["revoke", &listed_key_id(data.path(), &[], "streamer")],
    );
    let (_, close) = read_to_close(&mut revoked);
    assert_eq!(close, Some((1008, "key revoked".to_string())));
}
