//! The socket side of a realtime session: frames from the client are decoded by the wire protocol and handed to
//! the session; the session's events are encoded and written, except audio an interruption has cut. The loop
//! ends the session when the client goes, and closes the socket with a code and reason when the session ends
//! (1011 when it failed without saying why, as a crashed session does).

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::sync::mpsc;

use crate::actors::realtime::{Inbound, Outbound, Seat, SessionHandle};

/// A write that waits longer than this for the client is a client that stopped reading: the session ends.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a frame from the client is taken.
pub enum Taken {
    /// Messages for the session.
    Messages(Vec<Inbound>),
    /// The client says the conversation is over (Twilio's `stop`).
    Finished,
    /// Not acceptable: close with this code and reason.
    Refused(u16, String),
}

/// A wire protocol: client frames in, session events out.
pub trait Wire: Send + 'static {
    /// Take one frame from the client (pings and pongs are answered before this).
    fn inbound(&mut self, frame: Message) -> Taken;
    /// The frames that carry one event (none when the protocol has no such event).
    fn outbound(&mut self, event: Outbound) -> Vec<Message>;
}

/// Run a session over `socket` until either side ends it.
pub async fn serve(
    socket: WebSocket,
    session: SessionHandle,
    mut events: mpsc::Receiver<Outbound>,
    mut wire: impl Wire,
    seat: Seat,
    stopping: tokio_util::sync::CancellationToken,
) {
    let _seat = seat;
    let (mut sink, mut stream) = socket.split();
    let mut session = session;
    let close = loop {
        tokio::select! {
            () = stopping.cancelled() => {
                break Some((1001, "the server is shutting down; reconnect shortly".to_string()));
            }
            frame = stream.next() => match frame {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break None,
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                    session.send(Inbound::Alive);
                }
                Some(Ok(frame)) => match wire.inbound(frame) {
                    Taken::Messages(messages) => {
                        for message in messages {
                            session.send(message);
                        }
                    }
                    Taken::Finished => break Some((1000, "the call has ended".to_string())),
                    Taken::Refused(code, reason) => break Some((code, reason)),
                },
            },
            event = events.recv() => match event {
                // The session stopped without a word: it failed.
                None => break Some((1011, "the session failed and has ended; start a new one".to_string())),
                Some(Outbound::Close { code, reason }) => break Some((code, reason)),
                Some(Outbound::Audio { event_id, .. }) if session.is_cut(event_id) => {}
                Some(event) => {
                    let frames = wire.outbound(event);
                    if !write(&mut sink, frames).await {
                        break None;
                    }
                }
            },
        }
    };
    session.stop();
    if let Some((code, reason)) = close {
        let frame = Message::Close(Some(CloseFrame {
            code,
            reason: truncate(&reason).into(),
        }));
        let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(frame)).await;
    }
    // Wait (briefly) for the session to finish stopping, so its seat is given back after it.
    let _ = tokio::time::timeout(Duration::from_secs(2), session.ended()).await;
}

/// Write frames; `false` when the client is gone or stopped reading.
async fn write(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    frames: Vec<Message>,
) -> bool {
    for frame in frames {
        match tokio::time::timeout(WRITE_TIMEOUT, sink.send(frame)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return false,
            Err(_) => {
                tracing::info!("a realtime client stopped reading; the session ends");
                return false;
            }
        }
    }
    true
}

/// A close reason fits in 123 bytes (RFC 6455 §5.5); cut at a character boundary.
fn truncate(reason: &str) -> String {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_string()
}

impl Wire for Box<dyn Wire> {
    fn inbound(&mut self, frame: Message) -> Taken {
        (**self).inbound(frame)
    }

    fn outbound(&mut self, event: Outbound) -> Vec<Message> {
        (**self).outbound(event)
    }
}
