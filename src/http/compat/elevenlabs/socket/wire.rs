//! ElevenLabs' input-streaming messages: what a client sends (the init message, text, `flush`, the end,
//! and on the multi-context socket `context_id`, `close_context` and `close_socket`) and what the server
//! answers (`audio` with `alignment` and `normalizedAlignment`, `isFinal`, and errors).

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::super::speech::ElevenVoiceSettings;
use crate::dictionaries::Locator;
use crate::ops::speech_input::buffer::SCHEDULE_RANGE;
use crate::ops::speech_input::Alignment;
use crate::tts::alignment::CharacterTimes;

/// One message from the client. Every member may be absent or `null`; members sauti has no use for
/// (`try_trigger_generation`, `keep_alive`) are accepted.
#[derive(Debug, Default, Deserialize)]
pub struct ClientMessage {
    /// Text to speak (`" "` opens, `""` ends the single stream or keeps a context alive).
    pub text: Option<String>,
    /// How to speak (the first message of the stream or of a context).
    pub voice_settings: Option<ElevenVoiceSettings>,
    /// The chunk schedule.
    pub generation_config: Option<GenerationConfig>,
    /// Pronunciation dictionaries (the first message of the stream or of a context).
    pub pronunciation_dictionary_locators: Option<Vec<Locator>>,
    /// The key, when no header carried it (first message only).
    pub xi_api_key: Option<String>,
    /// `Bearer KEY`, when no header carried it (first message only).
    pub authorization: Option<String>,
    /// Speak everything held now.
    pub flush: Option<bool>,
    /// The context this message is for (multi-context socket).
    pub context_id: Option<String>,
    /// End the context: what it holds is spoken, then `isFinal`.
    pub close_context: Option<bool>,
    /// End every context, then the socket.
    pub close_socket: Option<bool>,
}

/// `generation_config`.
#[derive(Debug, Default, Deserialize)]
pub struct GenerationConfig {
    /// Characters held before each successive piece is spoken.
    pub chunk_length_schedule: Option<Vec<f64>>,
}

impl ClientMessage {
    /// The message in `text`, or why it cannot be read.
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("a message must be a JSON object: {e}"))
    }

    /// The key the message presents, if any.
    pub fn key(&self) -> Option<&str> {
        if let Some(key) = self.xi_api_key.as_deref() {
            return Some(key.trim());
        }
        let authorization = self.authorization.as_deref()?.trim();
        Some(
            authorization
                .strip_prefix("Bearer ")
                .unwrap_or(authorization)
                .trim(),
        )
    }

    /// The chunk schedule it asks for, checked (each length 50 to 500 characters, at most 16 of them).
    pub fn schedule(&self) -> Result<Option<Vec<usize>>, String> {
        let Some(lengths) = self
            .generation_config
            .as_ref()
            .and_then(|c| c.chunk_length_schedule.as_ref())
        else {
            return Ok(None);
        };
        let (lo, hi) = SCHEDULE_RANGE;
        if lengths.is_empty() || lengths.len() > 16 {
            return Err(
                "`generation_config.chunk_length_schedule` must have 1 to 16 lengths".into(),
            );
        }
        lengths
            .iter()
            .map(|&length| match length.is_finite() && (lo as f64..=hi as f64).contains(&length) {
                true => Ok(length.round() as usize),
                false => Err(format!(
                    "`generation_config.chunk_length_schedule` lengths must be {lo} to {hi} characters"
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// Characters and their times in milliseconds, as the sockets send them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chars {
    chars: Vec<String>,
    char_start_times_ms: Vec<u64>,
    char_durations_ms: Vec<u64>,
}

impl From<&CharacterTimes> for Chars {
    fn from(times: &CharacterTimes) -> Self {
        let ms = |t: f64| (t * 1000.0).round().max(0.0) as u64;
        Self {
            chars: times.characters.clone(),
            char_start_times_ms: times.starts.iter().map(|&t| ms(t)).collect(),
            char_durations_ms: times
                .starts
                .iter()
                .zip(&times.ends)
                .map(|(&start, &end)| ms(end).saturating_sub(ms(start)))
                .collect(),
        }
    }
}

/// One message from the server.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerMessage<'a> {
    /// Audio in the socket's `output_format`, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    audio: Option<String>,
    /// Whether this is the context's last message.
    is_final: bool,
    /// The text as read, timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    normalized_alignment: Option<Chars>,
    /// The written text, timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    alignment: Option<Chars>,
    /// The context (multi-context socket only).
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<&'a str>,
}

impl<'a> ServerMessage<'a> {
    /// Audio and, where the voice gives them, its characters' times.
    pub fn audio(bytes: &[u8], alignment: Option<&Alignment>, context: Option<&'a str>) -> Self {
        Self {
            audio: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            is_final: false,
            normalized_alignment: alignment.map(|a| Chars::from(&a.normalized)),
            alignment: alignment.map(|a| Chars::from(&a.written)),
            context_id: context,
        }
    }

    /// The context's (or the stream's) last message.
    pub fn last(context: Option<&'a str>) -> Self {
        Self {
            audio: None,
            is_final: true,
            normalized_alignment: None,
            alignment: None,
            context_id: context,
        }
    }

    /// The message as JSON text.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// An error the socket reports without closing (`error` names it, `message` says what to do).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorMessage<'a> {
    /// What went wrong and what to do.
    pub message: &'a str,
    /// Its name: `max_active_conversations`, `context_closed`, `too_much_text`, `synthesis_failed`, …
    pub error: &'a str,
    /// The close code it would have been.
    pub code: u16,
    /// The context it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<&'a str>,
}

impl ErrorMessage<'_> {
    /// The message as JSON text.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_of_both_sockets_are_read() {
        let init = ClientMessage::parse(
            r#"{"text":" ","voice_settings":{"stability":0.5,"speed":1.1,"use_speaker_boost":null},
               "generation_config":{"chunk_length_schedule":[50,120.0,160]},"xi_api_key":"k"}"#,
        )
        .unwrap();
        assert_eq!(init.text.as_deref(), Some(" "));
        assert_eq!(init.schedule().unwrap(), Some(vec![50, 120, 160]));
        assert_eq!(init.key(), Some("k"));
        let bearer = ClientMessage::parse(r#"{"authorization":"Bearer abc"}"#).unwrap();
        assert_eq!(bearer.key(), Some("abc"));
        let close = ClientMessage::parse(r#"{"context_id":"c1","close_context":true}"#).unwrap();
        assert_eq!(close.context_id.as_deref(), Some("c1"));
        assert_eq!(close.close_context, Some(true));
        assert!(ClientMessage::parse("[1]").is_err());
        let bad =
            ClientMessage::parse(r#"{"generation_config":{"chunk_length_schedule":[5]}}"#).unwrap();
        assert!(bad.schedule().is_err());
    }

    #[test]
    fn audio_messages_carry_times_in_milliseconds() {
        let times = CharacterTimes {
            characters: vec!["a".into(), "b".into()],
            starts: vec![0.0, 0.1234],
            ends: vec![0.1234, 0.3],
        };
        let alignment = Alignment {
            written: times.clone(),
            normalized: times,
        };
        let json = ServerMessage::audio(b"\x01\x02", Some(&alignment), Some("c")).json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["audio"], "AQI=");
        assert_eq!(value["isFinal"], false);
        assert_eq!(value["contextId"], "c");
        assert_eq!(
            value["alignment"]["charStartTimesMs"],
            serde_json::json!([0, 123])
        );
        assert_eq!(
            value["alignment"]["charDurationsMs"],
            serde_json::json!([123, 177])
        );
        assert_eq!(
            value["normalizedAlignment"]["chars"],
            serde_json::json!(["a", "b"])
        );
        let last: serde_json::Value =
            serde_json::from_str(&ServerMessage::last(None).json()).unwrap();
        assert_eq!(last, serde_json::json!({"isFinal": true}));
    }
}
