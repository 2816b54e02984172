//! Authentication and rate limiting in one check ([`Guard::admit`], run by the front of every request): every `/v1` response carries `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a request over its limit gets 429 with `Retry-After` and a
//! detail naming the limit and the category.
//!
//! The limits are counted in this process (governor's GCRA), or, with `limits.redis_url`, in Redis for every
//! replica at once ([`shared`]); then this process's limiter is the fallback while Redis does not answer.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::actors::realtime::TurnRefused;
use crate::config::{LimitSettings, RedisUnreachable};
use crate::http::transport::auth::{Caller, KeyMemo, KeyRing};
use crate::http::transport::problem::ApiError;
use crate::problem::codes::ErrorCode;
use crate::telemetry::request_scope;

mod bucket;
mod category;
mod memo;
pub mod shared;

use bucket::Bucket;
pub use category::Category;
pub use memo::ConnectionMemo;

use shared::{SharedLimits, SharedSeat};

/// Whose limit a 429 names, for a request without a valid key.
const UNAUTHENTICATED_SCOPE: &str =
    "for requests without a valid API key (counted per client address)";

/// What counting one request found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Requests left now.
    pub remaining: u32,
    /// When the whole allowance is back, in seconds since the epoch.
    pub reset: f64,
    /// Over the limit: how long until the next request is allowed.
    pub retry_after: Option<Duration>,
}

/// Limit, remaining and reset time: the rate-limit headers of a response.
pub struct Allowance([HeaderValue; 3]);

impl Allowance {
    /// Write the `x-ratelimit-*` headers.
    pub fn write(self, headers: &mut HeaderMap) {
        let [limit, remaining, reset] = self.0;
        headers.insert(LIMIT, limit);
        headers.insert(REMAINING, remaining);
        headers.insert(RESET, reset);
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
    /// The limits of every replica, when they are shared, and what to do while they do not answer.
    shared: Option<(Arc<SharedLimits>, RedisUnreachable)>,
}

impl RateLimits {
    /// Limiters sized from configuration, counted here only.
    pub fn new(settings: &LimitSettings) -> Self {
        Self {
            synthesis: Bucket::new(settings.synthesis_per_minute),
            status: Bucket::new(settings.status_per_minute),
            default: Bucket::new(settings.default_per_minute),
            unauthenticated: Bucket::new(settings.unauthenticated_per_minute),
            shared: None,
        }
    }

    /// Limiters sized from configuration, shared through Redis when `limits.redis_url` is set (needs a Tokio
    /// runtime; connects on first use).
    pub fn from_settings(settings: &LimitSettings) -> Result<Self, String> {
        let mut limits = Self::new(settings);
        if !settings.redis_url.is_empty() {
            let timeout = Duration::from_millis(settings.redis_timeout_ms.max(1));
            let shared = SharedLimits::new(&settings.redis_url, &settings.redis_prefix, timeout)?;
            limits.shared = Some((Arc::new(shared), settings.redis_unreachable));
        }
        Ok(limits)
    }

    /// A seat for one more realtime session of `owner` across the replicas (at most `max` a key), when the
    /// limits are shared: held by the session, given back when dropped. `Ok(None)`: counted in this process only
    /// (its own seats decide), also while Redis does not answer and the replica falls back. Refused: 429 when
    /// the key holds all it may, 503 while Redis does not answer and the replica is configured to refuse.
    pub async fn realtime_seat(
        &self,
        owner: &str,
        max: usize,
    ) -> Result<Option<SharedSeat>, ApiError> {
        let Some((shared, unreachable)) = &self.shared else {
            return Ok(None);
        };
        match shared.take_seat(owner, max).await {
            Ok(Some(seat)) => Ok(Some(seat)),
            Ok(None) => Err(ApiError::rate_limited(
                format!("this API key already has {max} realtime sessions open across the replicas (realtime.max_sessions_per_key); close one first"),
                5,
            )),
            Err(_) => match unreachable {
                RedisUnreachable::Local => Ok(None),
                RedisUnreachable::Refuse => Err(ApiError::new(
                    ErrorCode::RateLimitsUnavailable,
                    "the session limits shared by the replicas do not answer; retry shortly",
                )),
            },
        }
    }

    /// Where the limits are counted, for `/readyz`: `local`, `shared`, or why the shared ones do not answer
    /// (and what happens meanwhile).
    pub async fn state(&self) -> String {
        let Some((shared, unreachable)) = &self.shared else {
            return "local".into();
        };
        match shared.ping().await {
            Ok(()) => "shared".into(),
            Err(why) => {
                let meanwhile = match unreachable {
                    RedisUnreachable::Local => "counting in this replica meanwhile",
                    RedisUnreachable::Refuse => "refusing limited requests meanwhile",
                };
                format!("shared limits unreachable ({why}); {meanwhile}")
            }
        }
    }

    /// Count one request in `bucket` (named `name` in Redis) under `key`: in Redis when shared, else (or while
    /// Redis does not answer, when so configured) here. `None`: shared limits that do not answer, configured to
    /// refuse.
    async fn count<K: std::hash::Hash + Eq + Clone>(
        &self,
        bucket: &Bucket<K>,
        name: &str,
        key: &K,
        shared_key: &str,
    ) -> Option<Verdict> {
        let Some((shared, unreachable)) = &self.shared else {
            return Some(bucket.local(key));
        };
        match shared.count(name, shared_key, bucket.per_minute).await {
            Ok(verdict) => Some(verdict),
            Err(_) => match unreachable {
                RedisUnreachable::Local => Some(bucket.local(key)),
                RedisUnreachable::Refuse => None,
            },
        }
    }

    /// Count one realtime turn of `owner` as the HTTP agent's turns are counted (its default limit, shared by the
    /// replicas when the limits are).
    pub async fn count_turn(&self, owner: &str) -> Result<(), TurnRefused> {
        let category = Category::Default;
        let bucket = self.bucket(category);
        let key: Arc<str> = Arc::from(owner);
        match self.count(bucket, category.name(), &key, owner).await {
            Some(Verdict {
                retry_after: None, ..
            }) => Ok(()),
            Some(Verdict {
                retry_after: Some(wait),
                ..
            }) => {
                metrics::counter!(crate::telemetry::metrics::RATE_LIMITED, "category" => category.name())
                    .increment(1);
                Err(TurnRefused {
                    detail: format!(
                        "rate limit exceeded: {} requests per minute {} (realtime turns count as agent turns); \
                         retry in {} s",
                        bucket.per_minute,
                        category.scope(),
                        wait.as_secs().max(1)
                    ),
                    retry_after: Some(wait),
                })
            }
            None => Err(TurnRefused {
                detail: "the rate limits shared by the replicas do not answer; retry shortly"
                    .into(),
                retry_after: None,
            }),
        }
    }

    /// Forget idle keys so memory stays bounded (called every minute).
    pub fn forget_idle(&self) {
        self.synthesis.forget_idle();
        self.status.forget_idle();
        self.default.forget_idle();
        self.unauthenticated.forget_idle();
    }
}

/// Authentication and rate limits for `/v1`.
pub struct Guard {
    /// Accepted keys.
    pub keys: KeyRing,
    /// Limiters.
    pub limits: Arc<RateLimits>,
}

/// The caller and the `x-ratelimit-*` headers its response will carry, or the refusal (401, 429 or 503, with
/// those headers where there are any).
pub type Admitted = Result<(Option<Caller>, Allowance), Box<Response>>;

/// What [`Guard::admit`] decided: at once (limits counted in this process), or once the shared limits answer.
pub enum Admission {
    Now(Admitted),
    Later(std::pin::Pin<Box<dyn std::future::Future<Output = Admitted> + Send>>),
}

/// Who a request comes from, as far as the limits are concerned.
enum Subject {
    /// A valid key, and the category of what it asks.
    Caller(Caller, Category),
    /// No valid key: counted per client address, refused with `error` if not over that limit.
    Stranger(IpAddr, ApiError),
    /// No key yet, on a socket whose first message may carry it: counted per client address like a
    /// stranger, and let through to present its key there.
    Unproven(IpAddr),
}

impl Guard {
    /// Authenticate `request`, which came from `peer` on the connection `memo` belongs to, and count it
    /// against its caller's limit (or, without a valid key, against the limit of its address). `id` names the
    /// request on the line a refusal logs.
    pub fn admit(
        &self,
        request: &Request,
        peer: IpAddr,
        memo: &ConnectionMemo,
        id: &HeaderValue,
    ) -> Admission {
        let subject = self.identify(request, peer, &memo.key);
        match self.limits.shared.is_some() {
            false => {
                let verdict = match &subject {
                    Subject::Caller(caller, category) => self
                        .limits
                        .bucket(*category)
                        .local_for(&caller.key_id, memo),
                    Subject::Stranger(ip, _) | Subject::Unproven(ip) => {
                        self.limits.unauthenticated.local(ip)
                    }
                };
                let settle = || self.limits.settle(subject, Some(verdict), Some(memo));
                // Only a request over its limit writes a line here; the others need no log scope.
                Admission::Now(match verdict.retry_after {
                    Some(_) => request_scope::sync_scope(id.clone(), settle),
                    None => settle(),
                })
            }
            true => {
                let limits = Arc::clone(&self.limits);
                Admission::Later(Box::pin(async move {
                    let verdict = match &subject {
                        Subject::Caller(caller, category) => {
                            let bucket = limits.bucket(*category);
                            let id = &caller.key_id;
                            limits.count(bucket, category.name(), id, id).await
                        }
                        Subject::Stranger(ip, _) | Subject::Unproven(ip) => {
                            let bucket = &limits.unauthenticated;
                            limits.count(bucket, "address", ip, &ip.to_string()).await
                        }
                    };
                    limits.settle(subject, verdict, None)
                }))
            }
        }
    }

    /// The caller of a valid key (or of a realtime token minted for one), or the address of a stranger with the
    /// reason it is refused.
    fn identify(&self, request: &Request, peer: IpAddr, memo: &KeyMemo) -> Subject {
        let presented = crate::http::transport::auth::presented_key(request.headers());
        let mut caller = presented.and_then(|k| self.keys.authenticate_with(memo, k));
        // A realtime socket opened by a browser presents a token minted for its key instead.
        let mut refused_token = None;
        if let (None, Some(token)) = (presented, socket_token(request.uri())) {
            match self.keys.check_token(&token) {
                Ok(by_token) => caller = Some(by_token),
                Err(error) => refused_token = Some(error),
            }
        }
        if let Some(caller) = caller {
            return Subject::Caller(
                caller,
                Category::of_request(request.method(), request.uri()),
            );
        }
        // A speech socket's key may come in its first message instead.
        if presented.is_none()
            && refused_token.is_none()
            && crate::http::compat::elevenlabs::socket::takes_key_in_message(request)
        {
            return Subject::Unproven(peer);
        }
        // Unauthenticated requests are limited per client address, so key guessing is slow.
        let error = match (presented, refused_token) {
            (None, Some(token)) => ApiError::unauthorized(token.to_string()),
            (None, None) => ApiError::unauthorized(
                "missing API key: send it in the xi-api-key header (or as Authorization: Bearer KEY)",
            ),
            (Some(_), _) => ApiError::unauthorized("invalid API key"),
        };
        Subject::Stranger(peer, error)
    }
}

impl RateLimits {
    fn bucket(&self, category: Category) -> &Bucket<Arc<str>> {
        match category {
            Category::Synthesis => &self.synthesis,
            Category::Status => &self.status,
            Category::Default => &self.default,
        }
    }

    /// The answer for `subject` once its request is counted (`None`: it could not be).
    fn settle(
        &self,
        subject: Subject,
        verdict: Option<Verdict>,
        memo: Option<&ConnectionMemo>,
    ) -> Admitted {
        let Some(verdict) = verdict else {
            let error = ApiError::new(
                ErrorCode::RateLimitsUnavailable,
                "the rate limits shared by the replicas do not answer; retry shortly",
            );
            return Err(Box::new(error.into_response()));
        };
        match subject {
            Subject::Stranger(_, error) => {
                let (headers, limited) =
                    self.unauthenticated
                        .answer(verdict, UNAUTHENTICATED_SCOPE, memo);
                let error = limited.unwrap_or(error);
                Err(Box::new(with_headers(error.into_response(), headers)))
            }
            Subject::Unproven(_) => {
                let (headers, limited) =
                    self.unauthenticated
                        .answer(verdict, UNAUTHENTICATED_SCOPE, memo);
                match limited {
                    Some(error) => Err(Box::new(with_headers(error.into_response(), headers))),
                    None => Ok((None, headers)),
                }
            }
            Subject::Caller(caller, category) => {
                let (allowance, limited) =
                    self.bucket(category)
                        .answer(verdict, category.scope(), memo);
                if let Some(error) = limited {
                    tracing::info!(key_id = %caller.key_id, category = category.name(), "rate limited");
                    metrics::counter!(crate::telemetry::metrics::RATE_LIMITED, "category" => category.name())
                        .increment(1);
                    return Err(Box::new(with_headers(error.into_response(), allowance)));
                }
                Ok((Some(caller), allowance))
            }
        }
    }
}

/// The `token` query parameter of a request to a realtime socket path.
fn socket_token(uri: &axum::http::Uri) -> Option<String> {
    if !crate::http::native::realtime::SOCKET_PATHS.contains(&uri.path()) {
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
