//! Any request body sent as `multipart/form-data`: reading the form, picking the audio part and decoding it
//! ends in a form or in a client error (400, 413, 415 or 422) — never a panic, a hang or a server error.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use libfuzzer_sys::fuzz_target;
use sauti::audio::{self, DecodeLimits};
use sauti::http::problem::ApiError;
use sauti::http::upload::{self, ApiMultipart};

mod contained;

/// Small so that the limit paths are reached by small inputs.
const AUDIO_LIMIT: usize = 64 * 1024;
const BOUNDARY: &str = "sauti-fuzz";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    })
}

async fn read(body: Vec<u8>) -> Result<(), ApiError> {
    let request = Request::builder()
        .method("POST")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(Body::from(body))
        .expect("request");
    upload::check_declared_length(request.headers(), AUDIO_LIMIT)?;
    let multipart = ApiMultipart::from_request(request, &()).await?;
    let mut form = upload::read_form(multipart, AUDIO_LIMIT, &["language", "name"]).await?;
    let part = upload::require_audio(&mut form)?;
    assert!(!part.bytes.is_empty() && part.bytes.len() <= AUDIO_LIMIT);
    let limits = DecodeLimits {
        max_duration: Duration::from_secs(30),
    };
    audio::load_16k(&part.bytes, &limits).map_err(|e| ApiError::unprocessable(e.to_string()))?;
    Ok(())
}

fuzz_target!(
    init: contained::install(),
    |body: &[u8]| {
    if let Err(error) = runtime().block_on(read(body.to_vec())) {
        assert!(
            [
                StatusCode::BAD_REQUEST,
                StatusCode::PAYLOAD_TOO_LARGE,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                StatusCode::UNPROCESSABLE_ENTITY,
            ]
            .contains(&error.status),
            "{} {}: {}",
            error.status,
            error.code,
            error.detail
        );
        assert!(!error.detail.is_empty());
    }
});
