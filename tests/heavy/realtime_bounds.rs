//! Bounded work on the realtime sockets, black box: a caller's audio is read no faster than real time, so a
//! client flooding a socket (PCM, whole files or a Twilio call) leaves the server's memory flat; whole-file
//! chunks are decoded off the threads that answer everyone else; typed and spoken turns count against the key's
//! rate limit; a token is spent only by a socket that opens; a revoked key's sessions are closed (on every
//! replica); a frame too large or not UTF-8 is closed with its own code.

use crate::common;

#[path = "realtime_bounds/flood.rs"]
mod flood;
#[path = "realtime_bounds/revocation.rs"]
mod revocation;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::Message;

/// A server that recognises speech with the tiny Whisper fixture, with `extra` settings.
fn realtime_server(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let whisper = fixture("whisper/model");
    let runtime = onnxruntime();
    let mut env = vec![
        ("SAUTI__ASR__MODEL", whisper.to_str().unwrap()),
        ("SAUTI__MODELS__ONNXRUNTIME", runtime.to_str().unwrap()),
        ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

/// Speech of the embedded voice in `format`, as sent by `/v1/text-to-speech`.
fn speech(server: &Server, text: &str, format: &str) -> Vec<u8> {
    let reply = post_json(
        &server.url(&format!("/v1/text-to-speech/baraka?output_format={format}")),
        Some(KEY_A),
        &serde_json::json!({ "text": text }),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap()
}

/// A socket request for `path_and_query`, with `key` in the header when given.
fn request(
    server: &Server,
    path_and_query: &str,
    key: Option<&str>,
) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let url = server.url(path_and_query).replace("http://", "ws://");
    let mut request = url.into_client_request().unwrap();
    if let Some(key) = key {
        request
            .headers_mut()
            .insert("xi-api-key", key.parse().unwrap());
    }
    request
}

/// The server's resident memory, in MB.
fn rss_mb(server: &Server) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb / 1024.0
}

/// The value of the first `/metrics` line that starts with `prefix` (0 when there is none).
fn metric(server: &Server, prefix: &str) -> f64 {
    let text = String::from_utf8(get(&server.url("/metrics"), None).body).unwrap();
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What a client saw on its socket: the events by type, and how it was closed.
#[derive(Debug, Default)]
struct Seen {
    types: std::collections::HashMap<String, usize>,
    errors: Vec<serde_json::Value>,
    close: Option<(u16, String)>,
}

impl Seen {
    fn count(&self, kind: &str) -> usize {
        self.types.get(kind).copied().unwrap_or(0)
    }
}

type Reader = futures_util::stream::SplitStream<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
>;

/// Read a socket until it closes or `until` passes, tallying what it says.
async fn read_all(mut reader: Reader, until: Instant) -> Seen {
    let mut seen = Seen::default();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let Ok(Some(frame)) = tokio::time::timeout(left, reader.next()).await else {
            return seen;
        };
        match frame {
            Ok(Message::Text(text)) => {
                let value: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
                let kind = value["type"]
                    .as_str()
                    .or(value["event"].as_str())
                    .unwrap_or("?")
                    .to_string();
                if kind == "error" {
                    seen.errors.push(value);
                }
                *seen.types.entry(kind).or_default() += 1;
            }
            Ok(Message::Close(frame)) => {
                seen.close = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                return seen;
            }
            Ok(_) => {}
            Err(_) => return seen,
        }
    }
}

#[test]
fn a_frame_too_large_or_not_utf8_is_closed_with_its_own_code() {
    let _alone = common::alone();
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let data = temp_dir();
    let server = realtime_server(&data, &[]);
    let close_of = |frame: Message| {
        let path = "/v1/voice-agent/realtime";
        let (mut socket, _) =
            tokio_tungstenite::tungstenite::connect(request(&server, path, Some(KEY_A)))
                .expect("the socket opens");
        socket.send(frame).unwrap();
        loop {
            match socket.read() {
                Ok(Message::Close(frame)) => {
                    break frame.map(|f| (u16::from(f.code), f.reason.to_string()))
                }
                Ok(_) => continue,
                Err(error) => panic!("no close frame before the connection ended: {error}"),
            }
        }
    };
    let large = format!("{{\"user_audio_chunk\": \"{}\"}}", "A".repeat(1_200_000));
    let (code, reason) = close_of(Message::Text(large.into())).expect("a close frame");
    assert_eq!(code, 1009, "{reason}");
    let not_utf8 = Frame::message(vec![b'{', 0xff, 0xfe, b'}'], OpCode::Data(Data::Text), true);
    let (code, reason) = close_of(Message::Frame(not_utf8)).expect("a close frame");
    assert_eq!(code, 1007, "{reason}");
    // The server is unharmed.
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
}

#[test]
fn socket_frames_never_reach_the_log_even_at_trace() {
    let _alone = common::alone();
    let dir = temp_dir();
    let log = dir.path().join("stderr.log");
    let mut server = common::logged::Logged::start(
        dir.path(),
        &log,
        &[],
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").display().to_string(),
            ),
            ("RUST_LOG", "trace".into()),
        ],
    );
    let base = server.base.clone();
    let url =
        format!("{base}/v1/voice-agent/realtime?scenario=banking").replace("http://", "ws://");
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY_A.parse().unwrap());
    let (mut socket, _) =
        tokio_tungstenite::tungstenite::connect(request).expect("the socket opens");
    let typed =
        serde_json::json!({"type": "user_message", "text": "PIN yangu ni 4 8 2 7, salio langu?"});
    socket
        .send(Message::Text(typed.to_string().into()))
        .unwrap();
    let answered = loop {
        match socket.read() {
            Ok(Message::Text(text)) if text.contains("agent_response") => break text.to_string(),
            Ok(_) => continue,
            Err(error) => panic!("no answer: {error}"),
        }
    };
    socket.close(None).unwrap();
    server.stop();
    assert!(!answered.contains("4 8 2 7"));
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("TRACE"), "the log was written at trace");
    for line in written.lines() {
        // The line's timestamp is left out of the search: its microseconds may spell any four digits.
        let said = line.split_once(' ').map_or(line, |(_, rest)| rest);
        assert!(
            !said.contains("4 8 2 7") && !said.contains("4827"),
            "{line}"
        );
        assert!(!line.contains("tungstenite"), "{line}");
    }
}
