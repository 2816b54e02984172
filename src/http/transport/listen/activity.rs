//! What a connection has been doing: bytes moving either way, requests in flight, since when the headers of
//! the next request have been arriving, and since when a write has been waiting on a client that does not read.
//! The connection's watchdog ([`Activity::expired`]) reads it and ends the connection when it is idle, slow to
//! send its headers, or stuck. Every note is a relaxed store of a coarse clock, so watching costs next to
//! nothing per request (a timer per request would cost more than the request's own routing).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::http::transport::coarse_clock::millis_since_start as coarse_now;

/// Shared between a connection's socket wrapper, its requests and its watchdog.
#[derive(Clone)]
pub struct Activity(Arc<Inner>);

struct Inner {
    /// The coarse clock's reading when the connection opened.
    opened: u64,
    /// Milliseconds since `opened` of the last byte read or written (or request finished).
    last_progress: AtomicU64,
    /// Milliseconds since `opened` (plus one) when a write started waiting; 0 while none waits.
    write_blocked_since: AtomicU64,
    /// Milliseconds since `opened` (plus one) when the first byte of a request's headers arrived; 0 while a
    /// request is in flight or no byte of the next one has come.
    headers_since: AtomicU64,
    /// Requests whose response has not been sent in full.
    in_flight: AtomicUsize,
}

impl Activity {
    pub fn new() -> Self {
        Self(Arc::new(Inner {
            opened: coarse_now(),
            last_progress: AtomicU64::new(0),
            write_blocked_since: AtomicU64::new(0),
            headers_since: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        }))
    }

    fn now(&self) -> u64 {
        coarse_now().saturating_sub(self.0.opened)
    }

    fn progressed(&self) {
        self.0.last_progress.store(self.now(), Ordering::Relaxed);
    }

    /// Bytes arrived: progress, and when no request is in flight, the start of the next request's headers.
    fn read(&self) {
        let now = self.now();
        self.0.last_progress.store(now, Ordering::Relaxed);
        if self.0.in_flight.load(Ordering::Acquire) == 0
            && self.0.headers_since.load(Ordering::Relaxed) == 0
        {
            self.0.headers_since.store(now + 1, Ordering::Relaxed);
        }
    }

    /// A request's headers are complete; the guard is held until its response body has been sent (or dropped).
    pub fn request_started(&self) -> InFlight {
        self.0.in_flight.fetch_add(1, Ordering::AcqRel);
        self.0.headers_since.store(0, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// Resolves, with the reason, once the connection has been idle for `deadlines.idle` (no request in flight
    /// and no byte either way), a request's headers have been arriving for `deadlines.headers`, or a write has
    /// waited `deadlines.write` for a client that does not read.
    pub async fn expired(&self, deadlines: Deadlines) -> &'static str {
        let shortest = deadlines.idle.min(deadlines.write).min(deadlines.headers);
        let tick = (shortest / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let millis = |d: Duration| d.as_millis() as u64;
        let (idle, write, headers) = (
            millis(deadlines.idle),
            millis(deadlines.write),
            millis(deadlines.headers),
        );
        let since = |noted: u64, now: u64| now.saturating_sub(noted - 1);
        loop {
            tokio::time::sleep(tick).await;
            let now = self.now();
            let blocked = self.0.write_blocked_since.load(Ordering::Relaxed);
            if blocked != 0 && since(blocked, now) >= write {
                return "the client stopped reading (server.write_timeout_seconds)";
            }
            if self.0.in_flight.load(Ordering::Acquire) > 0 {
                continue;
            }
            let heading = self.0.headers_since.load(Ordering::Relaxed);
            if heading != 0 && since(heading, now) >= headers {
                return "request headers incomplete (server.header_timeout_seconds)";
            }
            let last = self.0.last_progress.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= idle {
                return "idle (server.idle_timeout_seconds)";
            }
        }
    }
}

/// How long a connection may be idle, take to send a request's headers, and leave a write waiting.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub idle: Duration,
    pub headers: Duration,
    pub write: Duration,
}

/// One request in flight on a connection.
pub struct InFlight(Activity);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.progressed();
        self.0 .0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection's socket: reports its progress to an [`Activity`], and closes with a lingering close.
pub struct Watched {
    socket: Option<TcpStream>,
    activity: Activity,
}

impl Watched {
    pub fn new(socket: TcpStream, activity: Activity) -> Self {
        Self {
            socket: Some(socket),
            activity,
        }
    }

    fn socket(&mut self) -> Pin<&mut TcpStream> {
        Pin::new(
            self.socket
                .as_mut()
                .expect("the socket is taken only on drop"),
        )
    }

    /// Note a write's outcome: waiting starts the write clock, bytes taken are progress. (A flush that has
    /// nothing to do is neither: the connection's task is polled on every watchdog tick.)
    fn wrote<T>(
        &self,
        result: Poll<std::io::Result<T>>,
        bytes: impl Fn(&T) -> usize,
    ) -> Poll<std::io::Result<T>> {
        let blocked = &self.activity.0.write_blocked_since;
        match &result {
            Poll::Pending => {
                if blocked.load(Ordering::Relaxed) == 0 {
                    blocked.store(self.activity.now() + 1, Ordering::Relaxed);
                }
            }
            // Only bytes taken end a wait: a flush answers at once even while the socket's buffer is full,
            // and must not restart the write clock each time the connection is polled.
            Poll::Ready(Ok(done)) if bytes(done) > 0 => {
                blocked.store(0, Ordering::Relaxed);
                self.activity.progressed();
            }
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(_)) => blocked.store(0, Ordering::Relaxed),
        }
        result
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = self.socket().poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let result = self.socket().poll_write(cx, data);
        self.wrote(result, |&n| n)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let result = self.socket().poll_write_vectored(cx, data);
        self.wrote(result, |&n| n)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.as_ref().is_some_and(|s| s.is_write_vectored())
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let result = self.socket().poll_flush(cx);
        self.wrote(result, |()| 0)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.socket().poll_shutdown(cx)
    }
}

/// Sockets in a lingering close now; past [`MAX_LINGERING`] a socket is closed at once.
static LINGERING: AtomicUsize = AtomicUsize::new(0);
const MAX_LINGERING: usize = 256;
/// A lingering close lasts at most this long in all…
const LINGER_FOR: Duration = Duration::from_secs(30);
/// …and ends when the client sends nothing for this long.
const LINGER_IDLE: Duration = Duration::from_secs(2);

impl Drop for Watched {
    /// A lingering close: a client still sending a body the server has already answered (a 413 for an upload
    /// sent whole, a 401 or 415 before it was read) must be able to read that answer. Closing with unread bytes
    /// would reset the connection and throw the answer away, so the socket's sending side is shut (the client
    /// sees the end of the response) and what still arrives is read and discarded until the client closes, goes
    /// quiet, or the bounded time passes.
    fn drop(&mut self) {
        let Some(socket) = self.socket.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if LINGERING.fetch_add(1, Ordering::AcqRel) >= MAX_LINGERING {
            LINGERING.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        runtime.spawn(async move {
            linger(socket).await;
            LINGERING.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

async fn linger(mut socket: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if socket.shutdown().await.is_err() {
        return;
    }
    let deadline = tokio::time::Instant::now() + LINGER_FOR;
    let mut sink = vec![0u8; 64 * 1024];
    loop {
        let wait = LINGER_IDLE.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
        match tokio::time::timeout(wait, socket.read(&mut sink)).await {
            Ok(Ok(n)) if n > 0 => continue,
            _ => return,
        }
    }
}
