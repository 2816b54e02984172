//! The connection loop: HTTP/1.1 (and HTTP/2 by prior knowledge) on accepted TCP connections, each request
//! carrying the peer address, with a deadline for request headers (a client that never finishes its headers
//! is dropped) and graceful shutdown that lets requests in flight finish.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Serve `app` on `listener` until `shutdown` completes, then wait for open requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
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
        // Responses go out whole: no waiting on Nagle's algorithm for the last segment of a large body.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY not set");
        }
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request
                .extensions_mut()
                .insert(ConnectInfo::<SocketAddr>(remote));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
