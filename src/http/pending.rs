//! Endpoints whose components are not built yet (recognition, cloning): their actors answer 503 with what is
//! missing.

use axum::extract::State;
use axum::response::Response;

use super::problem::ApiError;
use super::AppState;

/// `POST /v1/speech-to-text/`.
pub async fn speech_to_text(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.graph.asr.ensure_available().await?;
    Err(ApiError::unavailable(
        "not_available",
        "speech recognition is not available",
        3600,
    ))
}

/// `POST /v1/voice-clone/`.
pub async fn voice_clone(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.graph.clone.ensure_available().await?;
    Err(ApiError::unavailable(
        "not_available",
        "voice cloning is not available",
        3600,
    ))
}
