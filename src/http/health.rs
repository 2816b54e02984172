//! `GET /healthz` (the process is alive), `GET /readyz` (actors up, database reachable) — no key needed — and
//! `GET /metrics` (Prometheus text; access per `metrics.access`).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::problem::ApiError;
use super::AppState;

/// Liveness.
pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Readiness.
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    if !state.graph.all_up() {
        return Err(ApiError::unavailable(
            "not_ready",
            "an actor is starting or restarting",
            1,
        ));
    }
    if !state.graph.jobs.ready().await {
        return Err(ApiError::unavailable(
            "not_ready",
            "the database is not reachable",
            1,
        ));
    }
    Ok(Json(
        json!({ "status": "ready", "actor_restarts": state.graph.restarts() }),
    ))
}

/// Who may read `/metrics`, and the keys to check when a key is needed.
#[derive(Clone)]
pub struct MetricsAccess {
    /// The configured access.
    pub access: crate::config::MetricsAccess,
    /// The API keys.
    pub keys: super::auth::KeyRing,
}

/// `GET /metrics`: Prometheus text format.
pub async fn metrics(
    State(scrape): State<MetricsAccess>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    use crate::config::MetricsAccess as Access;
    use axum::response::IntoResponse as _;
    match scrape.access {
        Access::Off => {
            return Err(ApiError::not_found(
                "metrics are turned off (metrics.access = \"off\")",
            ))
        }
        Access::Key => {
            let presented = headers.get("xi-api-key").and_then(|v| v.to_str().ok());
            if presented
                .and_then(|k| scrape.keys.authenticate(k))
                .is_none()
            {
                return Err(ApiError::unauthorized(
                    "metrics need a valid API key in the xi-api-key header",
                ));
            }
        }
        Access::Open => {}
    }
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::telemetry::metrics::render(),
    )
        .into_response())
}
