//! The upload path of the speech-to-text and cloning endpoints, driven without a server: a body read as a
//! multipart form, its audio part taken and decoded to 16 kHz. Shared by the property tests
//! (`tests/engines/audio_properties.rs`) and the `upload_form` fuzz target, which both include this file by path.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use sauti::audio::{self, DecodeLimits};
use sauti::http::transport::problem::ApiError;
use sauti::http::transport::upload::{self, ApiMultipart};

/// What a body that does not give audio may be answered: client errors only.
pub const CLIENT_ERRORS: [StatusCode; 4] = [
    StatusCode::BAD_REQUEST,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::UNSUPPORTED_MEDIA_TYPE,
    StatusCode::UNPROCESSABLE_ENTITY,
];

/// Read `body` as `multipart/form-data` with `boundary`, take its audio part (at most `audio_limit` bytes) and
/// decode it (30 s cap): the number of 16 kHz samples, or the problem the service would answer.
pub async fn read_upload(
    body: Vec<u8>,
    boundary: &str,
    audio_limit: usize,
) -> Result<usize, ApiError> {
    let request = Request::builder()
        .method("POST")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .expect("request");
    upload::check_declared_length(request.headers(), audio_limit)?;
    let multipart = ApiMultipart::from_request(request, &()).await?;
    let mut form = upload::read_form(multipart, audio_limit, &["language", "name"]).await?;
    let part = upload::require_audio(&mut form)?;
    assert!(!part.bytes.is_empty() && part.bytes.len() <= audio_limit);
    let limits = DecodeLimits {
        max_duration: Duration::from_secs(30),
    };
    let audio = audio::load_16k(&part.bytes, &limits)
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    Ok(audio.samples.len())
}

/// An outcome of [`read_upload`] is audio, or a client error with a detail.
pub fn assert_audio_or_client_error(outcome: &Result<usize, ApiError>) {
    if let Err(error) = outcome {
        assert!(
            CLIENT_ERRORS.contains(&error.status()),
            "{} {}: {}",
            error.status(),
            error.code,
            error.detail
        );
        assert!(!error.detail.is_empty());
    }
}
