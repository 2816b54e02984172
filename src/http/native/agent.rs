//! `POST /v1/voice-agent/converse` (text mode) and `/converse/audio` (audio mode: recognition first).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::actors::agent::{AgentRequest, AgentTurn, Timings};
use crate::http::native::formats::FormatQuery;
use crate::http::transport::auth::Caller;
use crate::http::transport::extract::{ApiJson, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::ops::converse::Converse;

/// Body of `POST /v1/voice-agent/converse`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ConverseRequest {
    /// The user's message in Swahili: 1 to 1,000 characters.
    #[schema(
        example = "Nataka kutuma pesa",
        min_length = 1,
        max_length = 1000,
        pattern = r"\S"
    )]
    pub text: String,
    /// `general`, `banking` or `health`. Default: the session's own scenario when `session_id` is given, else `general`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "banking", pattern = "^(general|banking|health)$")]
    pub scenario: Option<String>,
    /// Voice of the reply (default: the agent voice).
    #[serde(default)]
    pub voice_id: Option<String>,
    /// A conversation to continue.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Up to 3 pronunciation dictionaries of this key the reply is read with, in order.
    #[serde(default)]
    #[schema(max_items = 3)]
    pub pronunciation_dictionary_locators: Vec<crate::dictionaries::Locator>,
}

/// The spec §2.7 agent turn result, with the session, timings and request id.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ConverseResponse {
    user_text: String,
    agent_text: String,
    audio_base64: String,
    content_type: &'static str,
    scenario: String,
    voice_id: String,
    session_id: String,
    duration_seconds: f64,
    timings_ms: Timings,
    request_id: String,
}

/// `POST /v1/voice-agent/converse`.
#[utoipa::path(post, path = "/v1/voice-agent/converse", operation_id = "converse", tag = "agent", summary = "One text turn with the voice agent",
    description = "The reply's audio is a 16 kHz WAV unless `output_format` names another (its media type in `content_type`).",
    params(FormatQuery),
    request_body = ConverseRequest,
    responses(
        (status = 200, description = "The reply, spoken", body = ConverseResponse),
        (status = 404, description = "No such voice or pronunciation dictionary, or no such session for this key (expired or never started)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "The session belongs to another scenario", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, an unknown scenario or an unknown output format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "The dialogue backend failed and no fallback is configured, synthesis is busy (Retry-After), or the shared database keeping conversations does not answer (`storage_unavailable`)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn converse(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<FormatQuery>,
    ApiJson(request): ApiJson<ConverseRequest>,
) -> Result<Json<ConverseResponse>, ApiError> {
    let turn = Converse {
        owner: caller.key_id.to_string(),
        scenario: request.scenario,
        voice_id: request.voice_id,
        session_id: request.session_id,
        locators: request.pronunciation_dictionary_locators,
        format: query.format()?,
    };
    let (request, answer) = state.converse_text(turn, request.text).await?;
    Ok(Json(respond(request, answer)))
}

fn respond(request: AgentRequest, turn: AgentTurn) -> ConverseResponse {
    let request_id = crate::telemetry::request_scope::current().unwrap_or_default();
    tracing::info!(scenario = request.scenario, voice_id = request.voice_id, outcome = turn.outcome, actions = ?turn.actions, total_ms = turn.timings.total, "agent turn");
    ConverseResponse {
        user_text: turn.user_text,
        agent_text: turn.agent_text,
        audio_base64: turn.audio_base64,
        content_type: request.format.media_type(),
        scenario: turn.scenario,
        voice_id: request.voice_id,
        session_id: turn.session_id,
        duration_seconds: (turn.duration_seconds * 1000.0).round() / 1000.0,
        timings_ms: turn.timings,
        request_id,
    }
}

/// `POST /v1/voice-agent/converse/audio`: recognition, dialogue and synthesis in one turn.
#[utoipa::path(post, path = "/v1/voice-agent/converse/audio", operation_id = "converseAudio", tag = "agent", summary = "One spoken turn with the voice agent",
    description = "The reply's audio is a 16 kHz WAV unless `output_format` names another (its media type in `content_type`).",
    params(FormatQuery),
    request_body(content = crate::http::openapi::ConverseAudioForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The reply, spoken; `user_text` is the transcript and `timings_ms.asr` the recognition time", body = ConverseResponse),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice or pronunciation dictionary, or no such session for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "The session belongs to another scenario", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 25 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `audio` part, undecodable audio, no speech recognised in it, an unknown scenario or an unknown output format", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed (the detail names the one to fetch), a stage is busy (Retry-After), or the shared database keeping conversations does not answer (`storage_unavailable`)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn converse_audio(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<FormatQuery>,
    multipart: ApiMultipart,
) -> Result<Json<ConverseResponse>, ApiError> {
    let format = query.format()?;
    let limit = state.settings.asr.max_upload_bytes;
    upload::check_declared_length(&headers, limit)?;
    let fields = [
        "scenario",
        "voice_id",
        "session_id",
        "pronunciation_dictionary_locators",
    ];
    let mut form = upload::read_form(multipart, limit, &fields).await?;
    let locators = match form.field("pronunciation_dictionary_locators") {
        None => Vec::new(),
        Some(json) => serde_json::from_str(json).map_err(|e| {
            ApiError::unprocessable(format!(
                "`pronunciation_dictionary_locators` is not a JSON array of locators: {e}"
            ))
        })?,
    };
    let field = |name: &str| form.field(name).map(str::to_string);
    let turn = Converse {
        owner: caller.key_id.to_string(),
        scenario: field("scenario"),
        voice_id: field("voice_id"),
        session_id: field("session_id"),
        locators,
        format,
    };
    let audio = upload::require_audio(&mut form).map(|file| file.bytes);
    let (request, answer) = state.converse_audio(turn, audio).await?;
    Ok(Json(respond(request, answer)))
}
