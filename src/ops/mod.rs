//! The operations layer: what every protocol asks of the service, written once. The native `/v1` API, the
//! ElevenLabs and OpenAI dialects, the realtime socket and Twilio Media Streams are adapters: each turns its
//! request into one operation here and the operation's result into its own answer, and nothing more.
//!
//! | operation | module | rules it owns |
//! |---|---|---|
//! | synthesize (sync, job, stream, timed) | [`speech`] | voice ownership, text rules, voice settings, dictionaries, the sync/job split |
//! | converse (text, audio) | [`converse`] | voice ownership, what a caller may say, scenario and session checked before audio is heard |
//! | transcribe | [`transcribe`] | languages, decoding within the codec permits, recognition availability |
//! | clone | [`clone`] | disk space before analysis, ownership of deletions |
//! | speak text that arrives in parts | [`speech_input`] | voice ownership, settings and dictionaries once; what one context may hold and have waiting |
//! | open a realtime session | [`realtime`] | voice ownership, end-of-turn range, scenario and session, recognition availability, seats |
//! | encode, decode | [`encode`], [`stream`], [`audio`] | codec permits, work stopped when the caller goes away |
//!
//! Voice ownership is checked here against the store replicas share ([`voices`]) and again by the TtsActor
//! against its catalogue, so no adapter can forget it. Every operation counts what it used in [`usage`].

pub mod audio;
pub mod calls;
pub mod clone;
pub mod converse;
pub mod encode;
pub mod live_transcription;
pub mod models;
pub mod quota;
pub mod realtime;
pub mod speech;
pub mod speech_input;
pub mod stream;
pub mod text;
pub mod transcribe;
pub use crate::telemetry::usage;
pub mod voices;
pub mod webhook;

use std::sync::Arc;

use crate::actors::supervisor::Graph;
use crate::config::Settings;
use crate::tts::catalog::VoiceRegistry;

/// What the operations work with: the actors, the voices, the stores and the shared bounds. One per server;
/// every adapter reaches it through its own state.
pub struct Service {
    /// The configuration the server started with.
    pub settings: Arc<Settings>,
    /// The voices.
    pub voices: Arc<VoiceRegistry>,
    /// Handles to the actors.
    pub graph: Graph,
    /// The keys' pronunciation dictionaries.
    pub dictionaries: crate::dictionaries::Dictionaries,
    /// Permits for audio codec work (decoding an upload, encoding an answer), admitted like any other work.
    pub decoders: Arc<tokio::sync::Semaphore>,
    /// The realtime sessions open, per key and in all.
    pub seats: Arc<crate::actors::realtime::Seats>,
    /// The speech input sockets open, per key and in all (revoked keys' sockets close like their sessions).
    pub speech_sockets: Arc<crate::actors::realtime::Seats>,
    /// Cancelled when the server begins to stop: open realtime sockets close with 1001 (going away).
    pub stopping: tokio_util::sync::CancellationToken,
    /// Where keys, jobs, voices and dictionaries are kept.
    pub db: crate::storage::Storage,
    /// The languages recognition serves and the engine serving each (empty with no recognizer).
    pub recognition: Arc<Vec<(&'static str, &'static str)>>,
    /// Transfers and hang-ups of phone calls.
    pub calls: Arc<dyn crate::telephony::CallControl>,
    /// Call records.
    pub records: crate::records::Records,
    /// Speech detection and end-of-turn models.
    pub turns: Arc<crate::turns::TurnModels>,
}
