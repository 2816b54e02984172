//! `POST /v1/speech-to-text/`: a multipart upload in, the transcript out.

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::asr::captions::Captions;
use crate::asr::{Hints, Segment, Task, Word};
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::word_timing;
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::ops::transcribe::{Heard, Transcribe};

/// The spec §2.6 transcription result; `segments` and `words` only with `response_format=verbose_json`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TranscriptionResponse {
    /// The transcript (empty when the audio holds no speech).
    #[schema(example = "Habari za asubuhi")]
    text: String,
    /// Language code used.
    #[schema(example = "sw")]
    language: String,
    /// Length of the audio in seconds.
    #[schema(example = 2.5)]
    duration_seconds: f64,
    /// The decoded stretches with start and end times in seconds (`verbose_json` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    segments: Option<Vec<Segment>>,
    /// Every word with its start and end in seconds (`verbose_json` only, from models that time words: the CTC
    /// models, and Whisper where a CTC model aligns its language; `sauti-word-timing` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<Vec<Word>>,
}

/// What `response_format` asks for.
enum Format {
    Json { verbose: bool },
    Captions(Captions),
}

/// `POST /v1/speech-to-text/`.
#[utoipa::path(post, path = "/v1/speech-to-text/", operation_id = "speechToText", tag = "recognition", summary = "Transcribe audio",
    request_body(content = crate::http::openapi::SpeechToTextForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The transcript; with `response_format` `srt` or `vtt`, captions (one cue per segment)", content(
            (TranscriptionResponse = "application/json"),
            (String = "application/x-subrip"),
            (String = "text/vtt"),
        )),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 25 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `audio` part, audio that cannot be decoded, or an unsupported language or response format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed (the detail names the one to fetch), or recognition is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn speech_to_text(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Response, ApiError> {
    let limit = state.settings.asr.max_upload_bytes;
    upload::check_declared_length(&headers, limit)?;
    let mut form = upload::read_form(multipart, limit, &["language", "response_format"]).await?;
    // Validation first (fields, then the audio itself), availability after: a wrong request is 422 whatever is
    // installed.
    let language = crate::ops::transcribe::language(form.field("language"))?;
    let format = Format::named(form.field("response_format"))?;
    let heard = recognise(
        &state,
        &caller,
        &mut form,
        (
            language.clone(),
            Hints {
                timed: true,
                ..Hints::default()
            },
        ),
        Task::Transcribe,
    )
    .await?;
    let (transcript, duration_seconds) = (heard.transcript, heard.duration_seconds);
    let timing = word_timing(transcript.timing);
    let verbose = match format {
        Format::Captions(captions) => {
            let document = captions.write(&transcript.segments);
            let kind = [(header::CONTENT_TYPE, captions.content_type())];
            return Ok((timing, kind, document).into_response());
        }
        Format::Json { verbose } => verbose,
    };
    let words = (!transcript.words.is_empty()).then_some(transcript.words);
    let body = Json(TranscriptionResponse {
        text: transcript.text,
        language,
        duration_seconds,
        segments: verbose.then_some(transcript.segments),
        words: words.filter(|_| verbose),
    });
    Ok((timing, body).into_response())
}

/// The form's audio recognised in `language` with `hints` (transcribed or translated): what was heard.
pub async fn recognise(
    state: &AppState,
    caller: &Caller,
    form: &mut upload::Form,
    (language, hints): (String, Hints),
    task: Task,
) -> Result<Heard, ApiError> {
    let request = Transcribe {
        owner: caller.key_id.to_string(),
        audio: upload::require_audio(form).map(|file| file.bytes),
        language,
        task,
        hints,
    };
    state.transcribe(request).await
}

impl Format {
    /// The `response_format` asked for (JSON when none is).
    fn named(given: Option<&str>) -> Result<Self, ApiError> {
        match given {
            None | Some("json") => Ok(Format::Json { verbose: false }),
            Some("verbose_json") => Ok(Format::Json { verbose: true }),
            Some("srt") => Ok(Format::Captions(Captions::Srt)),
            Some("vtt") => Ok(Format::Captions(Captions::Vtt)),
            Some(other) => Err(ApiError::unprocessable(format!(
                "response_format {other:?} is not supported; use \"json\", \"verbose_json\", \"srt\" or \"vtt\""
            ))),
        }
    }
}
