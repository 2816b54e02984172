//! `POST /v1/audio/speech`: OpenAI's speech request, answered with the audio bytes in the asked format, or with
//! `stream_format: "sse"` as server-sent events (`speech.audio.delta` with each piece's audio as it is made, then
//! `speech.audio.done`).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{check_model, Kind};
use crate::audio::output::OutputFormat;
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::character_cost;
use crate::http::transport::extract::ApiJson;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::speech::Speak;
use crate::tts::VoiceSettings;

/// Longest `input` (OpenAI's own limit).
pub use crate::ops::text::OPENAI_MAX_INPUT_CHARS as MAX_INPUT_CHARS;

/// A voice by id, as a string or `{"id": …}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum VoiceRef {
    /// The voice id.
    Id(String),
    /// `{"id": "zuri"}`.
    Object {
        /// The voice id.
        id: String,
    },
}

/// Body of `POST /v1/audio/speech`. Unknown members are ignored, as OpenAI's SDKs may add some.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct SpeechRequest {
    /// A speech model from `GET /v1/models` (`sauti-tts`, or OpenAI's `tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`).
    #[schema(
        example = "tts-1",
        pattern = "^(sauti-tts|tts-1|tts-1-hd|gpt-4o-mini-tts)$"
    )]
    model: String,
    /// The text, 1 to 4,096 characters.
    #[schema(
        example = "Karibu benki yetu. Salio lako ni shilingi elfu kumi.",
        min_length = 1,
        max_length = 4096
    )]
    input: String,
    /// A voice id from `GET /v1/voices` (a cloned voice of this key included).
    #[schema(example = "zuri")]
    voice: VoiceRef,
    /// `mp3` (default), `opus`, `flac`, `wav` or `pcm` (24 kHz 16-bit little-endian). `aac` is refused.
    #[serde(default)]
    #[schema(example = "mp3", pattern = "^(mp3|opus|flac|wav|pcm)$")]
    response_format: Option<String>,
    /// Tempo, 0.25 to 4.0 (sauti's `speaking_rate`).
    #[serde(default)]
    #[schema(example = 1.0, minimum = 0.25, maximum = 4.0)]
    speed: Option<f64>,
    /// Accepted and ignored: sauti's voices take no spoken instructions.
    #[allow(dead_code)]
    #[serde(default)]
    instructions: Option<String>,
    /// `audio` (the default: the audio itself, sent as it is made) or `sse` (server-sent events:
    /// `speech.audio.delta` carrying base64 audio in `response_format`, then `speech.audio.done`).
    #[serde(default)]
    #[schema(example = "audio", pattern = "^(audio|sse)$")]
    stream_format: Option<String>,
}

/// Whether `stream_format` asks for server-sent events (`sse`) rather than the audio itself (`audio`, the default).
fn as_events(stream_format: Option<&str>) -> Result<bool, ApiError> {
    match stream_format {
        None | Some("audio") => Ok(false),
        Some("sse") => Ok(true),
        Some(other) => Err(ApiError::unprocessable(format!(
            "`stream_format` {other:?} is not offered; send \"audio\" (the default) or \"sse\""
        ))),
    }
}

/// `POST /v1/audio/speech`.
#[utoipa::path(post, path = "/v1/audio/speech", operation_id = "createSpeech", tag = "openai",
    summary = "Synthesise speech (OpenAI-compatible)",
    description = "OpenAI's speech request; the answer is the audio itself, in `response_format`, or with \
                   `stream_format: \"sse\"` a `text/event-stream`: a `speech.audio.delta` event (`audio`: base64 \
                   of the next bytes of the audio in `response_format`) as each sentence is made, then \
                   `speech.audio.done` with `usage` (sauti counts characters: `input_tokens` is the characters \
                   synthesised, `output_tokens` 0). A failure after the first event ends the stream without \
                   `speech.audio.done`.",
    request_body = SpeechRequest,
    responses(
        (status = 200, description = "The audio", content(
            (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/flac"), (Vec<u8> = "audio/wav"), (Vec<u8> = "audio/pcm"),
            (String = "text/event-stream"),
        )),
        (status = 400, description = "Malformed JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice or model", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long input, speed out of range, or a format not offered", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(request): ApiJson<SpeechRequest>,
) -> Result<Response, ApiError> {
    check_model(&request.model, Kind::Speech)?;
    let voice_id = match request.voice {
        VoiceRef::Id(id) | VoiceRef::Object { id } => id,
    };
    let format = OutputFormat::openai(request.response_format.as_deref().unwrap_or("mp3"))
        .map_err(ApiError::unprocessable)?;
    let events = as_events(request.stream_format.as_deref())?;
    let speaking_rate = crate::tts::speaking_rate_of(request.speed.unwrap_or(1.0), "speed")
        .map_err(ApiError::unprocessable)?;
    let speak = Speak {
        owner: caller.key_id.to_string(),
        voice_id,
        text: request.input,
        field: "input",
        max_chars: MAX_INPUT_CHARS,
        settings: VoiceSettings {
            speaking_rate,
            ..VoiceSettings::default()
        },
        locators: Vec::new(),
        voices_at: "/v1/voices",
    };
    let prepared = state.prepare_speech(speak).await?;
    let chars = prepared.chars();
    if events {
        let opened = prepared.stream(&state, false).await?;
        let chunks = crate::ops::stream::encoded(&state, format, opened)?;
        return Ok((character_cost(chars), super::events::speech(chunks, chars)).into_response());
    }
    let audio = prepared.encoded(&state, format).await?;
    let content_type = [(header::CONTENT_TYPE, format.media_type())];
    Ok((content_type, character_cost(chars), audio).into_response())
}
