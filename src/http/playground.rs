//! `GET /`: the browser playground, one self-contained page embedded in the binary (no CDN, no build step).

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

const PAGE: &str = include_str!("playground.html");

/// `GET /`.
#[utoipa::path(get, path = "/", tag = "operations", operation_id = "playground",
    summary = "The browser playground",
    description = "Try text-to-speech, recognition, the voice agent and cloning with an API key; works offline.",
    responses((status = 200, description = "An HTML page", content_type = "text/html", body = String)))]
pub async fn page() -> Response {
    (
        // The page runs only its own inline script and talks only to this server.
        [(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; media-src 'self' blob: data:; \
             connect-src 'self'",
        )],
        Html(PAGE),
    )
        .into_response()
}
