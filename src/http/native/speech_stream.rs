//! `POST /v1/text-to-speech/{voice_id}/stream` (the audio itself, chunked, each sentence sent as soon as it is
//! made) and `POST /v1/text-to-speech/{voice_id}/with-timestamps` (the seed's JSON with when each character and
//! word is spoken). Both take the seed's body and `output_format`, checked the same way.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde::Serialize;

use crate::http::compat::elevenlabs::timestamps::Alignment;
use crate::http::native::formats::FormatQuery;
use crate::http::native::speech::{TtsRequest, TTS_MAX_CHARS};
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::character_cost;
use crate::http::transport::extract::{ApiJson, ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::tts::alignment;

#[utoipa::path(post, path = "/v1/text-to-speech/{voice_id}/stream", operation_id = "textToSpeechStream", tag = "speech",
    summary = "Synthesise Swahili speech as a stream",
    description = "The audio itself (not JSON), sent in chunks as each sentence is made: the first bytes leave once \
                   the first sentence is synthesised. Up to 5,000 characters. A 16 kHz WAV with a streaming header \
                   (its sizes unknown: read to the end) unless `output_format` names another. A failure after the \
                   first bytes ends the answer early (an incomplete chunked body).",
    params(("voice_id" = String, Path, description = "A voice from GET /v1/voices", example = "zuri"), FormatQuery),
    request_body = TtsRequest,
    responses(
        (status = 200, description = "The audio, chunked", content(
            (Vec<u8> = "audio/wav"), (Vec<u8> = "audio/pcm"), (Vec<u8> = "audio/basic"), (Vec<u8> = "audio/x-alaw-basic"),
            (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/flac"),
        )),
        (status = 404, description = "No such voice, or no such pronunciation dictionary (or version) for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, nothing to say, voice settings out of range, more than 3 dictionary locators, or an unknown output format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<FormatQuery>,
    ApiJson(request): ApiJson<TtsRequest>,
) -> Result<Response, ApiError> {
    let format = query.format()?;
    let speak = request.speak(&caller, voice_id, TTS_MAX_CHARS);
    let prepared = state.prepare_speech(speak).await?;
    let cost = character_cost(prepared.chars());
    let opened = prepared.stream(&state, false).await?;
    let chunks = crate::ops::stream::encoded(&state, format, opened)?;
    Ok((
        [(header::CONTENT_TYPE, format.media_type())],
        cost,
        crate::http::native::streaming::audio(chunks),
    )
        .into_response())
}

/// A word and when it is spoken.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TimedWord {
    /// The word as read (lowercase; numbers and abbreviations written out).
    #[schema(example = "asubuhi")]
    text: String,
    /// When it starts, in seconds from the start of the audio.
    #[schema(example = 0.412)]
    start: f64,
    /// When it ends.
    #[schema(example = 0.955)]
    end: f64,
}

/// The seed's synthesis result with its timings.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TimedSynthesis {
    /// Base64 of the audio (a 16 kHz mono WAV unless `output_format` names another).
    audio_base64: String,
    /// The audio's media type.
    #[schema(example = "audio/wav")]
    content_type: String,
    /// Seconds of audio.
    #[schema(example = 2.48)]
    duration_seconds: f64,
    /// Characters of the text.
    #[schema(example = 42)]
    characters_synthesized: usize,
    /// The voice used.
    #[schema(example = "zuri")]
    voice_id: String,
    /// Each word as read, with its times.
    words: Vec<TimedWord>,
    /// Every character of the text as written, with its times.
    alignment: Alignment,
    /// Every character of the text as read (the words joined by spaces), with its times.
    normalized_alignment: Alignment,
}

/// Seconds rounded to the millisecond.
fn ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// `POST /v1/text-to-speech/{voice_id}/with-timestamps`.
#[utoipa::path(post, path = "/v1/text-to-speech/{voice_id}/with-timestamps", operation_id = "textToSpeechWithTimestamps", tag = "speech",
    summary = "Synthesise Swahili speech with word and character timings",
    description = "The seed's JSON (`audio_base64`, `content_type`, `duration_seconds`, `characters_synthesized`, \
                   `voice_id`) with `words`, `alignment` and `normalized_alignment`: times taken from the voice's \
                   own plan of each word, in seconds from the start of the audio. Up to 5,000 characters. Voices \
                   that cannot tell when each word is spoken (neural models without durations) are refused (422).",
    params(("voice_id" = String, Path, description = "A voice from GET /v1/voices", example = "zuri"), FormatQuery),
    request_body = TtsRequest,
    responses(
        (status = 200, description = "The audio with its timings", body = TimedSynthesis),
        (status = 404, description = "No such voice, or no such pronunciation dictionary (or version) for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, voice settings out of range, an unknown output format, or a voice that cannot time its words", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn with_timestamps(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<FormatQuery>,
    ApiJson(request): ApiJson<TtsRequest>,
) -> Result<Response, ApiError> {
    let format = query.format()?;
    let text = request.text.clone();
    let prepared = (state.prepare_speech(request.speak(&caller, voice_id, TTS_MAX_CHARS))).await?;
    let (chars, voice_id) = (prepared.chars(), prepared.voice_id().to_string());
    let (samples, words) = prepared.timed(&state).await?;
    let duration = samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
    let audio = crate::ops::encode::encode(&state, format, samples).await?;
    let cost = character_cost(chars);
    let timed = Json(TimedSynthesis {
        audio_base64: base64::engine::general_purpose::STANDARD.encode(audio),
        content_type: format.media_type().to_string(),
        duration_seconds: ms(duration),
        characters_synthesized: chars,
        voice_id,
        alignment: alignment::written(&text, &words).into(),
        normalized_alignment: alignment::normalized(&words).into(),
        words: words
            .into_iter()
            .map(|w| TimedWord {
                text: w.text,
                start: ms(w.start),
                end: ms(w.end),
            })
            .collect(),
    });
    Ok((cost, timed).into_response())
}
