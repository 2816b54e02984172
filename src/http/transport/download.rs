//! Stored audio sent to clients as it is read from disk or the object store, never held whole in memory: a
//! job's WAV may be hundreds of megabytes. A `Range` is honoured as [`crate::http::transport::ranges`] reads it (206 with
//! `Content-Range`), so an interrupted download resumes where it stopped, and `If-Range` with the `ETag` sent
//! makes sure the resumed bytes are of the same file; a range beyond the end is 416. A client that stops
//! reading is dropped by the connection's write timeout (`server.write_timeout_seconds`).

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::http::transport::problem::ApiError;
use crate::http::transport::ranges::{requested, Requested};
use crate::problem::codes::ErrorCode;

/// Stored audio already opened (a local file then stays readable even if a deletion races the download),
/// answered whole or in the range asked for. `etag` is the file's strong entity tag, quoted: stored audio
/// never changes, so it names the file for as long as it is kept.
pub async fn send_file(
    file: crate::storage::Blob,
    request: &HeaderMap,
    etag: &str,
    headers: [(header::HeaderName, String); 2],
) -> Result<Response, ApiError> {
    let storage = |e: crate::storage::StorageError| {
        ApiError::new(
            ErrorCode::StorageUnavailable,
            format!("reading the file failed: {e}"),
        )
    };
    let length = file.len();
    let (status, start, end) = match requested(request, length, etag) {
        Requested::Whole => (StatusCode::OK, 0, length),
        Requested::Range(start, last) => (StatusCode::PARTIAL_CONTENT, start, last + 1),
        Requested::Unsatisfiable => {
            let mut refused = ApiError::range_not_satisfiable(format!(
                "the range asked for is outside the {length} bytes of this file"
            ))
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{length}")) {
                refused.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return Ok(refused);
        }
    };
    let body = Body::from_stream(file.range(start, end).await.map_err(storage)?);
    let mut response = (status, headers, body).into_response();
    let out = response.headers_mut();
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(end - start));
    if let Ok(value) = HeaderValue::from_str(etag) {
        out.insert(header::ETAG, value);
    }
    if status == StatusCode::PARTIAL_CONTENT {
        if let Ok(value) = HeaderValue::from_str(&format!("bytes {start}-{}/{length}", end - 1)) {
            out.insert(header::CONTENT_RANGE, value);
        }
    }
    Ok(response)
}
