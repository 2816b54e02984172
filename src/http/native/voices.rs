//! `GET /v1/voices` and `GET /v1/voices/{voice_id}`.

use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::{ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::tts::catalog::VoiceInfo;

/// Query of the voice list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VoiceFilter {
    /// ISO 639-1 code, e.g. `sw`.
    pub language: Option<String>,
}

/// Body of the voice list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct VoiceList {
    voices: Vec<VoiceInfo>,
}

/// `GET /v1/voices[?language=sw]`: the server's voices, then the caller's cloned voices.
#[utoipa::path(get, path = "/v1/voices", operation_id = "listVoices", tag = "voices", summary = "List voices", params(VoiceFilter),
    responses((status = 200, description = "The voices", body = VoiceList)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(filter): ApiQuery<VoiceFilter>,
) -> Response {
    state.refresh_voices_of(&caller.key_id).await;
    let body = state
        .voices
        .list_json_for(&caller.key_id, filter.language.as_deref());
    // Built directly: `(headers, bytes)` would set a content type and then replace it.
    let mut response = Response::new(axum::body::Body::from(body));
    let json = header::HeaderValue::from_static("application/json");
    response.headers_mut().insert(header::CONTENT_TYPE, json);
    response
}

/// `GET /v1/voices/{voice_id}`.
#[utoipa::path(get, path = "/v1/voices/{voice_id}", operation_id = "getVoice", tag = "voices", summary = "One voice",
    params(("voice_id" = String, Path, description = "The voice id", example = "zuri")),
    responses(
        (status = 200, description = "The voice", body = VoiceInfo),
        (status = 404, description = "No such voice (another key's cloned voice included)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
) -> Result<Json<VoiceInfo>, ApiError> {
    state.has_voice(&caller.key_id, &voice_id).await;
    state
        .voices
        .get_for(&caller.key_id, &voice_id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("voice {voice_id:?} not found")))
}
