//! Endpoints whose components are not built yet (cloning): their actors answer 503 with what is missing.

use axum::extract::State;
use axum::response::Response;

use super::problem::ApiError;
use super::AppState;

/// `POST /v1/voice-clone/`.
#[utoipa::path(post, path = "/voice-clone/", operation_id = "cloneVoice", tag = "cloning", summary = "Clone a voice from a clip",
    request_body(content = crate::http::openapi::VoiceCloneForm, content_type = "multipart/form-data"),
    responses((status = 503, description = "Voice cloning is not available on this server (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem)))]
pub async fn voice_clone(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.graph.clone.ensure_available().await?;
    Err(ApiError::unavailable(
        "not_available",
        "voice cloning is not available",
        3600,
    ))
}
