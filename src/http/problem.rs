//! Every error the API returns, as `application/problem+json` (RFC 9457) with
//! `type` = `{public_base_url}/errors/<code>`, `title`, `status` and `detail`.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::actors::jobs::JobsError;
use crate::actors::tts::SynthesisError;
use crate::actors::ActorError;
use crate::tts::TtsError;

/// A problem to report; rendered into a body by [`render_problems`], which knows the public base URL.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable code, the last segment of `type`.
    pub code: &'static str,
    /// Human-readable explanation of this occurrence.
    pub detail: String,
    /// Seconds for the `Retry-After` header (429 and 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
            retry_after: None,
        }
    }

    /// 400
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }
    /// 401
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
    }
    /// 404
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }
    /// 408: the body stalled.
    pub fn body_timeout() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request body stalled: no data arrived within the server's body timeout",
        )
    }
    /// 409
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }
    /// 410: the resource existed and never will again; retrying cannot help.
    pub fn gone(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::GONE, code, detail)
    }
    /// 416, for a `Range` outside the file.
    pub fn range_not_satisfiable(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "range_not_satisfiable",
            detail,
        )
    }
    /// 507: the service's disk is full; the request may succeed once an operator frees space.
    pub fn insufficient_storage(detail: impl Into<String>) -> Self {
        Self {
            retry_after: Some(60),
            ..Self::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "insufficient_storage",
                detail,
            )
        }
    }
    /// 413
    pub fn too_large(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", detail)
    }
    /// 415
    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            detail,
        )
    }
    /// 422
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unprocessable_content",
            detail,
        )
    }
    /// 429
    pub fn rate_limited(detail: impl Into<String>, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded", detail)
        }
    }
    /// 503
    pub fn unavailable(code: &'static str, detail: impl Into<String>, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, code, detail)
        }
    }
}

/// The short title of a status, as the spec words them.
fn title(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        416 => "Range Not Satisfiable",
        507 => "Insufficient Storage",
        408 => "Request Timeout",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Rate Limit Exceeded",
        503 => "Service Unavailable",
        _ => status.canonical_reason().unwrap_or("Error"),
    }
}

/// The code for statuses produced outside our handlers (routing, body limits).
fn default_code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        401 => "unauthorized",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "request_timeout",
        413 => "payload_too_large",
        415 => "unsupported_media_type",
        422 => "unprocessable_content",
        429 => "rate_limit_exceeded",
        503 => "service_unavailable",
        _ => "internal_error",
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = self.status.into_response();
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
}

/// The request id header.
pub const REQUEST_ID: &str = "x-request-id";

/// The public base URL that problem `type` URLs are built from.
#[derive(Clone)]
pub struct ProblemBase(pub std::sync::Arc<str>);

/// Middleware: give every error response a problem+json body — ours, and the router's own (404, 405, 413).
pub async fn render_problems(
    State(base): State<ProblemBase>,
    request: Request,
    next: Next,
) -> Response {
    let instance = request.uri().path().to_string();
    let request_id = request
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut response = next.run(request).await;
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
                _ => title(status).to_string(),
            };
            ApiError::new(status, default_code(status), detail)
        });
    let body = ProblemBody {
        kind: format!("{}/errors/{}", base.0, problem.code),
        title: title(status),
        status: status.as_u16(),
        detail: &problem.detail,
        instance: &instance,
        request_id: request_id.as_deref(),
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
            ActorError::NotAvailable(_) => ApiError::unavailable("not_available", detail, 3600),
            ActorError::Busy { retry_after, .. } => {
                ApiError::unavailable("server_busy", detail, retry_after)
            }
            ActorError::Restarting(_) | ActorError::Crashed(_) | ActorError::Timeout(_) => {
                ApiError::unavailable("service_unavailable", detail, 1)
            }
        }
    }
}

impl From<TtsError> for ApiError {
    fn from(error: TtsError) -> Self {
        let detail = error.to_string();
        match error {
            TtsError::EmptyText | TtsError::NothingToSay | TtsError::SettingOutOfRange { .. } => {
                ApiError::unprocessable(detail)
            }
            TtsError::Engine(_) => ApiError::unavailable("synthesis_failed", detail, 1),
        }
    }
}

impl From<SynthesisError> for ApiError {
    fn from(error: SynthesisError) -> Self {
        let detail = error.to_string();
        match error {
            SynthesisError::Invalid(invalid) => invalid.into(),
            SynthesisError::UnknownVoice(_) => ApiError::not_found(detail),
            SynthesisError::InactiveVoice { .. } => {
                ApiError::unavailable("voice_inactive", detail, 3600)
            }
            SynthesisError::Engine(_) => ApiError::unavailable("synthesis_failed", detail, 1),
            SynthesisError::Actor(actor) => actor.into(),
        }
    }
}

impl From<JobsError> for ApiError {
    fn from(error: JobsError) -> Self {
        let detail = error.to_string();
        match error {
            JobsError::NotFound(_) => ApiError::not_found(detail),
            JobsError::NotReady { .. } => ApiError::conflict("job_not_complete", detail),
            JobsError::Failed { .. } => ApiError::conflict("job_failed", detail),
            JobsError::AudioGone(_) => ApiError::gone("audio_gone", detail),
            JobsError::TooMany(_) => ApiError::rate_limited(detail, 30),
            JobsError::UnknownVoice(_) => ApiError::not_found(format!("`voice_id`: {detail}")),
            JobsError::Storage(_) => ApiError::unavailable("storage_unavailable", detail, 5),
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
