//! Stored audio sent to clients as it is read from disk or the object store, never held whole in memory: a
//! job's WAV may be hundreds of megabytes. A single `Range` is honoured (206 with `Content-Range`), so an interrupted download resumes where
//! it stopped; several ranges get the whole file (which the HTTP standard allows), and a range beyond the end is
//! 416. A client that stops reading is dropped by the connection's write timeout (`server.write_timeout_seconds`).

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::codes::ErrorCode;
use super::problem::ApiError;

/// Stored audio already opened (a local file then stays readable even if a deletion races the download),
/// answered whole or in the one range asked for.
pub async fn send_file(
    file: crate::storage::Blob,
    request: &HeaderMap,
    headers: [(header::HeaderName, String); 2],
) -> Result<Response, ApiError> {
    let storage = |e: crate::storage::StorageError| {
        ApiError::new(
            ErrorCode::StorageUnavailable,
            format!("reading the file failed: {e}"),
        )
    };
    let length = file.len();
    let (status, start, end) = match requested_range(request, length) {
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
    if status == StatusCode::PARTIAL_CONTENT {
        if let Ok(value) = HeaderValue::from_str(&format!("bytes {start}-{}/{length}", end - 1)) {
            out.insert(header::CONTENT_RANGE, value);
        }
    }
    Ok(response)
}

enum Requested {
    Whole,
    /// First and last byte, inclusive.
    Range(u64, u64),
    Unsatisfiable,
}

fn requested_range(request: &HeaderMap, length: u64) -> Requested {
    let Some(value) = request.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Requested::Whole;
    };
    // A Range that is not well-formed is ignored, as the HTTP standard says.
    let Ok(parsed) = http_range_header::parse_range_header(value) else {
        return Requested::Whole;
    };
    match parsed.validate(length) {
        Ok(ranges) if ranges.len() == 1 && length > 0 => {
            let range = &ranges[0];
            if range.start() > range.end() || *range.start() >= length {
                Requested::Unsatisfiable
            } else {
                Requested::Range(*range.start(), *range.end())
            }
        }
        Ok(ranges) if ranges.len() > 1 => Requested::Whole,
        _ => Requested::Unsatisfiable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(range: &str, length: u64) -> Option<(u64, u64)> {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, HeaderValue::from_str(range).unwrap());
        match requested_range(&headers, length) {
            Requested::Whole => None,
            Requested::Range(a, b) => Some((a, b)),
            Requested::Unsatisfiable => Some((u64::MAX, u64::MAX)),
        }
    }

    #[test]
    fn ranges_are_read_as_the_standard_says() {
        assert_eq!(asked("bytes=0-99", 1000), Some((0, 99)));
        assert_eq!(asked("bytes=900-", 1000), Some((900, 999)));
        assert_eq!(asked("bytes=-100", 1000), Some((900, 999)));
        assert_eq!(asked("bytes=990-2000", 1000), Some((990, 999)));
        assert_eq!(asked("bytes=1000-", 1000), Some((u64::MAX, u64::MAX)));
        assert_eq!(asked("bytes=0-1,5-9", 1000), None);
        assert_eq!(asked("lines=1-2", 1000), None);
        assert_eq!(asked("bytes=abc", 1000), None);
    }
}
