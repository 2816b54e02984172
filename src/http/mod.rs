//! The HTTP API (spec: docs/swahili-speech-service.md, a copy of the contract; "spec §N" in comments is its
//! section N), in three layers: [`transport`] (listening, the edge, keys and rate limits, CORS, bodies and
//! uploads, problem+json), [`native`] (the `/v1` API and its realtime sockets) and [`compat`] (the ElevenLabs
//! and OpenAI dialects). A handler translates: its request into one operation of [`crate::ops`], the result
//! into its answer. [`front`] is built apart from `main` so tests can drive it directly.

pub mod compat;
mod health;
pub mod native;
pub mod openapi;
mod playground;
pub mod transport;

pub use crate::problem::codes;
use compat::{elevenlabs, openai};
use native::{
    agent, cloning, dictionaries, realtime, recognition, speech, speech_stream, usage, voices,
    webhook,
};
use transport::{cors, edge, problem};

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::telemetry::metrics::Routes;
use problem::ProblemBase;
use transport::auth::KeyRing;
use transport::limits::{Guard, RateLimits};

/// Largest JSON body accepted.
pub(crate) const JSON_LIMIT: usize = 1024 * 1024;

/// What handlers share, behind one reference count: axum clones the state for every request and every
/// extractor, and one count is cheaper to move than one per handle.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// The state handlers see.
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AsRef<crate::ops::Service> for AppState {
    fn as_ref(&self) -> &crate::ops::Service {
        &self.0.ops
    }
}

/// The contents of [`AppState`]: the operations every protocol shares (reached through `Deref`), and what
/// only the HTTP front needs.
pub struct Shared {
    /// The operations layer.
    pub ops: crate::ops::Service,
    /// The API keys (for `/metrics` behind a key, and the realtime tokens).
    pub keys: KeyRing,
    /// The rate limits (for `/readyz` to report where they are counted, and the realtime seats of a key
    /// across replicas).
    pub limits: Arc<RateLimits>,
}

impl std::ops::Deref for Shared {
    type Target = crate::ops::Service;

    fn deref(&self) -> &crate::ops::Service {
        &self.ops
    }
}

/// Every documented route: `/v1` (authenticated by the front) and the open operational routes.
fn documented() -> (OpenApiRouter<AppState>, OpenApiRouter<AppState>) {
    // Audio uploads count their own bytes as they stream (`upload`), against `asr.max_upload_bytes`.
    // The spec writes the two upload paths with a trailing slash; without it they are the same endpoints.
    let uploads = OpenApiRouter::new()
        .route("/v1/speech-to-text", post(recognition::speech_to_text)) // alias:
        .route("/v1/voice-clone", post(cloning::clone_voice)) // alias:
        .routes(routes!(recognition::speech_to_text))
        .routes(routes!(agent::converse_audio))
        .routes(routes!(cloning::clone_voice))
        .routes(routes!(dictionaries::add_from_file))
        .routes(routes!(openai::transcription::create))
        .routes(routes!(openai::transcription::translate))
        .routes(routes!(elevenlabs::recognition::convert))
        .routes(routes!(elevenlabs::voices::add))
        .layer(DefaultBodyLimit::disable());
    let v1 = OpenApiRouter::new()
        .routes(routes!(speech::text_to_speech))
        .routes(routes!(speech_stream::stream))
        .routes(routes!(speech_stream::with_timestamps))
        .routes(routes!(speech::create_job))
        .routes(routes!(speech::job_status))
        .routes(routes!(speech::job_audio))
        .routes(routes!(voices::list))
        .routes(routes!(voices::get, cloning::delete_voice))
        .routes(routes!(agent::converse))
        .routes(routes!(realtime::converse))
        .routes(routes!(realtime::phone))
        .routes(routes!(realtime::token))
        .routes(routes!(webhook::get, webhook::set, webhook::delete))
        .routes(routes!(dictionaries::list, dictionaries::create))
        .routes(routes!(dictionaries::add_from_rules))
        .routes(routes!(dictionaries::get, dictionaries::delete))
        .routes(routes!(dictionaries::download))
        .routes(routes!(openai::speech::create))
        .routes(routes!(openai::list))
        .routes(routes!(openai::get))
        .routes(routes!(elevenlabs::speech::convert))
        .routes(routes!(elevenlabs::speech::stream))
        .routes(routes!(elevenlabs::timestamps::convert))
        .routes(routes!(elevenlabs::timestamps::stream))
        .routes(routes!(elevenlabs::voices::all))
        .routes(routes!(elevenlabs::voices::search))
        .routes(routes!(elevenlabs::voices::get, elevenlabs::voices::delete))
        .routes(routes!(elevenlabs::models))
        .routes(routes!(elevenlabs::conversations::native::list))
        .routes(routes!(
            elevenlabs::conversations::native::get,
            elevenlabs::conversations::native::delete
        ))
        .routes(routes!(elevenlabs::conversations::native::audio))
        .routes(routes!(elevenlabs::conversations::compat::list))
        .routes(routes!(
            elevenlabs::conversations::compat::get,
            elevenlabs::conversations::compat::delete
        ))
        .routes(routes!(elevenlabs::conversations::compat::audio))
        .routes(routes!(openai::realtime::transcription))
        .routes(routes!(usage::usage))
        .routes(routes!(usage::subscription))
        .routes(routes!(usage::elevenlabs_subscription))
        .routes(routes!(elevenlabs::socket::stream_input))
        .routes(routes!(elevenlabs::socket::multi_stream_input))
        .routes(routes!(elevenlabs::socket::stream_input_v1))
        .routes(routes!(elevenlabs::socket::multi_stream_input_v1))
        .merge(uploads);
    let open = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(health::metrics))
        .routes(routes!(openapi::openapi_json))
        .routes(routes!(playground::page));
    (v1, open)
}

/// The OpenAPI 3.1 document of this API, as served at `GET /openapi.json`.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    let (v1, open) = documented();
    let (_, api) = open.merge(v1).split_for_parts();
    openapi::finish(api)
}

/// The complete service: `/v1` behind authentication and rate limits, health probes and the API document open,
/// problem+json for every error.
pub fn front(state: AppState, keys: KeyRing, limits: Arc<RateLimits>) -> edge::Front {
    let (v1, open) = documented();
    let body_timeout = std::time::Duration::from_secs(state.settings.server.body_timeout_seconds);
    let base = ProblemBase(Arc::from(state.settings.server.public_base_url.as_str()));
    let cors = cors::Cors::from_settings(&state.settings.server.cors_origins);
    let (router, api) = open.merge(v1).split_for_parts();
    let api = openapi::finish(api);
    let router = router
        .fallback(|uri: axum::http::Uri| async move {
            let path = uri.path();
            match edge::authenticated(path) {
                true if path.starts_with("/elevenlabs") => problem::ApiError::not_found(
                    "no such endpoint in the ElevenLabs-compatible API under /elevenlabs",
                ),
                true => problem::ApiError::not_found("no such endpoint under /v1"),
                false => problem::ApiError::not_found("no such resource"),
            }
        })
        .with_state(state);
    edge::Front::new(edge::Parts {
        router,
        base,
        routes: Routes::new(api.paths.paths.keys().cloned()),
        guard: Guard { keys, limits },
        body_timeout,
        cors,
    })
}
