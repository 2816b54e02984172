//! `POST /elevenlabs/v1/speech-to-text`: ElevenLabs' transcription form (`file`, `model_id`, `language_code`,
//! `timestamps_granularity`), answered in its shape: the text, the language as ISO 639-3, and the words with
//! the spaces between them, timed where the recognizer times words.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::Serialize;

use super::{check_model, three_letter, two_letter, Kind};
use crate::asr::{Task, Word};
use crate::http::native::recognition::recognise;
use crate::http::transport::auth::Caller;
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;

/// One entry of `words`: a word, or the space between two.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ElevenWord {
    /// The word, or a space.
    text: String,
    /// `word` or `spacing`.
    #[serde(rename = "type")]
    #[schema(example = "word")]
    kind: &'static str,
    /// Start in seconds.
    start: f64,
    /// End in seconds.
    end: f64,
}

/// The transcript.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ElevenTranscript {
    /// ISO 639-3 code of the language recognised (the one asked for, or Swahili).
    #[schema(example = "swa")]
    language_code: &'static str,
    /// 1.0: the language is the one asked for (or Swahili), not detected.
    language_probability: f64,
    /// The transcript.
    text: String,
    /// Words and the spaces between them, timed (from the CTC models, and from Whisper where a CTC model aligns
    /// its language; otherwise empty; `sauti-word-timing` says which).
    words: Vec<ElevenWord>,
    /// Seconds of audio.
    audio_duration_secs: f64,
}

/// Timed words with a timed space between each two.
fn with_spacing(words: Vec<Word>) -> Vec<ElevenWord> {
    let mut out: Vec<ElevenWord> = Vec::with_capacity(words.len() * 2);
    for word in words {
        if let Some(last) = out.last() {
            out.push(ElevenWord {
                text: " ".into(),
                kind: "spacing",
                start: last.end,
                end: word.start,
            });
        }
        out.push(ElevenWord {
            text: word.word,
            kind: "word",
            start: word.start,
            end: word.end,
        });
    }
    out
}

/// `POST /elevenlabs/v1/speech-to-text`.
#[utoipa::path(post, path = "/elevenlabs/v1/speech-to-text", operation_id = "elevenlabsSpeechToText", tag = "elevenlabs",
    summary = "Speech to text (ElevenLabs-compatible)",
    request_body(content = crate::http::openapi::ElevenTranscriptionForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The transcript", body = ElevenTranscript),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 25 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `file` part or `model_id`, undecodable audio, or an unknown model, language or granularity", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed, or recognition is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn convert(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<(TimingHeader, Json<ElevenTranscript>), ApiError> {
    let limit = state.settings.asr.max_upload_bytes;
    upload::check_declared_length(&headers, limit)?;
    let fields = [
        "model_id",
        "language_code",
        "timestamps_granularity",
        "keyterms",
    ];
    let mut form = upload::read_form_with(multipart, ("file", "audio"), limit, &fields).await?;
    let model = form
        .field("model_id")
        .ok_or_else(|| ApiError::unprocessable("the form has no `model_id` field"))?;
    check_model(Some(model), Kind::Recognition)?;
    let language = language_of(form.field("language_code"))?;
    let timed = timed(form.field("timestamps_granularity"))?;
    let hints = crate::ops::transcribe::hints(form.values("keyterms"), None)?;
    let heard = recognise(
        &state,
        &caller,
        &mut form,
        (language.into(), hints),
        Task::Transcribe,
    )
    .await?;
    let (transcript, seconds) = (heard.transcript, heard.duration_seconds);
    let timing = crate::http::transport::cost::word_timing(transcript.timing);
    Ok((
        timing,
        Json(ElevenTranscript {
            language_code: three_letter(language),
            language_probability: 1.0,
            text: transcript.text,
            words: if timed {
                with_spacing(transcript.words)
            } else {
                Vec::new()
            },
            audio_duration_secs: seconds,
        }),
    ))
}

/// The `sauti-word-timing` header.
type TimingHeader = [(axum::http::HeaderName, axum::http::HeaderValue); 1];

/// `language_code` (ElevenLabs sends `null` for none) as a two-letter code: Swahili when none is given.
fn language_of(given: Option<&str>) -> Result<&'static str, ApiError> {
    match given.filter(|l| *l != "null") {
        None => Ok(crate::asr::DEFAULT_LANGUAGE),
        Some(given) => two_letter(given).ok_or_else(|| {
            ApiError::unprocessable(format!(
                "unsupported language {given:?}; use one of {}",
                crate::asr::LANGUAGES.join(", ")
            ))
        }),
    }
}

/// Whether `timestamps_granularity` asks for word times (the default).
fn timed(granularity: Option<&str>) -> Result<bool, ApiError> {
    match granularity {
        None | Some("word") => Ok(true),
        Some("none") => Ok(false),
        Some(other) => Err(ApiError::unprocessable(format!(
            "`timestamps_granularity` {other:?} is not offered; use word or none"
        ))),
    }
}
