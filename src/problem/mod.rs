//! The product's refusals, whatever protocol carries them: an [`ApiError`] is a code from the vocabulary in
//! [`codes`] (status, title, whether retrying helps) and a detail. The operations layer and the actors' errors
//! speak it; each protocol adapter renders it its own way (problem+json in `http::problem`, a close frame or an
//! error event on a socket).

pub mod codes;
mod from;

use axum::http::StatusCode;

use codes::ErrorCode;

/// A problem to report; rendered by each protocol (problem+json in `http::transport::problem`).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// What kind of refusal: status, title and whether retrying helps come from it.
    pub code: ErrorCode,
    /// Human-readable explanation of this occurrence.
    pub detail: String,
    /// Seconds for the `Retry-After` header; only ever set for codes where retrying can help.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A refusal with its code's default `Retry-After` (none when retrying cannot help).
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
            retry_after: code.retry_after(),
        }
    }

    /// Another `Retry-After` than the code's default (ignored for codes where retrying cannot help).
    pub fn retry_after(mut self, seconds: u64) -> Self {
        if self.code.retryable() {
            self.retry_after = Some(seconds);
        }
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// 400
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, detail)
    }
    /// 401
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, detail)
    }
    /// 404
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, detail)
    }
    /// 408: the body stalled.
    pub fn body_timeout() -> Self {
        Self::new(
            ErrorCode::RequestTimeout,
            "the request body stalled: no data arrived within the server's body timeout",
        )
    }
    /// 413
    pub fn too_large(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::PayloadTooLarge, detail)
    }
    /// 415
    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::UnsupportedMediaType, detail)
    }
    /// 416, for a `Range` outside the file.
    pub fn range_not_satisfiable(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::RangeNotSatisfiable, detail)
    }
    /// 422
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::UnprocessableContent, detail)
    }
    /// 429
    pub fn rate_limited(detail: impl Into<String>, retry_after: u64) -> Self {
        Self::new(ErrorCode::RateLimitExceeded, detail).retry_after(retry_after)
    }
    /// 507: the service's disk is full; the request may succeed once an operator frees space.
    pub fn insufficient_storage(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::InsufficientStorage, detail)
    }
}
