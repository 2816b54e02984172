//! Twilio Media Streams, so a phone call reaches the agent through `<Connect><Stream url="wss://…/v1/voice-agent/twilio?…">`.
//!
//! In: `connected`, `start` (the stream's `streamSid`), `media` (base64 μ-law at 8 kHz), `mark` (a sent mark was
//! played), `dtmf`, `stop` (the call ended). Out: `media` (the agent's μ-law audio), a `mark` after each piece,
//! and `clear` when the caller talks over the agent (Twilio then drops the audio it has not played).

use axum::extract::ws::Message;
use base64::Engine as _;
use serde_json::{json, Value};

use super::input::{Chunk, Input, InputFormat};
use super::socket::{Taken, Wire};
use crate::actors::realtime::{Inbound, Outbound};

/// The Twilio protocol for one call.
pub struct Twilio {
    input: Input,
    stream_sid: Option<String>,
}

impl Default for Twilio {
    fn default() -> Self {
        Self::new()
    }
}

impl Twilio {
    /// A call not yet started.
    pub fn new() -> Self {
        Self {
            input: Input::new(InputFormat::Ulaw),
            stream_sid: None,
        }
    }
}

fn refused(reason: impl Into<String>) -> Taken {
    Taken::Refused(1008, reason.into())
}

impl Wire for Twilio {
    fn inbound(&mut self, frame: Message) -> Taken {
        let text = match frame {
            Message::Text(text) => text,
            Message::Binary(_) => {
                return Taken::Refused(1003, "Twilio Media Streams send JSON text frames".into())
            }
            _ => return Taken::Messages(Vec::new()),
        };
        let message: Value = match serde_json::from_str(text.as_str()) {
            Ok(message @ Value::Object(_)) => message,
            Ok(_) => return refused("malformed message: expected a JSON object"),
            Err(e) => return refused(format!("malformed message: {e}")),
        };
        match message.get("event").and_then(Value::as_str) {
            Some("connected" | "mark") => Taken::Messages(vec![Inbound::Alive]),
            Some("dtmf") => {
                let digit = message
                    .pointer("/dtmf/digit")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match super::convai::keys_problem(digit) {
                    None => Taken::Messages(vec![Inbound::Keys(digit.to_string())]),
                    Some(problem) => refused(format!("dtmf: {problem}")),
                }
            }
            Some("start") => {
                let sid = message
                    .get("streamSid")
                    .or_else(|| message.pointer("/start/streamSid"))
                    .and_then(Value::as_str);
                let Some(sid) = sid else {
                    return refused("a start event needs its streamSid");
                };
                match super::call_data::twilio(&message) {
                    Ok(call) => {
                        self.stream_sid = Some(sid.to_string());
                        Taken::Messages(vec![Inbound::Call(call)])
                    }
                    Err(problem) => refused(problem),
                }
            }
            Some("media") => {
                if self.stream_sid.is_none() {
                    return refused("media arrived before the start event");
                }
                if message.pointer("/media/track").and_then(Value::as_str) == Some("outbound") {
                    return Taken::Messages(Vec::new());
                }
                let Some(payload) = message.pointer("/media/payload").and_then(Value::as_str)
                else {
                    return refused("a media event needs media.payload (base64 μ-law)");
                };
                match self.input.chunk(payload) {
                    Ok(Chunk::Samples(samples)) => Taken::Messages(vec![Inbound::Audio(samples)]),
                    Ok(Chunk::File(bytes)) => Taken::File(bytes),
                    Err(problem) => refused(problem),
                }
            }
            Some("stop") => Taken::Finished,
            Some(other) => refused(format!("unknown Twilio event {other:?}")),
            None => refused("a Twilio message needs an \"event\""),
        }
    }

    fn outbound(&mut self, event: Outbound) -> Vec<Message> {
        let Some(sid) = self.stream_sid.clone() else {
            return Vec::new();
        };
        let frame = |value: Value| Message::Text(value.to_string().into());
        match event {
            Outbound::Audio { event_id, audio } => vec![
                frame(json!({
                    "event": "media",
                    "streamSid": sid,
                    "media": { "payload": base64::engine::general_purpose::STANDARD.encode(audio) }
                })),
                frame(json!({
                    "event": "mark",
                    "streamSid": sid,
                    "mark": { "name": format!("audio-{event_id}") }
                })),
            ],
            Outbound::Interruption { .. } => {
                vec![frame(json!({ "event": "clear", "streamSid": sid }))]
            }
            // Twilio has no place for text or pings: the call carries audio alone.
            _ => Vec::new(),
        }
    }
}
