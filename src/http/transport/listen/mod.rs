//! The connection loop: HTTP/1.1 on accepted TCP connections, each request carrying the peer address, with
//! connection hygiene for a service exposed to the internet:
//!
//! - a deadline for request headers, from their first byte (a client that never finishes its headers is
//!   dropped);
//! - an idle timeout: a connection with no request in flight that sends nothing is closed;
//! - a write timeout: a client that stops reading its response is dropped, so a large download never holds a
//!   connection (or the process's memory) for a client that is gone;
//! - a cap on open connections: one over it gets a short 503 and is closed;
//! - graceful shutdown within a grace period: requests in flight may finish, then what is left is closed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::http::transport::edge::Front;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use activity::{Activity, Deadlines, Watched};

mod activity;

/// The timeouts and caps of [`serve`] (`[server]` settings).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Complete request headers must arrive within this.
    pub header_timeout: Duration,
    /// A connection with no request in flight that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// A response the client does not read from for this long is abandoned and the connection closed.
    pub write_timeout: Duration,
    /// Connections open at once; more are answered 503 and closed.
    pub max_connections: usize,
    /// After a shutdown signal, requests in flight get this long to finish.
    pub shutdown_grace: Duration,
}

/// The answer to a connection over the cap: a whole response in one write, then the connection is closed.
const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/problem+json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 117\r\n\r\n\
{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\"too many open connections; retry shortly\"}";

/// A response body that holds its request's [`InFlight`] mark until it has been sent (or dropped), so a
/// connection counts as busy while a large body is still going out.
struct Sent {
    body: axum::body::Body,
    _in_flight: activity::InFlight,
}

impl hyper::body::Body for Sent {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Serve `app` on `listener` until `shutdown` completes, then give open requests the grace period.
pub async fn serve(
    listener: TcpListener,
    app: Front,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    // The header deadline is kept by each connection's watchdog, not by a timer per request. Responses are
    // written flattened (head and body copied into one buffer, sent by one write): for the small JSON answers
    // most requests get, that costs less than queueing the pieces for a vectored write (`bench/layers`); a
    // chunk of audio is copied once more on its way out, next to the work of making it.
    builder.http1().header_read_timeout(None).writev(false);
    let deadlines = Deadlines {
        idle: limits.idle_timeout,
        headers: limits.header_timeout,
        write: limits.write_timeout,
    };
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    tokio::pin!(shutdown);
    loop {
        let (tcp, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            metrics::counter!(crate::telemetry::metrics::CONNECTIONS_REFUSED).increment(1);
            tracing::debug!(%remote, "connection refused: server.max_connections reached");
            // Best effort and never waiting: a client that cannot take these bytes at once just sees the close.
            let _ = tcp.try_write(OVER_CAPACITY);
            continue;
        };
        // Responses go out whole: no waiting on Nagle's algorithm for the last segment of a large body.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY not set");
        }
        let activity = Activity::new();
        let app = app.connection(remote);
        let requests = activity.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            // The request counts as in flight until its response body has been sent.
            let in_flight = requests.request_started();
            // Boxed once here: hyper moves the future it is given, and the front's is large.
            let response = Box::pin(app.handle(request.map(axum::body::Body::new)));
            async move {
                let response = response.await;
                Ok::<_, std::convert::Infallible>(response.map(|body| Sent {
                    body,
                    _in_flight: in_flight,
                }))
            }
        });
        let connection = builder
            .serve_connection_with_upgrades(
                TokioIo::new(Watched::new(tcp, activity.clone())),
                service,
            )
            .into_owned();
        let mut connection = tokio::spawn(graceful.watch(connection));
        // The watchdog is a task of its own, so the connection's task polls no timer on every wake.
        tokio::spawn(async move {
            let _slot = slot;
            metrics::gauge!(crate::telemetry::metrics::CONNECTIONS_OPEN).increment(1.0);
            tokio::select! {
                ended = &mut connection => match ended {
                    Ok(Err(error)) => tracing::debug!(%error, "connection ended with an error"),
                    Err(error) if error.is_panic() => tracing::error!(%error, "connection task panicked"),
                    Ok(Ok(())) | Err(_) => {}
                },
                why = activity.expired(deadlines) => {
                    tracing::debug!(%remote, why, "connection closed");
                    connection.abort();
                    let _ = connection.await;
                }
            }
            metrics::gauge!(crate::telemetry::metrics::CONNECTIONS_OPEN).decrement(1.0);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            grace_seconds = limits.shutdown_grace.as_secs_f64(),
            "requests still open after the shutdown grace period are abandoned"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_over_capacity_answer_declares_its_own_length() {
        let text = std::str::from_utf8(super::OVER_CAPACITY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 503);
    }
}
