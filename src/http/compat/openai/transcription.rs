//! `POST /v1/audio/transcriptions` and `POST /v1/audio/translations`: OpenAI's forms (`file`, `model`,
//! `language`, `prompt`, `response_format`, `temperature`, `timestamp_granularities[]`), answered in OpenAI's
//! shapes. Translation is Whisper's translate task: the speech (Swahili unless `language` says otherwise) written
//! in English.

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::{check_model, Kind};
use crate::asr::captions::Captions;
use crate::asr::{Segment, Task, Transcript, Word};
use crate::http::native::recognition::recognise;
use crate::http::transport::auth::Caller;
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::ops::transcribe::language;

/// The form fields read (others, such as `chunking_strategy`, are read past).
const FIELDS: [&str; 6] = [
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities[]",
];

/// `response_format=json`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Transcription {
    /// The transcript.
    #[schema(example = "Nataka kujua salio la akaunti yangu")]
    text: String,
    /// How much audio was recognised.
    usage: Usage,
}

/// Seconds of audio recognised.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Usage {
    /// Always `duration`.
    #[serde(rename = "type")]
    #[schema(example = "duration")]
    kind: &'static str,
    /// Seconds of audio.
    seconds: f64,
}

/// `response_format=verbose_json`: segments unless only words were asked for, words when they were and the
/// recognizer times words (the CTC models; Whisper's transcripts have none).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TranscriptionVerbose {
    /// `transcribe` or `translate`.
    #[schema(example = "transcribe")]
    task: &'static str,
    /// The language's English name, as OpenAI writes it (`english` for a translation).
    #[schema(example = "swahili")]
    language: &'static str,
    /// Seconds of audio.
    duration: f64,
    /// The transcript.
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    segments: Option<Vec<VerboseSegment>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<Vec<Word>>,
}

/// A segment in OpenAI's shape: what the recognizers measure (no token ids or probabilities).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct VerboseSegment {
    /// Its place in the transcript, from 0.
    id: usize,
    /// Start in seconds.
    start: f64,
    /// End in seconds.
    end: f64,
    /// What was said.
    text: String,
    /// Decoding is greedy: always 0.
    temperature: f64,
}

/// The English names of the languages recognised, as OpenAI's verbose answers give them.
fn language_name(code: &str) -> &'static str {
    match code {
        "sw" => "swahili",
        "en" => "english",
        "fr" => "french",
        "de" => "german",
        "es" => "spanish",
        "pt" => "portuguese",
        "ar" => "arabic",
        "zh" => "chinese",
        "ja" => "japanese",
        "ko" => "korean",
        "ru" => "russian",
        _ => "unknown",
    }
}

/// What `response_format` asks for.
enum Answer {
    Json,
    Text,
    Captions(Captions),
    Verbose { segments: bool, words: bool },
}

/// `response_format` and `timestamp_granularities[]` read, or 422.
fn answer(format: Option<&str>, granularities: Option<&str>) -> Result<Answer, ApiError> {
    let (mut segments, mut words) = (granularities.is_none(), false);
    let named = granularities.into_iter().flat_map(|g| g.split(','));
    for granularity in named.map(str::trim).filter(|g| !g.is_empty()) {
        match granularity {
            "segment" => segments = true,
            "word" => words = true,
            other => {
                return Err(ApiError::unprocessable(format!(
                    "`timestamp_granularities[]` takes \"word\" and \"segment\", not {other:?}"
                )))
            }
        }
    }
    Ok(match format.unwrap_or("json") {
        "json" => Answer::Json,
        "text" => Answer::Text,
        "srt" => Answer::Captions(Captions::Srt),
        "vtt" => Answer::Captions(Captions::Vtt),
        "verbose_json" => Answer::Verbose { segments, words },
        other => {
            return Err(ApiError::unprocessable(format!(
            "`response_format` {other:?} is not offered; use json, text, srt, vtt or verbose_json"
        )))
        }
    })
}

/// `POST /v1/audio/transcriptions`.
#[utoipa::path(post, path = "/v1/audio/transcriptions", operation_id = "createTranscription", tag = "openai",
    summary = "Transcribe audio (OpenAI-compatible)",
    description = "OpenAI's transcription form. `language` defaults to `sw`; `prompt` and `temperature` are accepted \
                   and have no effect (decoding is greedy).",
    request_body(content = crate::http::openapi::TranscriptionForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The transcript in `response_format`", content(
            (Transcription = "application/json"),
            (TranscriptionVerbose = "application/json"),
            (String = "text/plain"),
            (String = "application/x-subrip"),
            (String = "text/vtt"),
        )),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such model", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 25 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `file` part, audio that cannot be decoded, or an unsupported language, format or granularity", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed, or recognition is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Response, ApiError> {
    answer_form(&state, &caller, &headers, multipart, Task::Transcribe).await
}

/// `POST /v1/audio/translations`.
#[utoipa::path(post, path = "/v1/audio/translations", operation_id = "createTranslation", tag = "openai",
    summary = "Translate speech into English (OpenAI-compatible)",
    description = "OpenAI's translation form: the speech written in English by Whisper's translate task. The speech is \
                   taken as Swahili unless `language` (an extension) names another.",
    request_body(content = crate::http::openapi::TranscriptionForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The English text in `response_format`", content(
            (Transcription = "application/json"),
            (TranscriptionVerbose = "application/json"),
            (String = "text/plain"),
            (String = "application/x-subrip"),
            (String = "text/vtt"),
        )),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such model", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 25 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `file` part, audio that cannot be decoded, or an unsupported language or format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No multilingual Whisper model is installed, or recognition is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn translate(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Response, ApiError> {
    answer_form(&state, &caller, &headers, multipart, Task::Translate).await
}

/// Read, check and answer either form.
async fn answer_form(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    multipart: ApiMultipart,
    task: Task,
) -> Result<Response, ApiError> {
    let limit = state.settings.asr.max_upload_bytes;
    upload::check_declared_length(headers, limit)?;
    let mut form = upload::read_form_with(multipart, ("file", "audio"), limit, &FIELDS).await?;
    let model = form
        .field("model")
        .ok_or_else(|| ApiError::unprocessable("the form has no `model` field"))?;
    check_model(model, Kind::Recognition)?;
    let language = language(form.field("language"))?;
    let answer = answer(
        form.field("response_format"),
        form.field("timestamp_granularities[]"),
    )?;
    if let Some(temperature) = form.field("temperature") {
        temperature
            .parse::<f32>()
            .ok()
            .filter(|t| (0.0..=1.0).contains(t))
            .ok_or_else(|| ApiError::unprocessable("`temperature` must be a number from 0 to 1"))?;
    }
    let hints = crate::ops::transcribe::hints(Vec::new(), form.field("prompt"))?;
    let heard = recognise(state, caller, &mut form, (language.clone(), hints), task).await?;
    let (transcript, seconds) = (heard.transcript, heard.duration_seconds);
    let written = match task {
        Task::Transcribe => language.as_str(),
        Task::Translate => "en",
    };
    let timing = crate::http::transport::cost::word_timing(transcript.timing);
    Ok((timing, respond(answer, transcript, seconds, written, task)).into_response())
}

/// The transcript as `answer` asks.
fn respond(
    answer: Answer,
    transcript: Transcript,
    seconds: f64,
    language: &str,
    task: Task,
) -> Response {
    match answer {
        Answer::Json => Json(Transcription {
            text: transcript.text,
            usage: Usage {
                kind: "duration",
                seconds,
            },
        })
        .into_response(),
        Answer::Text => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            transcript.text,
        )
            .into_response(),
        Answer::Captions(captions) => (
            [(header::CONTENT_TYPE, captions.content_type())],
            captions.write(&transcript.segments),
        )
            .into_response(),
        Answer::Verbose { segments, words } => Json(TranscriptionVerbose {
            task: match task {
                Task::Transcribe => "transcribe",
                Task::Translate => "translate",
            },
            language: language_name(language),
            duration: seconds,
            text: transcript.text,
            segments: segments.then(|| verbose_segments(&transcript.segments)),
            words: (words && !transcript.words.is_empty()).then_some(transcript.words),
        })
        .into_response(),
    }
}

fn verbose_segments(segments: &[Segment]) -> Vec<VerboseSegment> {
    segments
        .iter()
        .enumerate()
        .map(|(id, s)| VerboseSegment {
            id,
            start: s.start,
            end: s.end,
            text: s.text.clone(),
            temperature: 0.0,
        })
        .collect()
}
