//! What a connection has been doing: bytes moving either way, requests in flight, and since when a write has
//! been waiting on a client that does not read. The connection's watchdog ([`Activity::expired`]) reads it and
//! ends the connection when it is idle or stuck.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Shared between a connection's socket wrapper, its requests and its watchdog.
#[derive(Clone)]
pub struct Activity(Arc<Inner>);

struct Inner {
    opened: Instant,
    /// Milliseconds since `opened` of the last byte read or written (or request finished).
    last_progress: AtomicU64,
    /// Milliseconds since `opened` (plus one) when a write started waiting; 0 while none waits.
    write_blocked_since: AtomicU64,
    /// Requests whose response has not been sent in full.
    in_flight: AtomicUsize,
}

impl Activity {
    pub fn new() -> Self {
        Self(Arc::new(Inner {
            opened: Instant::now(),
            last_progress: AtomicU64::new(0),
            write_blocked_since: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        }))
    }

    fn now(&self) -> u64 {
        self.0.opened.elapsed().as_millis() as u64
    }

    fn progressed(&self) {
        self.0.last_progress.store(self.now(), Ordering::Relaxed);
    }

    /// A request arrived; the guard is held until its response body has been sent (or dropped).
    pub fn request_started(&self) -> InFlight {
        self.0.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Resolves, with the reason, once the connection has been idle for `idle` (no request in flight and no
    /// byte either way) or a write has waited `write` for a client that does not read.
    pub async fn expired(&self, idle: Duration, write: Duration) -> &'static str {
        let tick = (idle.min(write) / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let (idle, write) = (idle.as_millis() as u64, write.as_millis() as u64);
        loop {
            tokio::time::sleep(tick).await;
            let now = self.now();
            let blocked = self.0.write_blocked_since.load(Ordering::Relaxed);
            if blocked != 0 && now.saturating_sub(blocked - 1) >= write {
                return "the client stopped reading (server.write_timeout_seconds)";
            }
            let last = self.0.last_progress.load(Ordering::Relaxed);
            if self.0.in_flight.load(Ordering::Acquire) == 0 && now.saturating_sub(last) >= idle {
                return "idle (server.idle_timeout_seconds)";
            }
        }
    }
}

/// One request in flight on a connection.
pub struct InFlight(Activity);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.progressed();
        self.0 .0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A socket that reports its progress to an [`Activity`].
pub struct Watched<S> {
    socket: S,
    activity: Activity,
}

impl<S> Watched<S> {
    pub fn new(socket: S, activity: Activity) -> Self {
        Self { socket, activity }
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
            Poll::Ready(outcome) => {
                blocked.store(0, Ordering::Relaxed);
                if outcome.as_ref().is_ok_and(|done| bytes(done) > 0) {
                    self.activity.progressed();
                }
            }
        }
        result
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.socket).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.progressed();
        }
        result
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let result = Pin::new(&mut self.socket).poll_write(cx, data);
        self.wrote(result, |&n| n)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let result = Pin::new(&mut self.socket).poll_write_vectored(cx, data);
        self.wrote(result, |&n| n)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let result = Pin::new(&mut self.socket).poll_flush(cx);
        self.wrote(result, |()| 0)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.socket).poll_shutdown(cx)
    }
}
