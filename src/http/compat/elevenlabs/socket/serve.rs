//! One input-streaming socket: messages in become text for its contexts, what the contexts say goes out. The
//! socket closes with 1000 after the single stream's `isFinal`, or after every context's once
//! `close_socket` came; 1008 when the key in the first message is refused, when the key is revoked, after
//! `inactivity_timeout` seconds with no message, on a message that is not JSON, or past the key's monthly
//! limit; 1013 when the server or the key holds all the sockets it may; 1001 when the server stops; 1009 and
//! 1007 for frames that are too large or not UTF-8. Problems of one context (over the context limit, too much
//! text waiting, a synthesis that failed) are error messages naming the context, and the socket stays open.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

use super::wire::{ClientMessage, ErrorMessage, ServerMessage};
use super::{Checked, MAX_CONTEXTS};
use crate::http::native::realtime::closing::{truncate, unreadable};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::speech_input::buffer::TextBuffer;
use crate::ops::speech_input::context::Speaking;
use crate::ops::speech_input::{Context, InputVoice, Said, Spoken};
use crate::tts::VoiceSettings;

/// A write that waits longer than this for the client is a client that stopped reading: the socket ends.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// What the contexts said, waiting to be written (a client that does not read holds the synthesis back).
const EVENTS_QUEUE: usize = 16;
/// The single stream's one context.
const SINGLE: &str = "";

type Close = Option<(u16, String)>;

/// Serve a checked socket until it closes.
pub async fn serve(socket: WebSocket, state: AppState, checked: Checked) {
    let (mut sink, mut stream) = socket.split();
    let close = run(&mut sink, &mut stream, state, checked).await;
    if let Some((code, reason)) = close {
        let frame = Message::Close(Some(CloseFrame {
            code,
            reason: truncate(&reason).into(),
        }));
        let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(frame)).await;
    }
}

async fn run(
    sink: &mut SplitSink<WebSocket, Message>,
    stream: &mut SplitStream<WebSocket>,
    state: AppState,
    checked: Checked,
) -> Close {
    let mut first = None;
    let (voice, seat) = match checked.opened {
        Some(opened) => opened,
        None => {
            let message = match first_message(stream, checked.inactivity).await {
                Ok(message) => message,
                Err(close) => return close,
            };
            match authenticate(&state, &checked.voice_id, &message).await {
                Ok(opened) => {
                    first = Some(message);
                    opened
                }
                Err(close) => return Some(close),
            }
        }
    };
    let revoked = seat.revoked();
    let _seat = seat;
    let (events, mut said) = mpsc::channel(EVENTS_QUEUE);
    let stop = CancellationToken::new();
    let _stop_on_exit = stop.clone().drop_guard();
    let mut socket = Socket {
        state: state.clone(),
        voice,
        schedule: Vec::new(),
        auto: checked.auto,
        continuous: checked.continuous,
        multi: checked.multi,
        format: checked.format,
        contexts: HashMap::new(),
        finishing: HashSet::new(),
        events,
        speaking: Arc::new(Semaphore::new(MAX_CONTEXTS * 2)),
        stop,
        closing: false,
        first: true,
        outbox: Vec::new(),
    };
    if let Some(message) = first {
        if let Some(close) = socket.take(message).await {
            return close;
        }
    }
    if !socket.write_outbox(sink).await {
        return None;
    }
    let mut heard = Instant::now();
    loop {
        let quiet = tokio::time::sleep_until((heard + checked.inactivity).into());
        tokio::select! {
            () = state.stopping.cancelled() => {
                return Some((1001, "the server is shutting down; reconnect shortly".into()));
            }
            () = revoked.cancelled() => return Some((1008, "key revoked".into())),
            () = quiet => {
                return Some((1008, format!(
                    "no message for {} s (inactivity_timeout); send {{\"text\": \"\"}} to keep the socket open",
                    checked.inactivity.as_secs()
                )));
            }
            frame = stream.next() => {
                heard = Instant::now();
                let message = match frame {
                    None | Some(Ok(Message::Close(_))) => return None,
                    Some(Err(error)) => return unreadable(error),
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Binary(_))) => {
                        return Some((1003, "messages are JSON text frames".into()));
                    }
                    Some(Ok(Message::Text(text))) => match ClientMessage::parse(&text) {
                        Ok(message) => message,
                        Err(problem) => return Some((1008, problem)),
                    },
                };
                if let Some(close) = socket.take(message).await {
                    return close;
                }
                if !socket.write_outbox(sink).await {
                    return None;
                }
            }
            Some(spoken) = said.recv() => {
                heard = Instant::now();
                let (frames, close) = socket.said(spoken);
                for frame in frames {
                    if !write(sink, frame).await {
                        return None;
                    }
                }
                if let Some(close) = close {
                    return close;
                }
            }
        }
    }
}

/// The first message, when it must carry the key.
async fn first_message(
    stream: &mut SplitStream<WebSocket>,
    wait: Duration,
) -> Result<ClientMessage, Close> {
    let refused = |reason: &str| Err(Some((1008, reason.to_string())));
    match tokio::time::timeout(wait, stream.next()).await {
        Err(_) => refused("no message came with the API key (xi_api_key)"),
        Ok(None | Some(Ok(Message::Close(_)))) => Err(None),
        Ok(Some(Err(error))) => Err(unreadable(error)),
        Ok(Some(Ok(Message::Text(text)))) => ClientMessage::parse(&text).or_else(|p| refused(&p)),
        Ok(Some(Ok(_))) => refused("the first message must be JSON text with the API key"),
    }
}

/// The key of the first message checked, then the voice and a place among the sockets.
async fn authenticate(
    state: &AppState,
    voice_id: &str,
    message: &ClientMessage,
) -> Result<(InputVoice, crate::actors::realtime::Seat), (u16, String)> {
    let Some(key) = message.key() else {
        return Err((
            1008,
            "missing API key: send it in the xi-api-key header or as xi_api_key in the first message"
                .into(),
        ));
    };
    let Some(caller) = state.keys.authenticate(key) else {
        return Err((1008, "invalid API key".into()));
    };
    super::open(state, &caller.key_id, voice_id)
        .await
        .map_err(refusal)
}

/// A refusal as a close: 1013 (try again later) for what waiting cures, 1008 otherwise.
fn refusal(error: ApiError) -> (u16, String) {
    let code = match error.status().as_u16() {
        429 | 503 => 1013,
        _ => 1008,
    };
    (code, error.detail)
}

/// A voice with the settings and dictionaries a message brings (a stream's or a context's first).
pub async fn with_message_settings(
    state: &AppState,
    voice: &InputVoice,
    message: &ClientMessage,
) -> Result<InputVoice, ApiError> {
    let settings = match message.voice_settings.as_ref().and_then(|s| s.speed) {
        Some(speed) => Some(VoiceSettings {
            speaking_rate: crate::tts::speaking_rate_of(speed, "voice_settings.speed")
                .map_err(ApiError::unprocessable)?,
            ..VoiceSettings::default()
        }),
        None => None,
    };
    voice
        .with(
            state,
            settings,
            message.pronunciation_dictionary_locators.clone(),
        )
        .await
}

struct Socket {
    state: AppState,
    voice: InputVoice,
    schedule: Vec<usize>,
    auto: bool,
    continuous: bool,
    multi: bool,
    format: crate::audio::output::OutputFormat,
    /// Contexts taking text.
    contexts: HashMap<Arc<str>, Context>,
    /// Contexts ended, still speaking.
    finishing: HashSet<Arc<str>>,
    events: mpsc::Sender<Spoken>,
    /// Contexts speaking (open or finishing), bounded.
    speaking: Arc<Semaphore>,
    stop: CancellationToken,
    /// The socket closes once every context has finished.
    closing: bool,
    /// The next message is the socket's first.
    first: bool,
    /// Error messages to write before anything else.
    outbox: Vec<String>,
}

impl Socket {
    /// Take one message from the client: `Some` when the socket closes now.
    async fn take(&mut self, message: ClientMessage) -> Option<Close> {
        let first = std::mem::replace(&mut self.first, false);
        if first {
            match message.schedule() {
                Ok(schedule) => self.schedule = schedule.unwrap_or_default(),
                Err(problem) => return Some(Some((1008, problem))),
            }
            if !self.multi {
                match with_message_settings(&self.state, &self.voice, &message).await {
                    Ok(voice) => self.voice = voice,
                    Err(error) => return Some(Some(refusal(error))),
                }
            }
        }
        if message.close_socket == Some(true) {
            let ids: Vec<Arc<str>> = self.contexts.keys().cloned().collect();
            for id in ids {
                self.end(&id);
            }
            self.closing = true;
            return self
                .done()
                .then_some(Some((1000, "closed as asked".into())));
        }
        let id: Arc<str> = match self.multi {
            true => Arc::from(message.context_id.as_deref().unwrap_or("default")),
            false => Arc::from(SINGLE),
        };
        let text = message.text.as_deref().unwrap_or_default();
        let flush = message.flush == Some(true);
        // The single stream ends with `{"text": ""}`; a context with close_context.
        let ends_single = !self.multi && !first && message.text.as_deref() == Some("");
        let close = message.close_context == Some(true) || ends_single;
        if !text.is_empty() || flush || close {
            if let Some(ends) = self.feed(&id, &message, text, flush || close).await {
                return Some(ends);
            }
        }
        if close {
            self.end(&id);
            if !self.multi {
                self.closing = true;
            }
        }
        None
    }

    /// Text (and a flush) for context `id`, opened if it is new; `Some` when the socket closes.
    async fn feed(
        &mut self,
        id: &Arc<str>,
        message: &ClientMessage,
        text: &str,
        flush: bool,
    ) -> Option<Close> {
        if !self.contexts.contains_key(id) {
            if self.multi && text.is_empty() {
                // A keep-alive, or a flush or close of a context not open: nothing to do.
                return None;
            }
            if let Err((error, problem)) = self.open(id, message).await {
                return self.refuse(id, error, &problem);
            }
        }
        let context = self.contexts.get_mut(id)?;
        if let Err(error) = context.text(text) {
            return self.refuse(id, "too_much_text", &error.detail);
        }
        if flush {
            context.flush();
        }
        None
    }

    async fn open(
        &mut self,
        id: &Arc<str>,
        message: &ClientMessage,
    ) -> Result<(), (&'static str, String)> {
        if self.finishing.contains(id) {
            return Err((
                "context_closed",
                format!("context {id:?} is closed and still speaking; use a new context_id"),
            ));
        }
        let full = || {
            format!(
                "this socket already has {MAX_CONTEXTS} contexts open (or closed and still speaking); \
                 close one with close_context before opening another"
            )
        };
        if self.contexts.len() >= MAX_CONTEXTS {
            return Err(("max_active_conversations", full()));
        }
        let permit = Arc::clone(&self.speaking)
            .try_acquire_owned()
            .map_err(|_| ("max_active_conversations", full()))?;
        let voice = match self.multi {
            true => with_message_settings(&self.state, &self.voice, message)
                .await
                .map_err(|e| ("invalid_context", e.detail))?,
            false => self.voice.clone(),
        };
        let speaking = Speaking {
            service: self.state.clone(),
            voice,
            format: self.format,
            events: self.events.clone(),
            stop: self.stop.clone(),
            permit,
            continuous: self.continuous,
        };
        let buffer = TextBuffer::new(self.schedule.clone(), self.auto);
        let context = Context::open(Arc::clone(id), speaking, buffer);
        self.contexts.insert(Arc::clone(id), context);
        Ok(())
    }

    /// A problem of context `id`: an error message on the multi-context socket (which stays open); the
    /// single stream closes with it.
    fn refuse(&mut self, id: &Arc<str>, error: &str, problem: &str) -> Option<Close> {
        if !self.multi {
            return Some(Some((1008, problem.to_string())));
        }
        let message = ErrorMessage {
            message: problem,
            error,
            code: 1008,
            context_id: Some(id),
        };
        self.outbox.push(message.json());
        None
    }

    /// Write the error messages waiting; false when the client is gone or stopped reading.
    async fn write_outbox(&mut self, sink: &mut SplitSink<WebSocket, Message>) -> bool {
        for frame in std::mem::take(&mut self.outbox) {
            if !write(sink, Message::Text(frame.into())).await {
                return false;
            }
        }
        true
    }

    /// End context `id`: it speaks what it holds, then says it is final.
    fn end(&mut self, id: &Arc<str>) {
        if let Some(context) = self.contexts.remove(id) {
            context.end();
            self.finishing.insert(Arc::clone(id));
        }
    }

    /// Whether the socket has nothing left to say and was asked to close.
    fn done(&self) -> bool {
        self.closing && self.contexts.is_empty() && self.finishing.is_empty()
    }

    /// The frames for what a context said, and the close when the socket ends with it.
    fn said(&mut self, spoken: Spoken) -> (Vec<Message>, Option<Close>) {
        let wire_id = self.multi.then_some(&*spoken.context);
        let frame = match spoken.said {
            Said::Audio { bytes, alignment } => {
                ServerMessage::audio(&bytes, alignment.as_ref(), wire_id).json()
            }
            Said::Final => {
                self.finishing.remove(&spoken.context);
                ServerMessage::last(wire_id).json()
            }
            Said::Failed(error) => {
                self.contexts.remove(&spoken.context);
                self.finishing.remove(&spoken.context);
                if !self.multi {
                    // Past the key's monthly limit is a refusal; anything else a failure of the server's.
                    let code = match error.code {
                        crate::problem::codes::ErrorCode::QuotaExceeded => 1008,
                        _ => 1011,
                    };
                    return (Vec::new(), Some(Some((code, error.detail))));
                }
                ErrorMessage {
                    message: &error.detail,
                    error: error.code.as_str(),
                    code: 1011,
                    context_id: wire_id,
                }
                .json()
            }
        };
        let close = self
            .done()
            .then_some(Some((1000, "every context has finished".into())));
        (vec![Message::Text(frame.into())], close)
    }
}

/// Write a frame; false when the client is gone or stopped reading.
async fn write(sink: &mut SplitSink<WebSocket, Message>, frame: Message) -> bool {
    matches!(
        tokio::time::timeout(WRITE_TIMEOUT, sink.send(frame)).await,
        Ok(Ok(()))
    )
}
