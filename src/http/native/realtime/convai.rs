//! The realtime agent's own socket protocol, in the shapes of ElevenLabs' Conversational AI WebSocket: JSON
//! text frames both ways.
//!
//! Client → server: `{"user_audio_chunk": "<base64>"}` (in `input_format`), `{"type": "user_message",
//! "text": …}`, `{"type": "user_dtmf", "digits": …}`, `{"type": "pong", "event_id": …}`, `user_activity` and
//! `contextual_update` (taken as signs of life), and `conversation_initiation_client_data` (its
//! `dynamic_variables`, which may name the phone call the socket carries: `system__call_sid`). Server → client:
//! `conversation_initiation_metadata`, `user_transcript`, `agent_response`, `agent_response_correction`,
//! `audio` (with an increasing `event_id`), `interruption` (drop audio after its `event_id`), `transfer` (put the
//! call through to `transfer_event.to`; `transfer_event.summary` tells the person who takes it what was said),
//! `end_call`, `ping`, and
//! `error` (`error_event.error_type` `rate_limited`: a turn over the key's limit was not taken; the session
//! goes on).

use axum::extract::ws::Message;
use base64::Engine as _;
use serde_json::{json, Value};

use super::input::{Chunk, Input, InputFormat};
use super::socket::{Taken, Wire};
use crate::actors::realtime::{Inbound, Outbound};

/// The Conversational AI protocol for one session.
pub struct ConvAi {
    input: Input,
    input_format: InputFormat,
    /// The longest typed message (`dialogue.max_text_chars`).
    max_text_chars: usize,
}

impl ConvAi {
    /// A session whose caller sends audio in `input_format` and types at most `max_text_chars` a message.
    pub fn new(input_format: InputFormat, max_text_chars: usize) -> Self {
        Self {
            input: Input::new(input_format),
            input_format,
            max_text_chars,
        }
    }
}

fn refused(reason: impl Into<String>) -> Taken {
    Taken::Refused(1008, reason.into())
}

/// What is wrong with keys a client says were pressed, if anything: one to 32 of `0`–`9`, `*` and `#`.
pub(super) fn keys_problem(keys: &str) -> Option<&'static str> {
    let keys_only = keys
        .chars()
        .all(|c| c.is_ascii_digit() || c == '*' || c == '#');
    match (keys.is_empty(), keys.chars().count() > 32, keys_only) {
        (true, _, _) => Some("\"digits\" must name the keys pressed"),
        (_, true, _) => Some("at most 32 keys at a time"),
        (_, _, false) => Some("keys are 0 to 9, * and #"),
        _ => None,
    }
}

impl Wire for ConvAi {
    fn inbound(&mut self, frame: Message) -> Taken {
        let text = match frame {
            Message::Text(text) => text,
            Message::Binary(_) => {
                return Taken::Refused(
                    1003,
                    "binary frames are not part of this protocol: send audio as {\"user_audio_chunk\": base64}"
                        .into(),
                )
            }
            _ => return Taken::Messages(Vec::new()),
        };
        let message: Value = match serde_json::from_str(text.as_str()) {
            Ok(Value::Object(message)) => Value::Object(message),
            Ok(_) => return refused("malformed message: expected a JSON object"),
            Err(e) => return refused(format!("malformed message: {e}")),
        };
        if let Some(chunk) = message.get("user_audio_chunk") {
            let Some(chunk) = chunk.as_str() else {
                return refused("user_audio_chunk must be a base64 string");
            };
            return match self.input.chunk(chunk) {
                Ok(Chunk::Samples(samples)) => Taken::Messages(vec![Inbound::Audio(samples)]),
                Ok(Chunk::File(bytes)) => Taken::File(bytes),
                Err(problem) => refused(problem),
            };
        }
        match message.get("type").and_then(Value::as_str) {
            Some("user_message") => {
                let text = message.get("text").and_then(Value::as_str).unwrap_or_default();
                match crate::ops::text::utterance("text", text, self.max_text_chars) {
                    Ok(_) => Taken::Messages(vec![Inbound::UserMessage(text.to_string())]),
                    Err(problem) => refused(format!("user_message: {}", problem.detail)),
                }
            }
            Some("user_dtmf") => {
                let keys = message
                    .get("digits")
                    .or_else(|| message.get("digit"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match keys_problem(keys) {
                    None => Taken::Messages(vec![Inbound::Keys(keys.to_string())]),
                    Some(problem) => refused(format!("user_dtmf: {problem}")),
                }
            }
            Some("conversation_initiation_client_data") => match super::call_data::convai(&message) {
                Ok(call) => Taken::Messages(vec![Inbound::Call(call)]),
                Err(problem) => refused(format!("conversation_initiation_client_data: {problem}")),
            },
            Some("pong" | "user_activity" | "contextual_update") => {
                Taken::Messages(vec![Inbound::Alive])
            }
            Some(other) => refused(format!(
                "unknown message type {other:?}; this socket takes user_audio_chunk, user_message, user_dtmf, pong and user_activity"
            )),
            None => refused("a message needs a \"type\" (or is a {\"user_audio_chunk\": …})"),
        }
    }

    fn outbound(&mut self, event: Outbound) -> Vec<Message> {
        let value = match event {
            Outbound::Started {
                conversation_id,
                format,
            } => json!({
                "type": "conversation_initiation_metadata",
                "conversation_initiation_metadata_event": {
                    "conversation_id": conversation_id,
                    "agent_output_audio_format": format.name(),
                    "user_input_audio_format": self.input_format.name(),
                }
            }),
            Outbound::UserTranscript(text) => json!({
                "type": "user_transcript",
                "user_transcription_event": { "user_transcript": text }
            }),
            Outbound::Tentative(text) => json!({
                "type": "tentative_user_transcript",
                "tentative_user_transcription_event": { "user_transcript": text }
            }),
            Outbound::AgentResponse { text, session_id } => json!({
                "type": "agent_response",
                "agent_response_event": { "agent_response": text, "session_id": session_id }
            }),
            Outbound::Correction {
                original,
                corrected,
            } => json!({
                "type": "agent_response_correction",
                "agent_response_correction_event": {
                    "original_agent_response": original,
                    "corrected_agent_response": corrected,
                }
            }),
            Outbound::Audio { event_id, audio } => json!({
                "type": "audio",
                "audio_event": {
                    "audio_base_64": base64::engine::general_purpose::STANDARD.encode(audio),
                    "event_id": event_id,
                }
            }),
            Outbound::Interruption { event_id } => json!({
                "type": "interruption",
                "interruption_event": { "event_id": event_id }
            }),
            Outbound::Refused {
                detail,
                retry_after_seconds,
            } => json!({
                "type": "error",
                "error_event": {
                    "code": 429,
                    "error_type": "rate_limited",
                    "message": detail,
                    "retry_after_seconds": retry_after_seconds,
                }
            }),
            Outbound::Transfer { to, summary } => json!({
                "type": "transfer",
                "transfer_event": { "to": to, "summary": summary }
            }),
            Outbound::EndCall { reason } => json!({
                "type": "end_call",
                "end_call_event": { "reason": reason }
            }),
            Outbound::Ping { event_id } => json!({
                "type": "ping",
                "ping_event": { "event_id": event_id, "ping_ms": null }
            }),
            Outbound::Close { .. } => return Vec::new(),
        };
        vec![Message::Text(value.to_string().into())]
    }
}
