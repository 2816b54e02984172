//! `GET /healthz` (the process is alive) and `GET /readyz` (actors up, database reachable). No key needed.

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
