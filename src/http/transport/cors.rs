//! Cross-origin access (`server.cors_origins`), so a web page on another origin can call the API with its key.
//!
//! A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed origin is answered
//! 204 before authentication: browsers never send keys on a preflight. Every other response to an allowed
//! origin, refusals included, names the origin and exposes the headers a client reads (request id, rate
//! limits, `Retry-After`, `Content-Disposition`). Keys travel in headers, never cookies, so credentials are not
//! allowed and `*` is safe for development. With no origins configured nothing changes.

use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::response::Response;

/// The methods the API answers.
const METHODS: &str = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
/// Request headers a page may send when its preflight names none.
const HEADERS: &str = "xi-api-key, authorization, content-type, accept, x-request-id";
/// Response headers a page may read besides the CORS-safelisted ones.
const EXPOSED: &str = "x-request-id, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, \
                       retry-after, content-disposition, location, character-cost, sauti-word-timing";
/// How long a browser may keep a preflight's answer, in seconds.
const MAX_AGE: &str = "600";

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Cors {
    /// None (the default): browsers keep other origins out.
    #[default]
    Off,
    /// Any origin (`*`, for development).
    Any,
    /// These origins, exactly (`scheme://host[:port]`, compared without regard to ASCII case).
    Origins(Vec<String>),
}

impl Cors {
    /// The policy `server.cors_origins` describes (validated with the configuration).
    pub fn from_settings(origins: &[String]) -> Self {
        let origins: Vec<String> = origins
            .iter()
            .map(|o| o.trim().to_ascii_lowercase())
            .filter(|o| !o.is_empty())
            .collect();
        if origins.is_empty() {
            Self::Off
        } else if origins.iter().any(|o| o == "*") {
            Self::Any
        } else {
            Self::Origins(origins)
        }
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if that origin is allowed.
    fn allow(&self, origin: Option<&HeaderValue>) -> Option<HeaderValue> {
        let origin = origin?;
        match self {
            Self::Off => None,
            Self::Any => Some(HeaderValue::from_static("*")),
            Self::Origins(allowed) => {
                let text = origin.to_str().ok()?;
                allowed
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case(text))
                    .then(|| origin.clone())
            }
        }
    }

    /// Whether any origin is allowed at all.
    pub fn is_on(&self) -> bool {
        *self != Self::Off
    }

    /// The answer to a preflight from an allowed origin; `None` when `request` is not one (it then goes on as
    /// any other request, and a preflight from an origin not allowed gets no CORS headers).
    pub fn preflight(&self, method: &Method, headers: &HeaderMap) -> Option<Response> {
        if method != Method::OPTIONS || !headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        {
            return None;
        }
        let allow = self.allow(headers.get(header::ORIGIN))?;
        let requested = headers
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .cloned()
            .unwrap_or(HeaderValue::from_static(HEADERS));
        let mut response = Response::new(axum::body::Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let out = response.headers_mut();
        out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow);
        out.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(METHODS),
        );
        out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, requested);
        out.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static(MAX_AGE),
        );
        out.append(
            header::VARY,
            HeaderValue::from_static(
                "access-control-request-method, access-control-request-headers",
            ),
        );
        Some(response)
    }

    /// Name the allowed `origin` on a response (every response while CORS is on, a request without `Origin`
    /// included) and expose the headers clients read.
    pub fn decorate(&self, origin: Option<&HeaderValue>, out: &mut HeaderMap) {
        if let Some(allow) = self.allow(origin) {
            out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow);
            out.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSED),
            );
        }
        // Answers differ by origin (unless every origin gets `*`), so caches must keep them apart.
        if matches!(self, Self::Origins(_)) {
            out.append(header::VARY, HeaderValue::from_static("origin"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preflight_from(cors: &Cors, origin: &'static str) -> Option<Response> {
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, HeaderValue::from_static(origin));
        headers.insert(
            header::ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_static("POST"),
        );
        cors.preflight(&Method::OPTIONS, &headers)
    }

    #[test]
    fn no_origins_is_off_and_a_star_is_any() {
        assert_eq!(Cors::from_settings(&[]), Cors::Off);
        assert_eq!(Cors::from_settings(&[" ".into()]), Cors::Off);
        assert_eq!(
            Cors::from_settings(&["http://a.example".into(), "*".into()]),
            Cors::Any
        );
    }

    #[test]
    fn a_preflight_is_answered_only_for_an_allowed_origin() {
        let cors = Cors::from_settings(&["http://app.example:8000".into()]);
        let answer = preflight_from(&cors, "http://APP.example:8000").unwrap();
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
        assert_eq!(
            answer.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "http://APP.example:8000"
        );
        assert!(preflight_from(&cors, "http://evil.example").is_none());
        assert!(preflight_from(&Cors::Off, "http://app.example:8000").is_none());
        let any = preflight_from(&Cors::Any, "http://any.example").unwrap();
        assert_eq!(any.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    }

    #[test]
    fn responses_name_the_origin_and_expose_the_request_id() {
        let cors = Cors::from_settings(&["http://app.example".into()]);
        let mut out = HeaderMap::new();
        cors.decorate(
            Some(&HeaderValue::from_static("http://app.example")),
            &mut out,
        );
        assert_eq!(
            out[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "http://app.example"
        );
        assert!(out[header::ACCESS_CONTROL_EXPOSE_HEADERS]
            .to_str()
            .unwrap()
            .contains("x-request-id"));
        let mut out = HeaderMap::new();
        cors.decorate(
            Some(&HeaderValue::from_static("http://other.example")),
            &mut out,
        );
        assert!(!out.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
        assert_eq!(out[header::VARY], "origin");
    }
}
