//! `POST /v1/text-to-speech/{voice_id}` and the asynchronous jobs of `/v1/tts/jobs`.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::audio::output::OutputFormat;
use crate::dictionaries::Locator;
use crate::http::native::formats::FormatQuery;
use crate::http::native::synthesis_body::SynthesisBody;
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::character_cost;
use crate::http::transport::extract::{ApiJson, ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::speech::Speak;
use crate::storage::{JobRecord, JobStatus};
use crate::tts::VoiceSettings;

pub use crate::ops::text::TTS_MAX_CHARS;

/// Body of `POST /v1/text-to-speech/{voice_id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct TtsRequest {
    /// Swahili text: 1 to 5,000 characters; over 2,000 it becomes a job (202).
    /// It must contain a letter or a digit to speak.
    #[schema(
        example = "Habari ya asubuhi! Salio lako ni TSh 12,500.",
        min_length = 1,
        max_length = 5000,
        pattern = "[A-Za-z0-9]"
    )]
    pub text: String,
    /// Optional voice settings; omitted members take their defaults.
    #[serde(default)]
    pub voice_settings: Option<VoiceSettings>,
    /// Up to 3 pronunciation dictionaries of this key, applied in order over the server's lexicon.
    #[serde(default)]
    #[schema(max_items = 3)]
    pub pronunciation_dictionary_locators: Vec<Locator>,
}

/// 202 body for a created job.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct JobCreated {
    job_id: String,
    status: JobStatus,
    created_at: String,
    /// Where the audio will be, in the `output_format` the request named (only when it named one: a job
    /// stores WAV and encodes on download).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "/v1/tts/jobs/job_3f9a1c2e7b5d4a60b1c2d3e4f5a6b7c8/audio?output_format=mp3_44100_128"
    )]
    audio_url: Option<String>,
}

impl From<&JobRecord> for JobCreated {
    fn from(job: &JobRecord) -> Self {
        Self {
            job_id: job.id.clone(),
            status: job.status,
            created_at: job.created_at.clone(),
            audio_url: None,
        }
    }
}

impl TtsRequest {
    /// The request as the synthesis operation takes it.
    pub fn speak(self, caller: &Caller, voice_id: String, max_chars: usize) -> Speak {
        Speak {
            owner: caller.key_id.to_string(),
            voice_id,
            text: self.text,
            field: "text",
            max_chars,
            settings: self.voice_settings.unwrap_or_default(),
            locators: self.pronunciation_dictionary_locators,
            voices_at: "/v1/voices",
        }
    }
}

/// 202 with the job's record (and where its audio will be, in `format`, when that is not the stored WAV).
fn accepted(job: &JobRecord, format: OutputFormat, chars: usize) -> Response {
    let mut created = JobCreated::from(job);
    created.audio_url = (format != OutputFormat::WAV_16K).then(|| {
        format!(
            "/v1/tts/jobs/{}/audio?output_format={}",
            job.id,
            format.name()
        )
    });
    (StatusCode::ACCEPTED, character_cost(chars), Json(created)).into_response()
}

/// `POST /v1/text-to-speech/{voice_id}`: 200 with audio up to 2,000 characters, 202 with a job beyond.
#[utoipa::path(post, path = "/v1/text-to-speech/{voice_id}", operation_id = "textToSpeech", tag = "speech",
    summary = "Synthesise Swahili speech",
    description = "Up to 2,000 characters: 200 with a base64 16 kHz mono WAV, or the audio in `output_format` \
                   (its media type in `content_type`). 2,001 to 5,000: 202 with a job.",
    params(("voice_id" = String, Path, description = "A voice from GET /v1/voices", example = "zuri"), FormatQuery),
    request_body = TtsRequest,
    responses(
        (status = 200, description = "The audio", body = crate::http::native::synthesis_body::SynthesisResult),
        (status = 202, description = "Longer than 2,000 characters: queued as a job", body = JobCreated),
        (status = 404, description = "No such voice, or no such pronunciation dictionary (or version) for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text (also once the pronunciation dictionaries' rules are applied), voice settings out of range, more than 3 dictionary locators, or an unknown output format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 507, description = "The server's disk is full: a job cannot be queued (insufficient_storage, Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn text_to_speech(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<FormatQuery>,
    ApiJson(request): ApiJson<TtsRequest>,
) -> Result<Response, ApiError> {
    let format = query.format()?;
    let prepared = state
        .prepare_speech(request.speak(&caller, voice_id, TTS_MAX_CHARS))
        .await?;
    let chars = prepared.chars();
    if prepared.needs_a_job() {
        return Ok(accepted(&prepared.queue(&state).await?, format, chars));
    }
    let voice_id = prepared.voice_id().to_string();
    let samples = prepared.samples(&state).await?;
    let body = if format != OutputFormat::WAV_16K {
        let count = samples.len();
        let audio = crate::ops::encode::encode(&state, format, samples).await?;
        SynthesisBody::encoded(&audio, format.media_type(), count, chars, &voice_id)
    } else {
        // Encoded chunk by chunk as the connection sends it (synthesis_body).
        let body = SynthesisBody::new(samples.len(), chars, &voice_id);
        let length = [(header::CONTENT_LENGTH, body.content_length().to_string())];
        let cost = character_cost(chars);
        return Ok((json_type(), length, cost, body.into_body(samples)).into_response());
    };
    Ok((json_type(), character_cost(chars), body).into_response())
}

fn json_type() -> [(header::HeaderName, &'static str); 1] {
    [(header::CONTENT_TYPE, "application/json")]
}

/// Body of `POST /v1/tts/jobs`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct JobRequest {
    /// The text (required; up to `jobs.max_chars`).
    #[schema(
        min_length = 1,
        max_length = 20000,
        pattern = "[A-Za-z0-9]",
        example = "Karibu kwenye huduma yetu."
    )]
    pub text: String,
    /// The voice; the TTS default voice when omitted.
    #[serde(default)]
    pub voice_id: Option<String>,
    /// Voice settings.
    #[serde(default)]
    pub voice_settings: Option<VoiceSettings>,
    /// Up to 3 pronunciation dictionaries of this key, applied in order; the job keeps their rules, so
    /// deleting a dictionary later does not change it.
    #[serde(default)]
    #[schema(max_items = 3)]
    pub pronunciation_dictionary_locators: Vec<Locator>,
}

/// `POST /v1/tts/jobs` → 202.
#[utoipa::path(post, path = "/v1/tts/jobs", operation_id = "createJob", tag = "speech", summary = "Create a synthesis job",
    request_body = JobRequest,
    responses(
        (status = 202, description = "Queued", body = JobCreated),
        (status = 404, description = "No such voice, or no such pronunciation dictionary (or version) for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text (also once the pronunciation dictionaries' rules are applied), bad settings, or more than 3 dictionary locators", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 429, description = "Too many requests, or too many unfinished jobs for this key (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 507, description = "The server's disk is full: a job cannot be queued (insufficient_storage, Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn create_job(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(request): ApiJson<JobRequest>,
) -> Result<Response, ApiError> {
    let voice_id =
        (request.voice_id.clone()).unwrap_or_else(|| state.settings.tts.default_voice.clone());
    let speak = TtsRequest {
        text: request.text,
        voice_settings: request.voice_settings,
        pronunciation_dictionary_locators: request.pronunciation_dictionary_locators,
    }
    .speak(&caller, voice_id, state.settings.jobs.max_chars);
    let prepared = state.prepare_speech(speak).await?;
    let cost = character_cost(prepared.chars());
    let job = prepared.queue(&state).await?;
    Ok((StatusCode::ACCEPTED, cost, Json(JobCreated::from(&job))).into_response())
}

/// `GET /v1/tts/jobs/{job_id}` body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct JobView {
    job_id: String,
    status: JobStatus,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    completed_at: Option<String>,
    /// Fraction of the text synthesised so far (0–1).
    progress: f64,
    /// Seconds of audio, once succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_seconds: Option<f64>,
    /// Why a failed job failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// `GET /v1/tts/jobs/{job_id}`.
#[utoipa::path(get, path = "/v1/tts/jobs/{job_id}", operation_id = "getJob", tag = "speech", summary = "Read a job's status",
    params(("job_id" = String, Path, description = "The id from the 202 answer")),
    responses(
        (status = 200, description = "The job", body = JobView),
        (status = 404, description = "No such job for this key (or deleted after retention)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn job_status(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(job_id): ApiPath<String>,
) -> Result<Json<JobView>, ApiError> {
    let job = state.graph.jobs.get(&caller.key_id, &job_id).await?;
    Ok(Json(JobView {
        job_id: job.id,
        status: job.status,
        created_at: job.created_at,
        completed_at: job.completed_at,
        progress: (job.progress * 1000.0).round() / 1000.0,
        duration_seconds: job.audio_seconds.map(|s| (s * 1000.0).round() / 1000.0),
        error: job.error,
    }))
}

/// `GET /v1/tts/jobs/{job_id}/audio`: the WAV of a succeeded job, or its audio in `output_format`.
#[utoipa::path(get, path = "/v1/tts/jobs/{job_id}/audio", operation_id = "getJobAudio", tag = "speech", summary = "Download a job's audio",
    description = "The stored 16 kHz WAV (byte ranges served), or the audio encoded in `output_format` (whole).",
    params(("job_id" = String, Path, description = "The id from the 202 answer"), FormatQuery,
        ("Range" = Option<String>, Header, description = "One byte range, e.g. `bytes=0-1023` (RFC 9110); the WAV only")),
    responses(
        (status = 200, description = "16 kHz mono 16-bit WAV, or the format asked for", content(
            (crate::http::openapi::WavFile = "audio/wav"), (Vec<u8> = "audio/pcm"), (Vec<u8> = "audio/basic"),
            (Vec<u8> = "audio/x-alaw-basic"), (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/flac"),
        )),
        (status = 400, description = "A malformed query (a parameter given twice)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "An unknown output format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 206, description = "The byte range asked for with `Range`, overlapping ranges joined (Content-Range says which); with `If-Range`, only while it names this audio's `ETag`", content_type = "audio/wav", body = crate::http::openapi::WavFile),
        (status = 416, description = "No range asked for reaches into the file (`Content-Range: bytes */length`)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such job for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "Not finished yet (job_not_complete) or failed (job_failed)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 410, description = "The job succeeded but its audio is no longer stored (audio_gone); create the job again", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn job_audio(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(job_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<FormatQuery>,
    request: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let format = query.format()?;
    let wav = state.graph.jobs.audio(&caller.key_id, &job_id).await?;
    if format != OutputFormat::WAV_16K {
        let audio = crate::ops::encode::reencode_wav(&state, format, wav).await?;
        let disposition = format!("attachment; filename=\"{job_id}.{}\"", format.extension());
        return Ok((
            [
                (header::CONTENT_TYPE, format.media_type().to_string()),
                (header::CONTENT_DISPOSITION, disposition),
            ],
            audio,
        )
            .into_response());
    }
    let disposition = format!("attachment; filename=\"{job_id}.wav\"");
    crate::http::transport::download::send_file(
        wav,
        &request,
        &format!("\"{job_id}\""),
        [
            (header::CONTENT_TYPE, "audio/wav".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
    )
    .await
}
