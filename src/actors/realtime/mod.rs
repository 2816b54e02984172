//! Realtime voice-agent sessions: one actor per live conversation (a socket), fed the caller's audio as it
//! arrives. It detects when the caller's turn ends (streaming voice-activity detection), recognises the turn
//! (AsrActor), answers it through the dialogue layer with its safety checks (DialogueActor), and streams the
//! reply's speech piece by piece (TtsActor). Speech from the caller while the agent speaks stops the reply at
//! once (barge-in); the session's history then keeps only what the caller heard. A session is not linked to
//! the supervisor: if it crashes, that conversation ends with a close frame and nothing else is touched.
//!
//! The wire protocols (ElevenLabs-style JSON events, Twilio Media Streams) live at the HTTP edge; they turn
//! frames into [`Inbound`] and [`Outbound`] into frames.

mod actor;
mod barge;
pub mod call;
mod early;
mod handover;
mod hearing;
mod interim;
mod keys;
mod playing;
mod seats;
pub mod turn;

pub use actor::{SessionActor, ToSession};
pub use seats::{Seat, SeatError, Seats};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorRef};
use tokio::sync::mpsc;

use super::asr::AsrHandle;
use super::dialogue::DialogueHandle;
use super::tts::TtsHandle;
use crate::audio::output::OutputFormat;

/// The actors a session works with.
#[derive(Clone)]
pub struct Services {
    /// Recognition of each turn.
    pub asr: AsrHandle,
    /// The dialogue layer (scenarios, safety, sessions).
    pub dialogue: DialogueHandle,
    /// Streamed speech.
    pub tts: TtsHandle,
    /// Whether the key may take one more turn (its rate limit).
    pub gate: Arc<dyn TurnGate>,
    /// Transfers and hang-ups of phone calls.
    pub calls: Arc<dyn crate::telephony::CallControl>,
    /// Where the call is recorded.
    pub records: crate::records::Records,
    /// How speech is told from silence, and when a turn ends.
    pub turns: Arc<crate::turns::TurnModels>,
}

/// Counts each caller turn, spoken or typed, against the session's key before any work is done for it.
#[async_trait::async_trait]
pub trait TurnGate: Send + Sync {
    /// Whether `owner` may take one more turn now.
    async fn admit(&self, owner: &str) -> Result<(), TurnRefused>;
}

/// A turn not taken: the session tells its client and goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRefused {
    /// Why, for the client.
    pub detail: String,
    /// When a turn may be taken again, if known.
    pub retry_after: Option<Duration>,
}

/// How one session runs.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The API key that opened it (its sessions, its share of the workers).
    pub owner: String,
    /// The scenario; `None`: the default (or the continued session's own).
    pub scenario: Option<String>,
    /// A dialogue session to continue.
    pub session_id: Option<String>,
    /// The agent's voice.
    pub voice_id: String,
    /// Silence that ends the caller's turn.
    pub end_of_turn: Duration,
    /// How long the caller must speak over a reply before it stops (shorter sounds leave it playing).
    pub min_interruption: Duration,
    /// The format of the agent's audio.
    pub format: OutputFormat,
    /// Samples of a turn recognised at a time for interim transcripts while the caller speaks; 0: none.
    pub interim: usize,
    /// Closed after this long without a message from the client.
    pub idle: Duration,
    /// Closed after this long in all.
    pub max_duration: Duration,
    /// The scenario's re-prompts for a silent caller and its polite end to a long call.
    pub call: crate::dialogue::call::CallSettings,
    /// The scenario that answers (resolved).
    pub scenario_id: String,
    /// Where the call comes from, for its record.
    pub channel: crate::records::Channel,
    /// The call's audio is recorded (`records.recording`).
    pub recording: bool,
}

/// What the client sent, decoded by the wire protocol.
#[derive(Debug, Clone)]
pub enum Inbound {
    /// The caller's audio, 16 kHz mono.
    Audio(Vec<f32>),
    /// A typed message from the caller, taken as a turn.
    UserMessage(String),
    /// Keys pressed on the caller's keypad (DTMF): digits, `*` and `#`, which ends a keyed entry.
    Keys(String),
    /// What the client says of the call the session carries (Twilio's `start`, ConvAI's client data).
    Call(crate::telephony::CallInfo),
    /// Anything else that shows the client is there (a pong, a mark).
    Alive,
}

/// What the session tells the client, encoded by the wire protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// The session is ready.
    Started {
        /// The conversation's id.
        conversation_id: String,
        /// The agent's audio format.
        format: OutputFormat,
    },
    /// What the caller was heard to say (secrets masked).
    UserTranscript(String),
    /// What the caller has been heard to say so far in the turn under way (secrets masked); the turn's
    /// transcript, when it comes, may differ.
    Tentative(String),
    /// What the agent answers, before its audio.
    AgentResponse {
        /// The reply text.
        text: String,
        /// The dialogue session (to continue it over HTTP).
        session_id: String,
    },
    /// A piece of the agent's speech.
    Audio {
        /// Increasing over the session; an interruption names the last one the caller should play.
        event_id: u64,
        /// The encoded audio.
        audio: Vec<u8>,
    },
    /// The caller spoke over the agent: stop playing audio after `event_id`.
    Interruption {
        /// The last audio event sent before the interruption.
        event_id: u64,
    },
    /// The agent's reply was cut short: what the caller heard of it.
    Correction {
        /// The whole reply.
        original: String,
        /// The part heard.
        corrected: String,
    },
    /// A turn of the caller's was not taken (over the key's rate limit); the session goes on.
    Refused {
        /// Why.
        detail: String,
        /// Seconds until a turn may be taken again, if known.
        retry_after_seconds: Option<u64>,
    },
    /// The call is put through to people: the client (or the carrier, on a phone call) connects it to `to`.
    Transfer {
        /// A phone number or a `sip:` address.
        to: String,
        /// The call so far, for the person who takes it.
        summary: crate::dialogue::transfer::CallSummary,
    },
    /// The agent ends the call; the close follows.
    EndCall {
        /// `silence`, `max_duration`, `farewell` or `transferred`.
        reason: String,
    },
    /// Are you there?
    Ping {
        /// Echoed by the client's pong.
        event_id: u64,
    },
    /// The session ends: a WebSocket close code and its reason.
    Close {
        /// 1000 when it ended normally, 1008 for a policy, 1011 for a failure.
        code: u16,
        /// Why.
        reason: String,
    },
}

/// A running session: send it the client's messages; its events arrive on the receiver given at start.
pub struct SessionHandle {
    actor: ActorRef<ToSession>,
    ended: tokio::task::JoinHandle<()>,
    cut: Arc<AtomicU64>,
}

impl SessionHandle {
    /// Hand the session a message from its client; `false` once the session has ended.
    pub fn send(&self, message: Inbound) -> bool {
        self.actor.send_message(ToSession::Inbound(message)).is_ok()
    }

    /// Whether audio event `event_id` was cut by an interruption (and must not be sent).
    pub fn is_cut(&self, event_id: u64) -> bool {
        event_id <= self.cut.load(Ordering::Acquire)
    }

    /// Resolves when the session's actor has stopped, however it stopped.
    pub fn ended(&mut self) -> &mut tokio::task::JoinHandle<()> {
        &mut self.ended
    }

    /// End the session (its client has gone).
    pub fn stop(&self) {
        self.actor.stop(None);
    }
}

/// Events a session may queue for a client that is slow to read before the session is ended as stalled.
pub const OUTBOUND_QUEUE: usize = 256;

/// Start a session; its events go to `out`.
pub async fn start(
    services: Services,
    options: SessionOptions,
    out: mpsc::Sender<Outbound>,
) -> Result<SessionHandle, String> {
    let cut = Arc::new(AtomicU64::new(0));
    let args = actor::SessionArgs {
        services,
        options,
        out,
        cut: Arc::clone(&cut),
    };
    let (actor, ended) = Actor::spawn(None, SessionActor, args)
        .await
        .map_err(|e| format!("the session could not start: {e}"))?;
    Ok(SessionHandle { actor, ended, cut })
}
