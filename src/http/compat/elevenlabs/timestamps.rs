//! `POST /elevenlabs/v1/text-to-speech/{voice_id}/with-timestamps` and `…/stream/with-timestamps`: the audio
//! (base64) with when each character is spoken, of the written text (`alignment`) and of the text as read
//! (`normalized_alignment`). The times come from the voice's own plan of each word (the embedded voices); a
//! voice that cannot tell is refused with 422.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use futures_util::StreamExt as _;
use serde::Serialize;

use super::speech::{prepare, ElevenSpeechRequest, SpeechQuery};
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::character_cost;
use crate::http::transport::extract::{ApiJson, ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::stream::Chunk;
use crate::tts::alignment::{self, CharacterTimes};

/// Characters and when each is spoken.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Alignment {
    /// Each character, in order.
    characters: Vec<String>,
    /// When each starts, in seconds from the start of the audio.
    character_start_times_seconds: Vec<f64>,
    /// When each ends.
    character_end_times_seconds: Vec<f64>,
}

impl From<CharacterTimes> for Alignment {
    fn from(times: CharacterTimes) -> Self {
        let round = |v: Vec<f64>| {
            v.into_iter()
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect()
        };
        Self {
            characters: times.characters,
            character_start_times_seconds: round(times.starts),
            character_end_times_seconds: round(times.ends),
        }
    }
}

/// The audio with its timings.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AudioWithTimestamps {
    /// The audio in `output_format`, base64.
    audio_base64: String,
    /// The written text's characters.
    alignment: Alignment,
    /// The text as read (numbers, dates and abbreviations written out)'s characters.
    normalized_alignment: Alignment,
}

async fn timed(
    state: &AppState,
    caller: &Caller,
    voice_id: &str,
    query: SpeechQuery,
    request: ElevenSpeechRequest,
) -> Result<Response, ApiError> {
    let prepared = prepare(state, caller, voice_id, query, request).await?;
    let cost = character_cost(prepared.speech.chars());
    let (text, format) = (prepared.text, prepared.format);
    let (samples, words) = prepared.speech.timed(state).await?;
    let audio = crate::ops::encode::encode(state, format, samples).await?;
    let timed = AudioWithTimestamps {
        audio_base64: base64::engine::general_purpose::STANDARD.encode(audio),
        alignment: alignment::written(&text, &words).into(),
        normalized_alignment: alignment::normalized(&words).into(),
    };
    Ok((cost, Json(timed)).into_response())
}

/// `POST /elevenlabs/v1/text-to-speech/{voice_id}/with-timestamps`.
#[utoipa::path(post, path = "/elevenlabs/v1/text-to-speech/{voice_id}/with-timestamps", operation_id = "elevenlabsConvertWithTimestamps", tag = "elevenlabs",
    summary = "Text to speech with character timings (ElevenLabs-compatible)",
    params(("voice_id" = String, Path, description = "A voice from GET /elevenlabs/v1/voices", example = "zuri"), SpeechQuery),
    request_body = ElevenSpeechRequest,
    responses(
        (status = 200, description = "The audio (base64) and when each character is spoken", body = AudioWithTimestamps),
        (status = 404, description = "No such voice, or no such pronunciation dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, an unknown model, language or output format, settings out of range, or a voice that cannot time its words", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn convert(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<SpeechQuery>,
    ApiJson(request): ApiJson<ElevenSpeechRequest>,
) -> Result<Response, ApiError> {
    timed(&state, &caller, &voice_id, query, request).await
}

/// Places each streamed piece's characters on the whole text's timeline.
struct Aligner {
    text: String,
    /// Bytes of `text` already placed.
    placed: usize,
    /// Seconds of audio so far.
    seconds: f64,
    /// When the last word so far ended (the space before the next piece's words starts there).
    last_end: Option<f64>,
}

impl Aligner {
    /// The line for one chunk of the stream.
    fn line(&mut self, chunk: Chunk) -> Option<AudioWithTimestamps> {
        let audio_base64 = base64::engine::general_purpose::STANDARD.encode(&chunk.bytes);
        let Some(piece) = chunk.piece else {
            // The end: the format's last bytes, and any characters after the last piece (trailing spaces).
            let rest: Vec<char> = self.text[self.placed..].chars().collect();
            if chunk.bytes.is_empty() && rest.is_empty() {
                return None;
            }
            let at = vec![self.seconds; rest.len()];
            let times = CharacterTimes {
                characters: rest.iter().map(char::to_string).collect(),
                starts: at.clone(),
                ends: at,
            };
            self.placed = self.text.len();
            return Some(AudioWithTimestamps {
                audio_base64,
                alignment: times.clone().into(),
                normalized_alignment: times.into(),
            });
        };
        // The piece's characters, with what lay between it and the piece before (spaces, a passed-over `...`).
        let end = self.text[self.placed..]
            .find(&piece.text)
            .map_or(self.placed, |at| self.placed + at + piece.text.len());
        let written = alignment::written(&self.text[self.placed..end], &piece.words);
        self.placed = end;
        let mut normalized = alignment::normalized(&piece.words);
        if let (Some(last_end), Some(first)) = (self.last_end, piece.words.first()) {
            normalized.characters.insert(0, " ".into());
            normalized.starts.insert(0, last_end);
            normalized.ends.insert(0, first.start.max(last_end));
        }
        self.last_end = piece.words.last().map(|w| w.end).or(self.last_end);
        self.seconds += piece.samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
        Some(AudioWithTimestamps {
            audio_base64,
            alignment: written.into(),
            normalized_alignment: normalized.into(),
        })
    }
}

/// `POST /elevenlabs/v1/text-to-speech/{voice_id}/stream/with-timestamps`: newline-delimited JSON.
#[utoipa::path(post, path = "/elevenlabs/v1/text-to-speech/{voice_id}/stream/with-timestamps", operation_id = "elevenlabsStreamWithTimestamps", tag = "elevenlabs",
    summary = "Text to speech with character timings, as newline-delimited JSON (ElevenLabs-compatible)",
    description = "One line of JSON for each sentence as it is made (the same object as `/with-timestamps`: \
                   the sentence's audio in base64 and its characters, timed from the start of the whole), and a \
                   last line with the format's closing bytes.",
    params(("voice_id" = String, Path, description = "A voice from GET /elevenlabs/v1/voices", example = "zuri"), SpeechQuery),
    request_body = ElevenSpeechRequest,
    responses(
        (status = 200, description = "Lines of JSON, each the audio (base64) and its timings", content_type = "application/x-ndjson", body = AudioWithTimestamps),
        (status = 404, description = "No such voice, or no such pronunciation dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, an unknown model, language or output format, settings out of range, or a voice that cannot time its words", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<SpeechQuery>,
    ApiJson(request): ApiJson<ElevenSpeechRequest>,
) -> Result<Response, ApiError> {
    let prepared = prepare(&state, &caller, &voice_id, query, request).await?;
    let (format, cost) = (prepared.format, character_cost(prepared.speech.chars()));
    let mut aligner = Aligner {
        text: prepared.text.clone(),
        placed: 0,
        seconds: 0.0,
        last_end: None,
    };
    let opened = prepared.speech.stream(&state, true).await?;
    let chunks = crate::ops::stream::encoded(&state, format, opened)?;
    let lines = chunks.filter_map(move |chunk| {
        let line = chunk
            .map(|chunk| aligner.line(chunk))
            .transpose()
            .map(|line| {
                line.map(|answer| {
                    let mut line = serde_json::to_vec(&answer).unwrap_or_default();
                    line.push(b'\n');
                    Bytes::from(line)
                })
            });
        std::future::ready(line)
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        cost,
        Body::from_stream(lines),
    )
        .into_response())
}
