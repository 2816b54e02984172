//! `GET /healthz` (the process is alive), `GET /readyz` (actors up, database reachable) — no key needed — and
//! `GET /metrics` (Prometheus text; access per `metrics.access`).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::problem::ApiError;
use super::AppState;
use crate::problem::codes::ErrorCode;

/// Liveness.
#[utoipa::path(get, path = "/healthz", operation_id = "healthz", tag = "operations", summary = "Liveness",
    responses((status = 200, description = "The process is alive", body = Object, example = json!({"status": "ok"}))))]
pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Readiness.
#[utoipa::path(get, path = "/readyz", operation_id = "readyz", tag = "operations", summary = "Readiness",
    responses(
        (status = 200, description = "Every actor is up and the database answers; `storage` names the database engine (`sqlite` or `postgres`), `audio` where job audio is kept (`local` or `s3`); `rate_limits` says where the limits are counted (`local`, `shared`, or why the shared ones do not answer); `turns` how realtime sessions detect speech (`vad`: `silero` or `energy`) and whether Smart Turn judges the end of turns", body = Object),
        (status = 503, description = "An actor is restarting, or the database (SQLite or PostgreSQL) does not answer or cannot be read (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    if !state.graph.all_up() {
        return Err(ApiError::new(
            ErrorCode::NotReady,
            "an actor is starting or restarting",
        ));
    }
    let storage = &state.settings.storage;
    if let Some(why) = crate::storage::space::shortage(&storage.data_dir, storage.min_free_bytes) {
        return Err(ApiError::new(ErrorCode::NotReady, why).retry_after(10));
    }
    if !state.graph.jobs.ready().await {
        return Err(ApiError::new(
            ErrorCode::NotReady,
            "the database does not answer or cannot be read (the server log says why)",
        ));
    }
    // Limits that fall back (or refuse) while Redis is away do not make the replica unready: every replica
    // shares the same Redis, so taking one out of rotation would help nothing. The state is reported.
    Ok(Json(json!({
        "status": "ready",
        "actor_restarts": state.graph.restarts(),
        "storage": match crate::storage::postgres::is_postgres_url(&storage.url) {
            true => "postgres",
            false => "sqlite",
        },
        "audio": match storage.blobs_url.is_empty() {
            true => "local",
            false => "s3",
        },
        "rate_limits": state.limits.state().await,
        "turns": {
            "vad": state.turns.detector(),
            "smart_turn": state.turns.judges_turns(),
        },
    })))
}

/// `GET /metrics`: Prometheus text format.
#[utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "operations", summary = "Prometheus metrics",
    description = "Open, behind a key, or off (404), as `metrics.access` says.",
    responses(
        (status = 200, description = "Prometheus text exposition format", content_type = "text/plain", body = String),
        (status = 401, description = "A key is needed (metrics.access = key)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "Metrics are turned off", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn metrics(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    use crate::config::MetricsAccess as Access;
    use axum::response::IntoResponse as _;
    match state.settings.metrics.access {
        Access::Off => {
            return Err(ApiError::not_found(
                "metrics are turned off (metrics.access = \"off\")",
            ))
        }
        Access::Key => {
            let presented = super::transport::auth::presented_key(&headers);
            if presented.and_then(|k| state.keys.authenticate(k)).is_none() {
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
