//! ElevenLabs' input-streaming socket (`/v1/text-to-speech/{voice}/stream-input`): a reply's words are sent one
//! message at a time, as a language model writes them, and the time is taken from the message that completes the
//! first speakable clause to the first audio that comes back. The reference, measured in the same run, is the
//! first byte of `POST /v1/text-to-speech/{voice}/stream` for that same clause sent whole. Targets: ≤ 30 ms with
//! the embedded voice, ≤ 500 ms with the split MMS-size voice.

use std::net::TcpStream;
use std::time::Instant;

use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::stream::MaybeTlsStream;
use tokio_tungstenite::tungstenite::{connect, Message, WebSocket};

use super::{median, timed_post, Server, KEY, RUNS};

const WORDS: [&str; 12] = [
    "Habari",
    " ya",
    " asubuhi,",
    " karibu",
    " kwenye",
    " huduma",
    " ya",
    " benki.",
    " Salio",
    " lako",
    " ni",
    " shilingi.",
];
/// The message that completes the first clause ("Habari ya asubuhi,").
const CLAUSE_ENDS_AT: usize = 2;

fn send(socket: &mut WebSocket<MaybeTlsStream<TcpStream>>, message: serde_json::Value) {
    socket
        .send(Message::Text(message.to_string().into()))
        .expect("the socket takes the message");
}

/// Milliseconds from the message that completes the first clause to the first audio.
fn first_audio(server: &Server, voice: &str) -> f64 {
    let url = format!(
        "{}/v1/text-to-speech/{voice}/stream-input?output_format=pcm_16000",
        server.base.replace("http://", "ws://")
    );
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY.parse().unwrap());
    let (mut socket, _) = connect(request).expect("the socket opens");
    send(&mut socket, serde_json::json!({"text": " "}));
    let mut clause_sent = Instant::now();
    for (i, word) in WORDS.iter().enumerate() {
        send(&mut socket, serde_json::json!({ "text": word }));
        if i == CLAUSE_ENDS_AT {
            clause_sent = Instant::now();
            break;
        }
    }
    let first = loop {
        let Message::Text(text) = socket.read().expect("a message") else {
            continue;
        };
        let message: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
        if message["audio"].as_str().is_some_and(|a| !a.is_empty()) {
            break clause_sent.elapsed().as_secs_f64() * 1000.0;
        }
    };
    for word in &WORDS[CLAUSE_ENDS_AT + 1..] {
        send(&mut socket, serde_json::json!({ "text": word }));
    }
    send(&mut socket, serde_json::json!({"text": ""}));
    while let Ok(message) = socket.read() {
        if let Message::Close(_) = message {
            break;
        }
    }
    first
}

/// The table of the input-streaming socket's first audio, for each voice.
pub fn table(server: &Server, voices: &[&str]) {
    let clause: String = WORDS[..=CLAUSE_ENDS_AT].concat();
    println!("\n## Input streaming: first audio after the first clause ({RUNS} runs, medians)\n");
    println!("| voice | stream-input: clause sent → first audio ms | POST …/stream of the clause: first byte ms | ratio |");
    println!("|---|---|---|---|");
    for voice in voices {
        let stream = server.base.clone() + &format!("/v1/text-to-speech/{voice}/stream");
        first_audio(server, voice);
        timed_post(&stream, &clause);
        let (mut socket, mut reference) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            socket.push(first_audio(server, voice));
            reference.push(timed_post(&stream, &clause).0 * 1000.0);
        }
        let (socket, reference) = (median(socket), median(reference));
        println!(
            "| {voice} | {socket:.1} | {reference:.1} | {:.2} |",
            socket / reference
        );
    }
}
