//! One transcription session: events in, audio followed turn by turn, transcripts out. Committed turns are
//! recognised one at a time in the order they ended, by a task of the session's ([`finals`]); while the caller
//! speaks, the turn so far is recognised now and then for its deltas when the engine times its words (a CTC
//! model). When recognition falls behind, the socket is read no further until it catches up.
//!
//! The socket closes with 1001 when the server stops, 1008 when the key is revoked, 1000 after
//! `realtime.idle_seconds` without an event, and 1009 or 1007 for a frame too large or not UTF-8. Everything a
//! client can get wrong in an event is an `error` event, and the session goes on.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use base64::Engine as _;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::json;
use tokio::sync::mpsc;

use super::live::{Heard, Live};
use super::wire::{error, event, ClientEvent, Settings};
use crate::actors::realtime::Seat;
use crate::asr::{Hints, Transcript};
use crate::http::native::realtime::closing::{truncate, unreadable};
use crate::http::AppState;
use crate::ops::live_transcription::Deltas;
use crate::problem::ApiError;

const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Turns committed and waiting to be recognised before the socket is read no further.
const FINALS_WAITING: usize = 4;
/// How much more of a turn is heard before it is recognised again for its deltas.
const PARTIAL_EVERY_SECONDS: f64 = 1.0;

/// A committed turn to recognise: its item, language, the session's prompt and the audio.
type Turn = (String, String, Hints, Arc<Vec<f32>>);

/// A recognition done.
enum Done {
    Partial(String, Result<Transcript, ApiError>),
    Final(String, f64, Result<Transcript, ApiError>),
}

struct Session {
    state: AppState,
    owner: String,
    id: String,
    settings: Settings,
    beta: bool,
    live: Live,
    /// The turn under way.
    item: Option<String>,
    previous: Option<String>,
    deltas: HashMap<String, Deltas>,
    /// Deltas are asked for while the engine times its words.
    partials: bool,
    partial_running: bool,
    partial_at: f64,
    finals: mpsc::Sender<Turn>,
    done: mpsc::UnboundedSender<Done>,
    out: Vec<String>,
}

/// Serve a transcription session over `socket` until either side ends it.
pub async fn serve(socket: WebSocket, state: AppState, owner: String, seat: Seat) {
    let revoked = seat.revoked();
    let _seat = seat;
    let (mut sink, mut stream) = socket.split();
    let (done, mut results) = mpsc::unbounded_channel();
    let (finals, queue) = mpsc::channel(FINALS_WAITING);
    let worker = tokio::spawn(recognise_in_order(
        state.clone(),
        owner.clone(),
        queue,
        done.clone(),
    ));
    let settings = Settings::default();
    let mut session = Session {
        live: Live::new(&settings, &state.ops.turns),
        state: state.clone(),
        owner,
        id: format!("sess_{}", uuid::Uuid::new_v4().simple()),
        settings,
        beta: false,
        item: None,
        previous: None,
        deltas: HashMap::new(),
        partials: true,
        partial_running: false,
        partial_at: 0.0,
        finals,
        done,
        out: Vec::new(),
    };
    let created = event(
        "session.created",
        json!({"session": session.settings.session(&session.id, false)}),
    );
    session.out.push(created);
    let idle = Duration::from_secs(state.settings.realtime.idle_seconds);
    let mut heard = Instant::now();
    let close = loop {
        if !flush(&mut sink, &mut session.out).await {
            break None;
        }
        let quiet = tokio::time::sleep_until((heard + idle).into());
        let room = session.finals.capacity() > 0;
        tokio::select! {
            () = state.stopping.cancelled() => {
                break Some((1001, "the server is shutting down; reconnect shortly".to_string()));
            }
            () = revoked.cancelled() => break Some((1008, "key revoked".to_string())),
            () = quiet => break Some((1000, format!("no event for {} s", idle.as_secs()))),
            frame = stream.next(), if room => {
                heard = Instant::now();
                match frame {
                    None | Some(Ok(Message::Close(_))) => break None,
                    Some(Err(error)) => break unreadable(error),
                    Some(Ok(Message::Text(text))) => session.take(text.as_str()).await,
                    Some(Ok(Message::Binary(_))) => {
                        session.out.push(error("invalid_json", "events are JSON text frames", None));
                    }
                    Some(Ok(_)) => {}
                }
            }
            Some(result) = results.recv() => {
                heard = Instant::now();
                session.recognised(result);
            }
        }
    };
    worker.abort();
    if let Some((code, reason)) = close {
        let frame = Message::Close(Some(CloseFrame {
            code,
            reason: truncate(&reason).into(),
        }));
        let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(frame)).await;
    }
}

/// Recognise committed turns one at a time, in order.
async fn recognise_in_order(
    state: AppState,
    owner: String,
    mut queue: mpsc::Receiver<Turn>,
    done: mpsc::UnboundedSender<Done>,
) {
    while let Some((item, language, hints, samples)) = queue.recv().await {
        let seconds = samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
        let result = state
            .transcribe_turn(&owner, samples, &language, &hints)
            .await;
        if done.send(Done::Final(item, seconds, result)).is_err() {
            return;
        }
    }
}

impl Session {
    /// The session's prompt, as recognition reads it.
    fn hints(&self) -> Hints {
        Hints {
            keyterms: Vec::new(),
            prompt: self.settings.prompt.clone(),
            // Decoded as an upload is, so a committed turn's transcript equals the HTTP path's.
            timed: true,
        }
    }

    async fn take(&mut self, text: &str) {
        let parsed = match ClientEvent::parse(text) {
            Ok(parsed) => parsed,
            Err((code, message)) => {
                self.out.push(error(code, &message, None));
                return;
            }
        };
        match parsed {
            ClientEvent::Update {
                changes,
                beta,
                event_id,
            } => match self.settings.updated(&changes, beta) {
                Ok(settings) => {
                    if settings.format != self.settings.format
                        || settings.silence_ms != self.settings.silence_ms
                    {
                        self.live = Live::new(&settings, &self.state.ops.turns);
                        self.item = None;
                    }
                    self.settings = settings;
                    self.beta = beta;
                    let kind = if beta {
                        "transcription_session.updated"
                    } else {
                        "session.updated"
                    };
                    let session = self.settings.session(&self.id, beta);
                    self.out.push(event(kind, json!({ "session": session })));
                }
                Err((code, message)) => self.out.push(error(code, &message, event_id.as_deref())),
            },
            ClientEvent::Append { audio, event_id } => {
                let bytes = match base64::engine::general_purpose::STANDARD.decode(audio.trim()) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        let message = format!("`audio` is not base64: {e}");
                        self.out
                            .push(error("invalid_value", &message, event_id.as_deref()));
                        return;
                    }
                };
                match self.live.take(&bytes) {
                    Ok(heard) => {
                        for heard in heard {
                            self.heard(heard).await;
                        }
                        self.maybe_partial();
                    }
                    Err(message) => {
                        self.out
                            .push(error("invalid_value", &message, event_id.as_deref()))
                    }
                }
            }
            ClientEvent::Commit { event_id } => {
                if self.live.held_seconds() < 0.1 {
                    let message = "the input audio buffer holds less than 100 ms of audio: append more before committing";
                    self.out.push(error(
                        "input_audio_buffer_commit_empty",
                        message,
                        event_id.as_deref(),
                    ));
                    return;
                }
                let samples = self.live.commit();
                self.committed(samples).await;
            }
            ClientEvent::Clear { .. } => {
                self.live.clear();
                self.item = None;
                self.out
                    .push(event("input_audio_buffer.cleared", json!({})));
            }
        }
    }

    fn item(&mut self) -> String {
        self.item
            .get_or_insert_with(|| format!("item_{}", uuid::Uuid::new_v4().simple()))
            .clone()
    }

    async fn heard(&mut self, heard: Heard) {
        match heard {
            Heard::Started { audio_start_ms } => {
                self.item = None;
                let item = self.item();
                self.partial_at = 0.0;
                self.out.push(event(
                    "input_audio_buffer.speech_started",
                    json!({"audio_start_ms": audio_start_ms, "item_id": item}),
                ));
            }
            Heard::Ended {
                audio_end_ms,
                samples,
            } => {
                let item = self.item();
                self.out.push(event(
                    "input_audio_buffer.speech_stopped",
                    json!({"audio_end_ms": audio_end_ms, "item_id": item}),
                ));
                self.committed(samples).await;
            }
        }
    }

    /// A turn ended: said so, and queued to be recognised.
    async fn committed(&mut self, samples: Vec<f32>) {
        let item = self.item();
        self.item = None;
        self.out.push(event(
            "input_audio_buffer.committed",
            json!({"item_id": item, "previous_item_id": self.previous}),
        ));
        self.previous = Some(item.clone());
        self.deltas.entry(item.clone()).or_default();
        let language = self.settings.language.clone();
        let hints = self.hints();
        let _ = self
            .finals
            .send((item, language, hints, Arc::new(samples)))
            .await;
    }

    /// Ask for the turn so far when it has grown enough and the engine times its words.
    fn maybe_partial(&mut self) {
        let held = self.live.held_seconds();
        if !self.partials
            || self.partial_running
            || !self.live.in_speech()
            || held < self.partial_at + PARTIAL_EVERY_SECONDS
        {
            return;
        }
        let item = self.item();
        self.partial_running = true;
        self.partial_at = held;
        let samples = Arc::new(self.live.so_far());
        let (state, owner, done) = (self.state.clone(), self.owner.clone(), self.done.clone());
        let (language, hints) = (self.settings.language.clone(), self.hints());
        tokio::spawn(async move {
            let result = state
                .transcribe_partial(&owner, samples, &language, &hints)
                .await;
            let _ = done.send(Done::Partial(item, result));
        });
    }

    fn recognised(&mut self, done: Done) {
        match done {
            Done::Partial(item, result) => {
                self.partial_running = false;
                let Ok(transcript) = result else {
                    return;
                };
                if transcript.words.is_empty() && !transcript.text.trim().is_empty() {
                    // An engine that does not time its words (Whisper): the transcript comes whole.
                    self.partials = false;
                    return;
                }
                let deltas = self.deltas.entry(item.clone()).or_default();
                if let Some(delta) = deltas.partial(&transcript.text) {
                    self.out.push(delta_event(&item, &delta));
                }
            }
            Done::Final(item, seconds, result) => {
                let mut deltas = self.deltas.remove(&item).unwrap_or_default();
                match result {
                    Ok(transcript) => {
                        if let Some(delta) = deltas.finish(&transcript.text) {
                            self.out.push(delta_event(&item, &delta));
                        }
                        self.out.push(event(
                            "conversation.item.input_audio_transcription.completed",
                            json!({"item_id": item, "content_index": 0, "transcript": transcript.text,
                                   "usage": {"type": "duration", "seconds": (seconds * 1000.0).round() / 1000.0}}),
                        ));
                    }
                    Err(problem) => self.out.push(event(
                        "conversation.item.input_audio_transcription.failed",
                        json!({"item_id": item, "content_index": 0,
                               "error": {"type": "transcription_error", "code": problem.code.as_str(),
                                         "message": problem.detail}}),
                    )),
                }
            }
        }
    }
}

fn delta_event(item: &str, delta: &str) -> String {
    event(
        "conversation.item.input_audio_transcription.delta",
        json!({"item_id": item, "content_index": 0, "delta": delta}),
    )
}

/// Write what waits; false when the client is gone or stopped reading.
async fn flush(sink: &mut SplitSink<WebSocket, Message>, out: &mut Vec<String>) -> bool {
    for frame in out.drain(..) {
        match tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Text(frame.into()))).await {
            Ok(Ok(())) => {}
            _ => return false,
        }
    }
    true
}
