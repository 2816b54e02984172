//! Every error the API returns, as `application/problem+json` (RFC 9457) with
//! `type` = `{public_base_url}/errors/<code>`, `title`, `status` and `detail`.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::actors::jobs::JobsError;
use crate::actors::tts::SynthesisError;
use crate::actors::ActorError;
use crate::tts::TtsError;

use super::codes::{self, ErrorCode};

/// A problem to report; rendered into a body by [`render_problems`], which knows the public base URL.
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = self.status().into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response.extensions_mut().insert(self);
        response
    }
}

#[derive(Serialize)]
struct ProblemBody<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'static str,
    status: u16,
    detail: &'a str,
    /// The path of the request that failed.
    instance: &'a str,
    /// The request id (also in the `X-Request-Id` header and the logs).
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
    /// On the OpenAI-compatible paths, the same refusal as OpenAI clients read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<OpenAiError<'a>>,
}

/// `{"error": {...}}` as OpenAI's SDKs read it, so their exceptions carry the detail.
#[derive(Serialize)]
struct OpenAiError<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    param: Option<&'a str>,
    code: &'static str,
}

/// Whether `path` is one of the OpenAI-compatible paths (`/v1/audio/…`, `/v1/models`).
pub fn is_openai_path(path: &str) -> bool {
    path.starts_with("/v1/audio/") || path == "/v1/models" || path.starts_with("/v1/models/")
}

/// The request id header.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The public base URL that problem `type` URLs are built from.
#[derive(Clone)]
pub struct ProblemBase(pub std::sync::Arc<str>);

/// Give an error response a problem+json body — ours, and the router's own (404, 405, 413) — naming the
/// request's path and id. Other responses pass unchanged.
pub fn render(
    mut response: Response,
    base: &ProblemBase,
    instance: &str,
    request_id: Option<&str>,
) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if is_problem {
        return response;
    }
    let problem = response
        .extensions_mut()
        .remove::<ApiError>()
        .unwrap_or_else(|| {
            let detail = match status.as_u16() {
                404 => {
                    "no such resource; see the API reference for the available paths".to_string()
                }
                405 => "this path does not accept this method".to_string(),
                413 => "the request body is larger than this endpoint accepts".to_string(),
                _ => codes::title(status).to_string(),
            };
            ApiError::new(ErrorCode::for_status(status), detail)
        });
    let body = ProblemBody {
        kind: format!("{}/errors/{}", base.0, problem.code.as_str()),
        title: codes::title(status),
        status: status.as_u16(),
        detail: &problem.detail,
        instance,
        request_id,
        error: is_openai_path(instance).then(|| OpenAiError {
            message: &problem.detail,
            kind: match status.as_u16() {
                401 => "authentication_error",
                429 => "rate_limit_error",
                500..=599 => "server_error",
                _ => "invalid_request_error",
            },
            param: None,
            code: problem.code.as_str(),
        }),
    };
    let (mut parts, _) = response.into_parts();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    let json = serde_json::to_vec(&body).unwrap_or_default();
    Response::from_parts(parts, axum::body::Body::from(json))
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::JsonDataError(e) => ApiError::unprocessable(e.body_text()),
            JsonRejection::JsonSyntaxError(e) => ApiError::bad_request(e.body_text()),
            JsonRejection::MissingJsonContentType(_) => ApiError::unsupported_media_type(
                "send the body as JSON with Content-Type: application/json",
            ),
            JsonRejection::BytesRejection(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::too_large("the JSON body is larger than 1 MB")
            }
            JsonRejection::BytesRejection(e) if stalled(&e) => ApiError::body_timeout(),
            other => ApiError::bad_request(other.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::bad_request(rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::bad_request(rejection.body_text())
    }
}

impl From<ActorError> for ApiError {
    fn from(error: ActorError) -> Self {
        let detail = error.to_string();
        match error {
            ActorError::NotAvailable(_) => ApiError::new(ErrorCode::NotAvailable, detail),
            ActorError::Busy { retry_after, .. } => {
                ApiError::new(ErrorCode::ServerBusy, detail).retry_after(retry_after)
            }
            ActorError::Faulted(_) => ApiError::new(ErrorCode::InternalError, detail),
            ActorError::Restarting(_) | ActorError::Crashed(_) | ActorError::Timeout(_) => {
                ApiError::new(ErrorCode::ServiceUnavailable, detail)
            }
        }
    }
}

impl From<TtsError> for ApiError {
    fn from(error: TtsError) -> Self {
        let detail = error.to_string();
        match error {
            TtsError::EmptyText
            | TtsError::NothingToSay
            | TtsError::SettingOutOfRange { .. }
            | TtsError::ReadsTooLong(_) => ApiError::unprocessable(detail),
            TtsError::Engine(_) => ApiError::new(ErrorCode::SynthesisFailed, detail),
        }
    }
}

impl From<SynthesisError> for ApiError {
    fn from(error: SynthesisError) -> Self {
        let detail = error.to_string();
        match error {
            SynthesisError::Invalid(invalid) => invalid.into(),
            SynthesisError::UnknownVoice(_) => ApiError::not_found(detail),
            SynthesisError::Untimed(_) => ApiError::unprocessable(detail),
            SynthesisError::InactiveVoice { .. } => ApiError::new(ErrorCode::VoiceInactive, detail),
            SynthesisError::Engine(_) => ApiError::new(ErrorCode::SynthesisFailed, detail),
            SynthesisError::Actor(actor) => actor.into(),
        }
    }
}

impl From<JobsError> for ApiError {
    fn from(error: JobsError) -> Self {
        let detail = error.to_string();
        match error {
            JobsError::NotFound(_) => ApiError::not_found(detail),
            JobsError::NotReady { .. } => ApiError::new(ErrorCode::JobNotComplete, detail),
            JobsError::Failed { .. } => ApiError::new(ErrorCode::JobFailed, detail),
            JobsError::AudioGone(_) => ApiError::new(ErrorCode::AudioGone, detail),
            JobsError::TooMany(_) => ApiError::rate_limited(detail, 30),
            JobsError::UnknownVoice(_) => ApiError::not_found(format!("`voice_id`: {detail}")),
            JobsError::Storage(_) => ApiError::new(ErrorCode::StorageUnavailable, detail),
            JobsError::NoSpace(_) => ApiError::insufficient_storage(detail),
            JobsError::Actor(actor) => actor.into(),
        }
    }
}

/// Whether an error (or one of its causes) is a request body that stopped sending.
pub fn stalled(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = error.source();
    }
    false
}
