//! The socket side of a realtime session: frames from the client are decoded by the wire protocol and handed to
//! the session; the session's events are encoded and written, except audio an interruption has cut. The loop
//! ends the session when the client goes, and closes the socket with a code and reason when the session ends
//! (1011 when it failed without saying why, as a crashed session does), when the key is revoked (1008), or
//! when a frame is too large (1009) or not UTF-8 (1007).
//!
//! The caller's audio is read no faster than real time beyond a margin ([`Pace`]), and whole-file chunks are
//! decoded off the async threads behind the permits uploads take, so one socket can neither fill the server's
//! memory nor stall the threads that answer everyone else.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::sync::{mpsc, Semaphore};

use super::input::{decode_file, FileRefused};
use super::pace::Pace;
use crate::actors::realtime::{Inbound, Outbound, Seat, SessionHandle};

/// A write that waits longer than this for the client is a client that stopped reading: the session ends.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a frame from the client is taken.
pub enum Taken {
    /// Messages for the session.
    Messages(Vec<Inbound>),
    /// The client says the conversation is over (Twilio's `stop`).
    Finished,
    /// A whole audio file, to decode before the session hears it.
    File(Vec<u8>),
    /// Not acceptable: close with this code and reason.
    Refused(u16, String),
}

/// What bounds one socket's work.
#[derive(Clone)]
pub struct Bounds {
    /// The permits audio decoding takes (shared with uploads).
    pub decoders: Arc<Semaphore>,
    /// How far ahead of real time the caller's audio may run before the socket is read more slowly.
    pub audio_ahead: Duration,
}

/// While the socket waits for real time to catch up, the session hears this often that its client is there.
const PACED_ALIVE: Duration = Duration::from_secs(1);

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
    wire: impl Wire,
    seat: Seat,
    stopping: tokio_util::sync::CancellationToken,
    bounds: Bounds,
) {
    let revoked = seat.revoked();
    let _seat = seat;
    let (mut sink, mut stream) = socket.split();
    let mut session = session;
    let mut pace = Pace::new(bounds.audio_ahead);
    let mut wire = Some(wire);
    let close = loop {
        let resume = pace.resume_at(Instant::now());
        tokio::select! {
            () = stopping.cancelled() => {
                break Some((1001, "the server is shutting down; reconnect shortly".to_string()));
            }
            () = revoked.cancelled() => {
                break Some((1008, "key revoked".to_string()));
            }
            // Audio ahead of real time: the client's next frames wait in its own buffers.
            () = paced(resume), if resume.is_some() => {
                metrics::counter!(crate::telemetry::metrics::REALTIME_PACED).increment(1);
                session.send(Inbound::Alive);
            }
            frame = stream.next(), if resume.is_none() => match frame {
                None | Some(Ok(Message::Close(_))) => break None,
                Some(Err(error)) => break unreadable(error),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                    session.send(Inbound::Alive);
                }
                Some(Ok(frame)) => {
                    if let Some(close) = heard(&mut wire, frame, &session, &mut pace, &bounds).await {
                        break close;
                    }
                }
            },
            event = events.recv() => {
                if let Some(close) = said(&mut wire, event, &session, &mut sink).await {
                    break close;
                }
            }
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

/// How a socket ends: the close frame to send, if any.
type Close = Option<(u16, String)>;

/// Take a frame the caller sent: its messages go to the session, its audio paced. `Some` when the socket
/// ends with it.
async fn heard<W: Wire>(
    wire: &mut Option<W>,
    frame: Message,
    session: &SessionHandle,
    pace: &mut Pace,
    bounds: &Bounds,
) -> Option<Close> {
    match read(wire, frame).await {
        Taken::Messages(messages) => {
            for message in messages {
                match message {
                    Inbound::Audio(samples) => hand_over(session, pace, &samples),
                    message => {
                        session.send(message);
                    }
                }
            }
            None
        }
        Taken::File(bytes) => match decode_file(bytes, &bounds.decoders).await {
            Ok(samples) => {
                hand_over(session, pace, &samples);
                None
            }
            Err(FileRefused::Busy) => Some(Some((
                1013,
                "every audio decoder is busy; reconnect shortly".to_string(),
            ))),
            Err(FileRefused::Undecodable(problem)) => Some(Some((1008, problem))),
        },
        Taken::Finished => Some(Some((1000, "the call has ended".to_string()))),
        Taken::Refused(code, reason) => Some(Some((code, reason))),
    }
}

/// Send the caller an event of the session in its protocol's frames. `Some` when the socket ends with it.
async fn said<W: Wire>(
    wire: &mut Option<W>,
    event: Option<Outbound>,
    session: &SessionHandle,
    sink: &mut SplitSink<WebSocket, Message>,
) -> Option<Close> {
    let failed = || {
        Some(Some((
            1011,
            "the session failed and has ended; start a new one".to_string(),
        )))
    };
    match event {
        // The session stopped without a word: it failed.
        None => failed(),
        Some(Outbound::Close { code, reason }) => Some(Some((code, reason))),
        Some(Outbound::Audio { event_id, .. }) if session.is_cut(event_id) => None,
        Some(event) => {
            let Some(frames) = wire.as_mut().map(|wire| wire.outbound(event)) else {
                return failed();
            };
            match write(sink, frames).await {
                true => None,
                false => Some(None),
            }
        }
    }
}

/// Frames larger than this are read (parsed, their base64 decoded) on a blocking thread.
const LARGE_FRAME: usize = 64 * 1024;

/// Take a frame through the wire protocol: a large one off the async threads, so a socket sending big frames
/// costs the threads that answer everyone else nothing. A wire that failed on a frame is gone (`None`), and the
/// frame is refused with 1011.
async fn read<W: Wire>(wire: &mut Option<W>, frame: Message) -> Taken {
    let Some(mut taking) = wire.take() else {
        return Taken::Refused(
            1011,
            "the session failed and has ended; start a new one".into(),
        );
    };
    let size = match &frame {
        Message::Text(text) => text.len(),
        Message::Binary(bytes) => bytes.len(),
        _ => 0,
    };
    if size < LARGE_FRAME {
        let taken = taking.inbound(frame);
        *wire = Some(taking);
        return taken;
    }
    match tokio::task::spawn_blocking(move || {
        let taken = taking.inbound(frame);
        (taking, taken)
    })
    .await
    {
        Ok((taking, taken)) => {
            *wire = Some(taking);
            taken
        }
        Err(_) => Taken::Refused(
            1011,
            "the message could not be read; the session ends".into(),
        ),
    }
}

/// The most audio the session is handed in one message: a long chunk is heard a second at a time, so the
/// session's work on it is spread among everything else the async threads do.
const PIECE: usize = crate::audio::SAMPLE_RATE as usize;

/// Hand the caller's audio to the session in pieces, counting it against the pace.
fn hand_over(session: &SessionHandle, pace: &mut Pace, samples: &[f32]) {
    pace.took(samples.len());
    for piece in samples.chunks(PIECE) {
        session.send(Inbound::Audio(piece.to_vec()));
    }
}

/// Sleep until `resume`, or for [`PACED_ALIVE`] at most.
async fn paced(resume: Option<Instant>) {
    let now = Instant::now();
    let until = resume.unwrap_or(now).min(now + PACED_ALIVE);
    tokio::time::sleep_until(until.into()).await;
}

/// The close for a frame that could not be read: too large (1009), not UTF-8 (1007), against the protocol
/// (1002); a connection that broke gets none.
pub fn unreadable(error: axum::Error) -> Option<(u16, String)> {
    use tungstenite::error::{CapacityError, Error};
    let error = error.into_inner().downcast::<Error>().ok()?;
    match *error {
        Error::Capacity(CapacityError::MessageTooLong { max_size, .. }) => {
            Some((1009, format!("a message may be {max_size} bytes at most")))
        }
        Error::Capacity(other) => Some((1009, other.to_string())),
        Error::Utf8(_) => Some((1007, "a text frame must be UTF-8".to_string())),
        Error::Protocol(problem) => Some((1002, problem.to_string())),
        _ => None,
    }
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
pub fn truncate(reason: &str) -> String {
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
