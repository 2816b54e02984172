//! The edge of every request, in one middleware (one layer instead of four keeps the per-request cost low):
//!
//! - a request id: the caller's `X-Request-Id` when it sends one, else a new one; on every response;
//! - a tracing span carrying that id, so every log line written while the request is handled names it;
//! - metrics: the request counted by route template, method and status, and timed;
//! - problem+json bodies for every error response, naming the request's path and id.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;

use super::problem::{self, ProblemBase, REQUEST_ID};
use crate::telemetry::metrics::{method_label, Routes};

/// What the edge needs: the base of problem `type` URLs and the route templates metrics are counted under.
#[derive(Clone)]
pub struct Edge {
    /// `{public_base_url}` of problem `type` URLs.
    pub base: ProblemBase,
    /// The documented route templates.
    pub routes: Routes,
}

/// The middleware.
pub async fn edge(State(edge): State<Edge>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = match request.headers().get(REQUEST_ID) {
        Some(id) => id.clone(),
        None => {
            let id = new_request_id();
            request.headers_mut().insert(REQUEST_ID, id.clone());
            id
        }
    };
    // Kept by reference count (no copy) for the rare response that turns out to be an error.
    let uri = request.uri().clone();
    let method = method_label(request.method());
    let route = edge.routes.index_of(uri.path());
    let id_text = id.to_str().unwrap_or_default();
    let span = tracing::info_span!("request", request_id = %id_text);
    let response = next.run(request).instrument(span).await;
    let mut response = problem::render(response, &edge.base, uri.path(), Some(id_text));
    let status = response.status().as_u16();
    tracing::debug!(request_id = %id_text, method, path = uri.path(), status, elapsed_ms = started.elapsed().as_millis() as u64, "request finished");
    edge.routes
        .record(route, method, status, started.elapsed().as_secs_f64());
    response.headers_mut().insert(REQUEST_ID, id);
    response
}

/// A new request id, in UUID form: a random 64-bit value drawn once per process and a 64-bit count of the
/// requests it has seen, so ids never repeat within a process and collide across processes with negligible
/// odds.
pub fn new_request_id() -> HeaderValue {
    static PROCESS: OnceLock<u64> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let high = *PROCESS.get_or_init(rand::random);
    let low = COUNT.fetch_add(1, Ordering::Relaxed);
    let uuid = uuid::Uuid::from_u64_pair(high, low);
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let text = uuid.hyphenated().encode_lower(&mut text);
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("-"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_are_uuids_and_never_repeat() {
        let ids: std::collections::HashSet<String> = (0..1000)
            .map(|_| super::new_request_id().to_str().unwrap().to_string())
            .collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| uuid::Uuid::parse_str(id).is_ok()));
    }
}
