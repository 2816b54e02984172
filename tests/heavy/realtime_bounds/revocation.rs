//! Tokens and revocation on the realtime sockets: a token is spent only by the socket it opens, and a revoked
//! key's token no longer opens one and its open sessions are closed, on every replica sharing the database.

use super::*;
use common::cli::{keys, listed_key_id};

fn token(server: &Server, key: &str) -> String {
    let reply = post_json(
        &server.url("/v1/voice-agent/sessions"),
        Some(key),
        &serde_json::json!({}),
    );
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()["token"].as_str().unwrap().to_string()
}

/// The status a socket request with `?token=` (and `extra` query) gets, and its detail when refused.
fn open_with_token(server: &Server, token: &str, extra: &str) -> (u16, String) {
    let path = format!("/v1/voice-agent/realtime?token={token}{extra}");
    match tokio_tungstenite::tungstenite::connect(request(server, &path, None)) {
        Ok((_, answer)) => (answer.status().as_u16(), String::new()),
        Err(tokio_tungstenite::tungstenite::Error::Http(answer)) => {
            let body = answer.body().clone().unwrap_or_default();
            (
                answer.status().as_u16(),
                String::from_utf8_lossy(&body).into_owned(),
            )
        }
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn a_token_is_spent_only_by_the_socket_it_opens() {
    let _alone = common::alone();
    let data = temp_dir();
    let server = realtime_server(&data, &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")]);
    let token = token(&server, KEY_A);
    // Refused requests leave it usable: an unknown scenario (422), a voice that is not there (404), a plain GET
    // without the upgrade (426).
    assert_eq!(
        open_with_token(&server, &token, "&scenario=pizzeria").0,
        422
    );
    assert_eq!(open_with_token(&server, &token, "&voice_id=nobody").0, 404);
    let plain = get(
        &server.url(&format!("/v1/voice-agent/realtime?token={token}")),
        None,
    );
    assert_eq!(plain.status, 426);
    // It opens one socket, and only one.
    assert_eq!(open_with_token(&server, &token, "").0, 101);
    let (status, detail) = open_with_token(&server, &token, "");
    assert_eq!(status, 401);
    assert!(detail.contains("already used"), "{detail}");
}

/// Wait up to `limit` for the server to close `socket`; its code and reason.
fn closed_within(
    socket: &mut tokio_tungstenite::tungstenite::WebSocket<
        tokio_tungstenite::tungstenite::stream::MaybeTlsStream<std::net::TcpStream>,
    >,
    limit: Duration,
) -> (u16, String) {
    if let tokio_tungstenite::tungstenite::stream::MaybeTlsStream::Plain(tcp) = socket.get_ref() {
        tcp.set_read_timeout(Some(limit)).unwrap();
    }
    loop {
        match socket.read() {
            Ok(Message::Close(Some(frame))) => {
                return (u16::from(frame.code), frame.reason.to_string())
            }
            Ok(Message::Close(None)) => panic!("closed without a code"),
            Ok(_) => continue,
            Err(error) => panic!("not closed within {limit:?}: {error}"),
        }
    }
}

#[test]
fn a_revoked_key_s_tokens_and_open_sessions_are_closed_on_every_replica() {
    let _alone = common::alone();
    let postgres = common::postgres::Postgres::start();
    let url = postgres.url();
    let shared = [("SAUTI__STORAGE__URL", url.as_str())];
    let (data_a, data_b) = (temp_dir(), temp_dir());
    let key = keys(data_a.path(), &shared, &["create", "--name", "caller"])
        .trim()
        .to_string();
    let id = listed_key_id(data_a.path(), &shared, "caller");
    let env = [
        shared[0],
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__REALTIME__IDLE_SECONDS", "120"),
    ];
    let replicas = [
        realtime_server(&data_a, &env),
        realtime_server(&data_b, &env),
    ];
    let mut sockets = Vec::new();
    let mut tokens = Vec::new();
    for server in &replicas {
        let path = "/v1/voice-agent/realtime";
        let (socket, answer) =
            tokio_tungstenite::tungstenite::connect(request(server, path, Some(&key)))
                .expect("the socket opens");
        assert_eq!(answer.status(), 101);
        sockets.push(socket);
        tokens.push(token(server, &key));
    }
    keys(data_a.path(), &shared, &["revoke", &id]);
    let revoked = Instant::now();
    for socket in &mut sockets {
        let (code, reason) = closed_within(socket, Duration::from_secs(10));
        assert_eq!((code, reason.as_str()), (1008, "key revoked"));
    }
    eprintln!(
        "both sessions closed {:?} after the revocation",
        revoked.elapsed()
    );
    assert!(revoked.elapsed() < Duration::from_secs(5));
    for (server, token) in replicas.iter().zip(&tokens) {
        let (status, detail) = open_with_token(server, token, "");
        assert_eq!(status, 401, "{detail}");
        assert!(detail.contains("revoked"), "{detail}");
        assert_eq!(metric(server, "sauti_realtime_sessions "), 0.0);
    }
}
