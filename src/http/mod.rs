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
use crate::telemetry::metrics::{self, Routes};
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
    let keys_for_metrics = keys.clone();
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
    let scrape = health::MetricsAccess {
        access: state.settings.metrics.access,
        keys: keys_for_metrics,
    };
    let routes = Routes(Arc::new(ROUTES.iter().map(|r| r.to_string()).collect()));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics).with_state(scrape))
        .nest("/v1", v1)
        .fallback(|| async { problem::ApiError::not_found("no such resource") })
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            base,
            problem::render_problems,
        ))
        .layer(axum::middleware::from_fn_with_state(routes, metrics::track))
        .layer(axum::middleware::from_fn(request_span))
        // Every response carries X-Request-Id: the caller's own (when given) or a new UUID.
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
}

/// Every route template, for metrics labels (and checked against the OpenAPI document).
pub const ROUTES: &[&str] = &[
    "/healthz",
    "/readyz",
    "/metrics",
    "/v1/text-to-speech/{voice_id}",
    "/v1/tts/jobs",
    "/v1/tts/jobs/{job_id}",
    "/v1/tts/jobs/{job_id}/audio",
    "/v1/voices",
    "/v1/voices/{voice_id}",
    "/v1/speech-to-text/",
    "/v1/voice-clone/",
    "/v1/voice-agent/converse",
    "/v1/voice-agent/converse/audio",
];

/// Middleware: every log line of a request carries its id, method and path.
async fn request_span(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use tracing::Instrument as _;
    let id = request
        .headers()
        .get(problem::REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let span = tracing::info_span!("request", request_id = %id, method = %request.method(), path = %request.uri().path());
    let started = std::time::Instant::now();
    async move {
        let response = next.run(request).await;
        tracing::debug!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "request finished"
        );
        response
    }
    .instrument(span)
    .await
}
