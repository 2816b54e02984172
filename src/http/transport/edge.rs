//! The front of every request: one plain async function around the router instead of a stack of middleware
//! layers (each of which would clone and box the service under it on every request):
//!
//! - a CORS preflight from an allowed origin answered at once, and every answer to such an origin marked for
//!   the browser ([`Cors`]);
//! - a request id: the caller's `X-Request-Id` when it sends one, else a new one; on every response;
//! - that id on every log line written while the request is handled ([`request_scope`]);
//! - for everything under `/v1` and `/elevenlabs`: authentication and rate limits ([`Guard::admit`]), before
//!   the route is looked up, so an unknown path there without a key is 401, not 404;
//! - a body that stops sending is abandoned after `server.body_timeout_seconds` (slow-loris uploads hold no
//!   handler for long);
//! - metrics: the request counted by route template, method and status, and timed;
//! - problem+json bodies for every error response, naming the request's path and id.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::{Body, HttpBody as _};
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::Response;
use axum::Router;

use crate::http::transport::auth::Caller;
use crate::http::transport::cors::Cors;
use crate::http::transport::limits::{Admission, Allowance, ConnectionMemo, Guard};
use crate::http::transport::problem::{self, ProblemBase, REQUEST_ID};
use crate::telemetry::metrics::{method_label, Routes};
use crate::telemetry::request_scope;

/// Whether `path` is under `/v1` or the ElevenLabs-compatible `/elevenlabs`: the authenticated part of the API.
pub fn authenticated(path: &str) -> bool {
    let under = |prefix: &str| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    under("/v1") || under("/elevenlabs")
}

/// The router and everything the front needs, shared by every connection.
#[derive(Clone)]
pub struct Front(Arc<Parts>);

/// What [`Front`] holds.
pub struct Parts {
    /// The routes.
    pub router: Router,
    /// `{public_base_url}` of problem `type` URLs.
    pub base: ProblemBase,
    /// The documented route templates metrics are counted under.
    pub routes: Routes,
    /// Authentication and rate limits for `/v1` and `/elevenlabs`.
    pub guard: Guard,
    /// How long a request body may go without sending anything.
    pub body_timeout: Duration,
    /// Which other origins browsers may call from.
    pub cors: Cors,
}

impl Front {
    /// The front of `parts.router`.
    pub fn new(parts: Parts) -> Self {
        Self(Arc::new(parts))
    }

    /// The front of one connection, from `peer`.
    pub fn connection(&self, peer: SocketAddr) -> Connection {
        Connection {
            front: self.clone(),
            peer: peer.ip(),
            memo: ConnectionMemo::default(),
        }
    }
}

/// The front as one connection sees it: who is on the other end, and what its requests leave for the next
/// ones (the key it presented last, the rate-limit values it was sent).
pub struct Connection {
    front: Front,
    peer: IpAddr,
    memo: ConnectionMemo,
}

impl Connection {
    /// Answer one request. What can be decided at once (the id, authentication, limits) is decided before
    /// the future is made, which then holds only what the router's answer still needs.
    pub fn handle(&self, request: Request) -> impl Future<Output = Response> + Send + 'static {
        let started = Instant::now();
        // Handlers read the id from the log scope, not from the request's headers.
        let id = match request.headers().get(REQUEST_ID) {
            Some(id) => id.clone(),
            None => new_request_id(),
        };
        let path = KeptPath::of(request.uri());
        let method = method_label(request.method());
        let route = self.front.0.routes.index_of(request.uri().path());
        let front = Arc::clone(&self.front.0);
        let origin = match front.cors.is_on() {
            true => request.headers().get(axum::http::header::ORIGIN).cloned(),
            false => None,
        };
        let preflight = origin
            .as_ref()
            .and_then(|_| front.cors.preflight(request.method(), request.headers()));
        let admission = match preflight {
            Some(answer) => Entry::Refused(Box::new(answer)),
            // Admission reads the request; it is moved once, into the router.
            None => front.admit(&request, self.peer, &self.memo, &id),
        };
        // Routed at once when the limits were counted here; after the shared limits answer otherwise.
        let routed = match admission {
            Entry::Pass(caller, allowance) => {
                let request = front.bounded(request);
                Routed::Now(Ok((front.dispatch(request, &id, caller), allowance)))
            }
            Entry::Refused(refusal) => Routed::Now(Err(refusal)),
            Entry::Later(pending) => Routed::Later(request, pending),
        };
        async move {
            let routed = match routed {
                Routed::Now(routed) => routed,
                Routed::Later(request, pending) => request_scope::scope(id.clone(), None, pending)
                    .await
                    .map(|(caller, allowance)| {
                        let request = front.bounded(request);
                        (front.dispatch(request, &id, caller), Some(allowance))
                    }),
            };
            let mut response = match routed {
                Ok((answer, allowance)) => {
                    let Ok(mut response) = answer.await;
                    if let Some(allowance) = allowance {
                        allowance.write(response.headers_mut());
                    }
                    response
                }
                Err(refusal) => *refusal,
            };
            let id_text = id.to_str().unwrap_or_default();
            if response.status().as_u16() >= 400 {
                response = problem::render(response, &front.base, path.as_str(), Some(id_text));
            }
            let status = response.status().as_u16();
            tracing::debug!(request_id = %id_text, method, path = path.as_str(), status, elapsed_ms = started.elapsed().as_millis() as u64, "request finished");
            front
                .routes
                .record(route, method, status, started.elapsed().as_secs_f64());
            if front.cors.is_on() {
                front.cors.decorate(origin.as_ref(), response.headers_mut());
            }
            response.headers_mut().insert(REQUEST_ID, id);
            response
        }
    }
}

/// What authentication and the limits decided: pass (with the caller, under the authenticated API, and the
/// rate-limit headers), refused, or once the shared limits answer.
enum Entry {
    Pass(Option<Caller>, Option<Allowance>),
    Refused(Box<Response>),
    Later(Pending),
}

/// The router's answer under way, or the request still waiting for the shared limits.
enum Routed<F> {
    Now(Result<(F, Option<Allowance>), Box<Response>>),
    Later(Request, Pending),
}

type Pending =
    std::pin::Pin<Box<dyn Future<Output = crate::http::transport::limits::Admitted> + Send>>;

impl Parts {
    /// Authenticate what is under `/v1` and `/elevenlabs` and count it against its limit: whether it may be
    /// routed, with the rate-limit headers its response will carry, or the refusal.
    fn admit(
        &self,
        request: &Request,
        peer: IpAddr,
        memo: &ConnectionMemo,
        id: &HeaderValue,
    ) -> Entry {
        if !authenticated(request.uri().path()) {
            return Entry::Pass(None, None);
        }
        match self.guard.admit(request, peer, memo, id) {
            Admission::Now(Ok((caller, allowance))) => Entry::Pass(caller, Some(allowance)),
            Admission::Now(Err(refusal)) => Entry::Refused(refusal),
            Admission::Later(pending) => Entry::Later(pending),
        }
    }

    /// A body that stops arriving is abandoned after `server.body_timeout_seconds`.
    fn bounded(&self, request: Request) -> Request {
        if request.body().is_end_stream() {
            return request;
        }
        let timeout = self.body_timeout;
        request.map(|body| Body::new(tower_http::timeout::TimeoutBody::new(timeout, body)))
    }

    /// The router's answer to `request`, its log lines carrying `id`, its handlers reading `caller` (the
    /// [`Caller`] extractor).
    fn dispatch(
        &self,
        request: Request,
        id: &HeaderValue,
        caller: Option<Caller>,
    ) -> impl Future<Output = Result<Response, std::convert::Infallible>> + Send + 'static {
        let key_id = caller.map(|caller| caller.key_id);
        // Routed now (the router is always ready): the future holds the route's answer, not the request.
        let answer = tower::Service::call(&mut self.router.clone(), request);
        request_scope::scope(id.clone(), key_id, answer)
    }
}

/// The request's path, kept for its answer (the problem `instance`, the log line): copied when short, as
/// nearly every path is, rather than sharing the request's own bytes, which would allocate a reference count
/// for them on every request.
enum KeptPath {
    Short { bytes: [u8; SHORT_PATH], len: usize },
    Long(axum::http::Uri),
}

/// The longest path [`KeptPath`] copies.
const SHORT_PATH: usize = 64;

impl KeptPath {
    fn of(uri: &axum::http::Uri) -> Self {
        let path = uri.path().as_bytes();
        match path.len() <= SHORT_PATH {
            true => {
                let mut bytes = [0; SHORT_PATH];
                bytes[..path.len()].copy_from_slice(path);
                Self::Short {
                    bytes,
                    len: path.len(),
                }
            }
            false => Self::Long(uri.clone()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // A copy of a `str`, so never invalid.
            Self::Short { bytes, len } => std::str::from_utf8(&bytes[..*len]).unwrap_or("/"),
            Self::Long(uri) => uri.path(),
        }
    }
}

/// A new request id, in UUID form: a random 64-bit value drawn once per process and a 64-bit count of the
/// requests it has seen, so ids never repeat within a process and collide across processes with negligible
/// odds.
pub fn new_request_id() -> HeaderValue {
    // The first 19 characters ("xxxxxxxx-xxxx-xxxx-") come from the process's value alone: written once.
    static PROCESS: OnceLock<[u8; 19]> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let prefix = PROCESS.get_or_init(|| {
        let uuid = uuid::Uuid::from_u64_pair(rand::random(), 0);
        let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
        uuid.hyphenated().encode_lower(&mut text);
        let mut prefix = [0u8; 19];
        prefix.copy_from_slice(&text[..19]);
        prefix
    });
    let low = COUNT.fetch_add(1, Ordering::Relaxed);
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    text[..19].copy_from_slice(prefix);
    // The count's 16 hex digits, as "xxxx-xxxxxxxxxxxx".
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut at = 19;
    for digit in (0..16).rev() {
        if digit == 11 {
            text[at] = b'-';
            at += 1;
        }
        text[at] = HEX[((low >> (digit * 4)) & 0xf) as usize];
        at += 1;
    }
    // Owned by a reference-counted holder from the start: the id is cloned into the request's log scope, and
    // the first clone of a value copied from a slice would allocate its reference count then.
    let text = bytes::Bytes::from_owner(text);
    debug_assert!(HeaderValue::from_maybe_shared(text.clone()).is_ok());
    // SAFETY: hexadecimal digits and hyphens only, all visible ASCII, as a header value must be.
    unsafe { HeaderValue::from_maybe_shared_unchecked(text) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_are_uuids_and_never_repeat() {
        let ids: std::collections::HashSet<String> = (0..1000)
            .map(|_| super::new_request_id().to_str().unwrap().to_string())
            .collect();
        assert_eq!(ids.len(), 1000);
        let parsed: Vec<uuid::Uuid> = ids
            .iter()
            .map(|id| uuid::Uuid::parse_str(id).unwrap())
            .collect();
        // Written as the uuid crate writes them, with one process part and a count after it.
        for (id, uuid) in ids.iter().zip(&parsed) {
            assert_eq!(&uuid.hyphenated().to_string(), id);
            assert_eq!(uuid.as_u64_pair().0, parsed[0].as_u64_pair().0);
        }
    }

    #[test]
    fn short_and_long_paths_are_kept_whole() {
        for path in ["/", "/v1/voices", &format!("/v1/{}", "a".repeat(200))] {
            let uri: axum::http::Uri = format!("{path}?q=1").parse().unwrap();
            assert_eq!(super::KeptPath::of(&uri).as_str(), path);
        }
    }
}
