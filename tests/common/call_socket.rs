//! A realtime socket from outside, as a call centre's client drives one: open it with a key, send JSON events,
//! read until a kind of event or the close.

use std::time::Duration;

use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::{self, Message};

use super::KEY_A;

pub type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

/// Open `path` on the server at `base` with key A.
pub fn open(base: &str, path: &str) -> Socket {
    let mut request = format!("{base}{path}")
        .replace("http://", "ws://")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY_A.parse().unwrap());
    let (socket, _) = tungstenite::connect(request).expect("the socket opens");
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
    }
    socket
}

pub fn send(socket: &mut Socket, message: Value) {
    socket
        .send(Message::Text(message.to_string().into()))
        .unwrap();
}

/// Events until one of type `kind`, which is returned; everything read goes into `seen`.
pub fn until(socket: &mut Socket, kind: &str, seen: &mut Vec<Value>) -> Value {
    loop {
        let message = match socket.read() {
            Ok(Message::Text(text)) => serde_json::from_str::<Value>(&text).unwrap(),
            Ok(Message::Close(frame)) => panic!("closed ({frame:?}) before {kind}: {seen:?}"),
            Ok(_) => continue,
            Err(error) => panic!("{error} before {kind}: {seen:?}"),
        };
        seen.push(message.clone());
        if message["type"] == kind {
            return message;
        }
    }
}

/// Messages until an `agent_response`, whose text is returned; everything read goes into `seen`.
pub fn until_reply(socket: &mut Socket, seen: &mut Vec<Value>) -> String {
    let reply = until(socket, "agent_response", seen);
    reply["agent_response_event"]["agent_response"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Read until the socket closes: its close code, and the events before it go into `seen`.
pub fn closed(socket: &mut Socket, seen: &mut Vec<Value>) -> Option<u16> {
    loop {
        match socket.read() {
            Ok(Message::Close(frame)) => return frame.map(|f| u16::from(f.code)),
            Ok(Message::Text(text)) => seen.push(serde_json::from_str(&text).unwrap()),
            Ok(_) => continue,
            Err(_) => return None,
        }
    }
}
