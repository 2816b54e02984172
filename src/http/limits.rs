//! Authentication and rate limiting in one check ([`Guard::admit`], run by the front of every request): every `/v1` response carries `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a request over its limit gets 429 with `Retry-After` and a
//! detail naming the limit and the category.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use super::auth::{Caller, KeyRing};
use super::problem::ApiError;
use crate::config::LimitSettings;

/// Endpoint categories with their own limits (spec §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// `POST /v1/text-to-speech/*`, `POST /v1/tts/jobs`.
    Synthesis,
    /// `GET` and `HEAD /v1/tts/jobs/*`.
    Status,
    /// Everything else.
    Default,
}

impl Category {
    /// The category of a request (the path with or without its `/v1` prefix, on its own or under the
    /// ElevenLabs-compatible `/elevenlabs`).
    pub fn of(method: &Method, path: &str) -> Self {
        let path = path.strip_prefix("/elevenlabs").unwrap_or(path);
        let path = path.strip_prefix("/v1").unwrap_or(path);
        let synthesis = method == Method::POST
            && (path.starts_with("/text-to-speech/")
                || path == "/audio/speech"
                || path == "/tts/jobs"
                || path == "/tts/jobs/");
        if synthesis {
            Category::Synthesis
        } else if (method == Method::GET || method == Method::HEAD)
            && path.starts_with("/tts/jobs/")
        {
            Category::Status
        } else {
            Category::Default
        }
    }

    /// [`Category::of`] the request's path, except that a job's audio asked for in another format (encoded on
    /// each download) counts as synthesis, not polling.
    pub fn of_request(method: &Method, uri: &axum::http::Uri) -> Self {
        let category = Self::of(method, uri.path());
        let encodes = uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p.starts_with("output_format=")));
        match category {
            Category::Status if encodes && uri.path().ends_with("/audio") => Category::Synthesis,
            other => other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Category::Synthesis => "synthesis",
            Category::Status => "status/polling",
            Category::Default => "default",
        }
    }

    /// Whose limit a 429 names.
    fn scope(self) -> &'static str {
        match self {
            Category::Synthesis => "for synthesis",
            Category::Status => "for status/polling",
            Category::Default => "for default",
        }
    }
}

/// Whose limit a 429 names, for a request without a valid key.
const UNAUTHENTICATED_SCOPE: &str =
    "for requests without a valid API key (counted per client address)";

type Limiter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

struct Bucket<K: std::hash::Hash + Eq + Clone> {
    limiter: Limiter<K>,
    per_minute: u32,
    /// `x-ratelimit-limit`, the same on every response.
    limit_header: HeaderValue,
}

impl<K: std::hash::Hash + Eq + Clone> Bucket<K> {
    fn new(per_minute: u32) -> Self {
        let rate = NonZeroU32::new(per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        Self {
            limiter: RateLimiter::keyed(Quota::per_minute(rate)).with_middleware(),
            per_minute: rate.get(),
            limit_header: HeaderValue::from(rate.get()),
        }
    }

    /// Count one request; the headers to send either way, and a 429 when over the limit.
    fn check(&self, key: &K, limit_for: &str) -> (Allowance, Option<ApiError>) {
        let interval = 60.0 / f64::from(self.per_minute);
        let now = unix_seconds();
        match self.limiter.check_key(key) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let reset = now + f64::from(self.per_minute - remaining) * interval;
                (Allowance(self.limit_header.clone(), remaining, reset), None)
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let retry_after = wait.as_secs_f64().ceil().max(1.0) as u64;
                let reset = now + f64::from(self.per_minute) * interval;
                let detail = format!(
                    "rate limit exceeded: {} requests per minute {limit_for}; retry in {retry_after} s",
                    self.per_minute
                );
                (
                    Allowance(self.limit_header.clone(), 0, reset),
                    Some(ApiError::rate_limited(detail, retry_after)),
                )
            }
        }
    }
}

fn unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Limit, remaining and reset time: the rate-limit headers of a response.
pub struct Allowance(HeaderValue, u32, f64);

impl Allowance {
    /// Write the `x-ratelimit-*` headers.
    pub fn write(self, headers: &mut HeaderMap) {
        headers.insert(LIMIT, self.0);
        headers.insert(REMAINING, HeaderValue::from(self.1));
        headers.insert(RESET, HeaderValue::from(self.2.ceil() as u64));
    }
}

const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// The limiters of a server.
pub struct RateLimits {
    synthesis: Bucket<Arc<str>>,
    status: Bucket<Arc<str>>,
    default: Bucket<Arc<str>>,
    unauthenticated: Bucket<IpAddr>,
}

impl RateLimits {
    /// Limiters sized from configuration.
    pub fn new(settings: &LimitSettings) -> Self {
        Self {
            synthesis: Bucket::new(settings.synthesis_per_minute),
            status: Bucket::new(settings.status_per_minute),
            default: Bucket::new(settings.default_per_minute),
            unauthenticated: Bucket::new(settings.unauthenticated_per_minute),
        }
    }

    /// Forget idle keys so memory stays bounded (called every minute).
    pub fn forget_idle(&self) {
        self.synthesis.limiter.retain_recent();
        self.status.limiter.retain_recent();
        self.default.limiter.retain_recent();
        self.unauthenticated.limiter.retain_recent();
    }
}

/// Authentication and rate limits for `/v1`.
pub struct Guard {
    /// Accepted keys.
    pub keys: KeyRing,
    /// Limiters.
    pub limits: Arc<RateLimits>,
}

impl Guard {
    /// Authenticate `request` and count it against its caller's limit: the caller and the `x-ratelimit-*`
    /// headers its response will carry, or the refusal (401 or 429, with those headers).
    pub fn admit(&self, request: &Request) -> Result<(Caller, Allowance), Box<Response>> {
        let presented = super::auth::presented_key(request.headers());
        let mut caller = presented.and_then(|k| self.keys.authenticate(k));
        // A realtime socket opened by a browser presents a token minted for its key instead.
        let mut refused_token = None;
        if let (None, Some(token)) = (presented, socket_token(request.uri())) {
            match self.keys.tokens.redeem(&token) {
                Ok(by_token) => caller = Some(by_token),
                Err(error) => refused_token = Some(error),
            }
        }
        let Some(caller) = caller else {
            // Unauthenticated requests are limited per client address, so key guessing is slow.
            let ip = request
                .extensions()
                .get::<ConnectInfo<SocketAddr>>()
                .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
            let (headers, limited) = self
                .limits
                .unauthenticated
                .check(&ip, UNAUTHENTICATED_SCOPE);
            let error = limited.unwrap_or_else(|| match (presented, refused_token) {
                (None, Some(token)) => ApiError::unauthorized(token.to_string()),
                (None, None) => ApiError::unauthorized(
                    "missing API key: send it in the xi-api-key header (or as Authorization: Bearer KEY)",
                ),
                (Some(_), _) => ApiError::unauthorized("invalid API key"),
            });
            return Err(Box::new(with_headers(error.into_response(), headers)));
        };
        let category = Category::of_request(request.method(), request.uri());
        let bucket = match category {
            Category::Synthesis => &self.limits.synthesis,
            Category::Status => &self.limits.status,
            Category::Default => &self.limits.default,
        };
        let (allowance, limited) = bucket.check(&caller.key_id, category.scope());
        if let Some(error) = limited {
            tracing::info!(key_id = %caller.key_id, category = category.name(), "rate limited");
            metrics::counter!(crate::telemetry::metrics::RATE_LIMITED, "category" => category.name())
                .increment(1);
            return Err(Box::new(with_headers(error.into_response(), allowance)));
        }
        Ok((caller, allowance))
    }
}

/// The `token` query parameter of a request to a realtime socket path.
fn socket_token(uri: &axum::http::Uri) -> Option<String> {
    if !super::realtime::SOCKET_PATHS.contains(&uri.path()) {
        return None;
    }
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.into_owned())
}

fn with_headers(mut response: Response, allowance: Allowance) -> Response {
    allowance.write(response.headers_mut());
    response
}

/// Period of [`RateLimits::forget_idle`].
pub const FORGET_EVERY: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_shares_the_status_category_with_get() {
        for path in ["/v1/tts/jobs/job_1", "/v1/tts/jobs/job_1/audio"] {
            assert_eq!(Category::of(&Method::GET, path), Category::Status);
            assert_eq!(Category::of(&Method::HEAD, path), Category::Status);
        }
        assert_eq!(
            Category::of(&Method::POST, "/v1/tts/jobs"),
            Category::Synthesis
        );
        assert_eq!(Category::of(&Method::HEAD, "/v1/voices"), Category::Default);
        let uri = axum::http::Uri::from_static;
        assert_eq!(
            Category::of_request(
                &Method::GET,
                &uri("/v1/tts/jobs/job_1/audio?output_format=mp3_44100_128")
            ),
            Category::Synthesis
        );
        assert_eq!(
            Category::of_request(&Method::GET, &uri("/v1/tts/jobs/job_1/audio")),
            Category::Status
        );
        assert_eq!(
            Category::of_request(
                &Method::POST,
                &uri("/elevenlabs/v1/text-to-speech/zuri?output_format=pcm_16000")
            ),
            Category::Synthesis
        );
        assert_eq!(
            Category::of(&Method::DELETE, "/v1/tts/jobs/job_1"),
            Category::Default
        );
    }
}
