//! The HTTP API (spec: shared/spec/swahili-speech-service.md). Handlers are thin: extract and validate, call one
//! actor handle, map the result. [`router`] is built apart from `main` so tests can drive it directly.

mod agent;
pub mod auth;
mod extract;
mod health;
pub mod limits;
mod pending;
pub mod problem;
mod speech;
mod synthesis_body;
mod voices;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};

use crate::actors::supervisor::Graph;
use crate::config::Settings;
use crate::tts::catalog::VoiceRegistry;
use auth::KeyRing;
use limits::{Guard, RateLimits};
use problem::ProblemBase;

/// Largest JSON body accepted.
const JSON_LIMIT: usize = 1024 * 1024;

/// What handlers share.
#[derive(Clone)]
pub struct AppState {
    /// The configuration the server started with.
    pub settings: Arc<Settings>,
    /// The voices.
    pub voices: Arc<VoiceRegistry>,
    /// Handles to the actors.
    pub graph: Graph,
}

/// The complete router: `/v1` behind authentication and rate limits, health probes open, problem+json for
/// every error.
pub fn router(state: AppState, keys: KeyRing, limits: Arc<RateLimits>) -> Router {
    let v1 = Router::new()
        .route("/text-to-speech/{voice_id}", post(speech::text_to_speech))
        .route("/tts/jobs", post(speech::create_job))
        .route("/tts/jobs/{job_id}", get(speech::job_status))
        .route("/tts/jobs/{job_id}/audio", get(speech::job_audio))
        .route("/voices", get(voices::list))
        .route("/voices/{voice_id}", get(voices::get))
        .route("/speech-to-text/", post(pending::speech_to_text))
        .route("/voice-clone/", post(pending::voice_clone))
        .route("/voice-agent/converse", post(agent::converse))
        .route("/voice-agent/converse/audio", post(agent::converse_audio))
        .fallback(|| async { problem::ApiError::not_found("no such endpoint under /v1") })
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            Guard { keys, limits },
            limits::guard,
        ));
    let base = ProblemBase(Arc::from(state.settings.server.public_base_url.as_str()));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .nest("/v1", v1)
        .fallback(|| async { problem::ApiError::not_found("no such resource") })
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            base,
            problem::render_problems,
        ))
        // Every response carries X-Request-Id: the caller's own (when given) or a new UUID.
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
}
