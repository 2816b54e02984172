//! OpenAI's realtime transcription events: what a client sends (`session.update` with a transcription session,
//! or the beta `transcription_session.update`; `input_audio_buffer.append`, `commit` and `clear`) and what the
//! server answers, in the shapes the `openai` SDK reads.

use serde::Deserialize;
use serde_json::{json, Value};

/// The session's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `audio/pcm` (24 kHz), `audio/pcmu` or `audio/pcma`.
    pub format: Format,
    /// The model name the client gave (any transcription model of `GET /v1/models`).
    pub model: String,
    /// The language recognised.
    pub language: String,
    /// The prompt, as given (kept and reported).
    pub prompt: String,
    /// Server VAD's silence that ends a turn; `None`: turns end only when the client commits.
    pub silence_ms: Option<u64>,
    /// Audio kept from before speech starts, reported as given.
    pub prefix_padding_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            format: Format::Pcm24k,
            model: "sauti-stt".into(),
            language: crate::asr::DEFAULT_LANGUAGE.into(),
            prompt: String::new(),
            silence_ms: Some(500),
            prefix_padding_ms: 300,
        }
    }
}

/// The caller's audio encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// 16-bit little-endian PCM at 24 kHz.
    Pcm24k,
    /// G.711 μ-law at 8 kHz.
    Ulaw,
    /// G.711 A-law at 8 kHz.
    Alaw,
}

/// A client event.
#[derive(Debug)]
pub enum ClientEvent {
    /// New settings (`beta`: in the beta event's flat shape); the client's event id.
    Update {
        changes: Value,
        beta: bool,
        event_id: Option<String>,
    },
    /// Base64 audio.
    Append {
        audio: String,
        event_id: Option<String>,
    },
    /// End the turn now.
    Commit { event_id: Option<String> },
    /// Drop the audio not yet committed.
    Clear { event_id: Option<String> },
}

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "type")]
    kind: String,
    event_id: Option<String>,
    session: Option<Value>,
    audio: Option<String>,
}

impl ClientEvent {
    /// The event in a text frame, or why it is refused (`code`, `message`).
    pub fn parse(text: &str) -> Result<Self, (&'static str, String)> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            (
                "invalid_json",
                format!("the event is not a JSON object with a type: {e}"),
            )
        })?;
        let event_id = raw.event_id;
        Ok(match raw.kind.as_str() {
            "session.update" | "transcription_session.update" => ClientEvent::Update {
                beta: raw.kind.starts_with("transcription_session"),
                changes: raw.session.unwrap_or(Value::Null),
                event_id,
            },
            "input_audio_buffer.append" => ClientEvent::Append {
                audio: raw.audio.ok_or((
                    "missing_required_parameter",
                    "`audio` (base64) is required".to_string(),
                ))?,
                event_id,
            },
            "input_audio_buffer.commit" => ClientEvent::Commit { event_id },
            "input_audio_buffer.clear" => ClientEvent::Clear { event_id },
            other => {
                return Err((
                    "invalid_type",
                    format!(
                        "{other:?} is not an event of a transcription session: send session.update, \
                         input_audio_buffer.append, input_audio_buffer.commit or input_audio_buffer.clear"
                    ),
                ))
            }
        })
    }
}

impl Settings {
    /// These settings with `changes` (a session object, GA or beta shape) laid over them, checked.
    pub fn updated(&self, changes: &Value, beta: bool) -> Result<Settings, (&'static str, String)> {
        let mut next = self.clone();
        let invalid = |message: String| ("invalid_value", message);
        if !beta {
            if let Some(kind) = changes.get("type").and_then(Value::as_str) {
                if kind != "transcription" {
                    return Err(invalid(format!(
                        "session type {kind:?} is not served here: this socket transcribes (type \"transcription\")"
                    )));
                }
            }
        }
        let input = match beta {
            true => changes.clone(),
            false => changes
                .pointer("/audio/input")
                .cloned()
                .unwrap_or(Value::Null),
        };
        let format = match beta {
            true => input.get("input_audio_format").cloned(),
            false => input.get("format").cloned(),
        };
        if let Some(format) = format.filter(|f| !f.is_null()) {
            let (kind, rate) = match &format {
                Value::String(name) => (name.as_str().to_string(), None),
                other => (
                    other
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    other.get("rate").and_then(Value::as_u64),
                ),
            };
            next.format = match (kind.as_str(), rate) {
                ("audio/pcm" | "pcm16", None | Some(24_000)) => Format::Pcm24k,
                ("audio/pcmu" | "g711_ulaw", _) => Format::Ulaw,
                ("audio/pcma" | "g711_alaw", _) => Format::Alaw,
                _ => {
                    return Err(invalid(format!(
                        "audio format {format} is not read here: send audio/pcm at 24000 Hz, audio/pcmu or audio/pcma"
                    )))
                }
            };
        }
        let transcription = match beta {
            true => input.get("input_audio_transcription"),
            false => input.get("transcription"),
        };
        if let Some(transcription) = transcription.filter(|t| !t.is_null()) {
            if let Some(model) = transcription.get("model").and_then(Value::as_str) {
                super::super::check_model(model, super::super::Kind::Recognition)
                    .map_err(|e| invalid(e.detail))?;
                next.model = model.to_string();
            }
            if let Some(language) = transcription.get("language").and_then(Value::as_str) {
                next.language = crate::ops::transcribe::language(Some(language))
                    .map_err(|e| invalid(e.detail))?;
            }
            if let Some(prompt) = transcription.get("prompt").and_then(Value::as_str) {
                next.prompt = prompt.chars().take(1_000).collect();
            }
        }
        if let Some(detection) = input.get("turn_detection") {
            next.silence_ms = match detection {
                Value::Null => None,
                detection => {
                    let kind = detection
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("server_vad");
                    if kind != "server_vad" {
                        return Err(invalid(format!(
                            "turn detection {kind:?} is not offered: use server_vad, or null to commit turns yourself"
                        )));
                    }
                    let silence = detection
                        .get("silence_duration_ms")
                        .and_then(Value::as_u64)
                        .unwrap_or(500);
                    let (lo, hi) = crate::config::END_OF_TURN_RANGE_MS;
                    if !(lo..=hi).contains(&silence) {
                        return Err(invalid(format!(
                            "turn_detection.silence_duration_ms must be {lo} to {hi}"
                        )));
                    }
                    if let Some(padding) =
                        detection.get("prefix_padding_ms").and_then(Value::as_u64)
                    {
                        next.prefix_padding_ms = padding.min(2_000);
                    }
                    Some(silence)
                }
            };
        }
        Ok(next)
    }

    /// The session as the server reports it (GA shape, or the beta's flat one).
    pub fn session(&self, id: &str, beta: bool) -> Value {
        let detection = self.silence_ms.map(|silence| {
            json!({"type": "server_vad", "silence_duration_ms": silence,
                   "prefix_padding_ms": self.prefix_padding_ms, "threshold": 0.5})
        });
        let transcription =
            json!({"model": self.model, "language": self.language, "prompt": self.prompt});
        if beta {
            let format = match self.format {
                Format::Pcm24k => "pcm16",
                Format::Ulaw => "g711_ulaw",
                Format::Alaw => "g711_alaw",
            };
            return json!({"id": id, "object": "realtime.transcription_session",
                "input_audio_format": format, "input_audio_transcription": transcription,
                "turn_detection": detection, "input_audio_noise_reduction": null});
        }
        let format = match self.format {
            Format::Pcm24k => json!({"type": "audio/pcm", "rate": 24000}),
            Format::Ulaw => json!({"type": "audio/pcmu"}),
            Format::Alaw => json!({"type": "audio/pcma"}),
        };
        json!({"type": "transcription", "id": id, "object": "realtime.transcription_session",
            "audio": {"input": {"format": format, "transcription": transcription,
                                "turn_detection": detection, "noise_reduction": null}},
            "include": []})
    }
}

/// A server event of `kind` with `fields` and a fresh event id.
pub fn event(kind: &str, fields: Value) -> String {
    let mut event =
        json!({ "type": kind, "event_id": format!("event_{}", uuid::Uuid::new_v4().simple()) });
    if let (Some(event), Value::Object(fields)) = (event.as_object_mut(), fields) {
        event.extend(fields);
    }
    event.to_string()
}

/// An `error` event: `code` and `message`, about the client's event `about` when it had an id.
pub fn error(code: &str, message: &str, about: Option<&str>) -> String {
    event(
        "error",
        json!({"error": {"type": "invalid_request_error", "code": code, "message": message,
                         "param": null, "event_id": about}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_of_a_session_update_are_read() {
        let ga = json!({"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcmu"},
            "transcription": {"model": "gpt-4o-transcribe", "language": "en", "prompt": "M-Pesa"},
            "turn_detection": null}}});
        let next = Settings::default().updated(&ga, false).unwrap();
        assert_eq!(next.format, Format::Ulaw);
        assert_eq!((next.language.as_str(), next.silence_ms), ("en", None));
        assert_eq!(
            next.session("s", false)["audio"]["input"]["format"]["type"],
            "audio/pcmu"
        );
        let beta = json!({"input_audio_format": "pcm16", "input_audio_transcription": {"model": "whisper-1"},
                          "turn_detection": {"type": "server_vad", "silence_duration_ms": 700}});
        let next = Settings::default().updated(&beta, true).unwrap();
        assert_eq!((next.format, next.silence_ms), (Format::Pcm24k, Some(700)));
        assert_eq!(next.session("s", true)["input_audio_format"], "pcm16");
        for bad in [
            json!({"type": "realtime"}),
            json!({"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}}),
            json!({"audio": {"input": {"transcription": {"language": "xx"}}}}),
            json!({"audio": {"input": {"transcription": {"model": "gpt-4o"}}}}),
            json!({"audio": {"input": {"turn_detection": {"type": "semantic_vad"}}}}),
        ] {
            assert!(Settings::default().updated(&bad, false).is_err(), "{bad}");
        }
        assert!(matches!(
            ClientEvent::parse(r#"{"type":"input_audio_buffer.append","audio":"AAA="}"#),
            Ok(ClientEvent::Append { .. })
        ));
        assert!(ClientEvent::parse(r#"{"type":"response.create"}"#).is_err());
        assert!(ClientEvent::parse("[]").is_err());
    }
}
