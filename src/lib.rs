//! # sauti — a Rust runtime for Swahili speech
//!
//! The layers, from the wire down, and the flow of one request through them:
//!
//! - [`http`] — the protocols. `http::transport` listens, admits and refuses (connections, request ids, CORS,
//!   keys and rate limits, bodies and uploads, problem+json); `http::native` is the `/v1` API and its realtime
//!   sockets; `http::compat` speaks the ElevenLabs and OpenAI dialects. A handler only translates: its request
//!   into one operation, the operation's result into its answer.
//! - [`ops`] — the operations every protocol shares (synthesize, converse, transcribe, clone, open a realtime
//!   session, encode and decode) and the rules they own: voice ownership, text rules, the sync/job split,
//!   dictionaries, codec permits, usage.
//! - [`problem`] — the product's refusals: a code (status, title, retrying) and a detail, whatever carries them.
//! - [`actors`] — the supervised actor graph (ractor): the TtsActor, JobsActor, AsrActor, DialogueActor,
//!   AgentActor, CloneActor and one session actor per realtime call; admission, fair worker pools per key,
//!   supervised work and restarts.
//! - The engines, which know nothing of HTTP or actors: [`tts`] (the Swahili text front end, the formant and
//!   neural voices, pronunciation dictionaries), [`asr`] (Whisper and CTC recognition), [`clone`] (voice
//!   cloning), [`dialogue`] (scenarios, intents, slots and the safety layer), [`audio`] (decoding, resampling,
//!   encoding, analysis), [`dictionaries`] (the keys' pronunciation dictionaries over the server's lexicon).
//! - [`storage`] — keys, jobs, voices, dictionaries and conversations in SQLite or PostgreSQL, audio on disk or
//!   in S3, behind one trait per store.
//! - Around them: [`config`] (layered settings), [`models`] (fetching and importing model files),
//!   [`telemetry`] (logs, metrics, request scopes), [`cancel`] (work that stops when its caller goes away),
//!   [`server`] (wiring it all together and stopping it cleanly).
//!
//! A synthesis request, for example: `http::transport` accepts the connection and admits the key; the
//! `http::native::speech` handler turns the JSON into an [`ops::speech::Speak`]; the operation checks the voice
//! is the key's (against the shared store), the text, the settings and the dictionaries, decides between an
//! answer now and a job, and asks the TtsActor; the TtsActor checks the voice's owner again and runs the
//! synthesis on the key's share of the workers; the samples come back up, are encoded within the codec permits,
//! and the handler writes its answer.
//!
//! The binary (`src/main.rs`, `src/cli/`) is a thin clap front end over these modules.

/// A regular expression compiled once, on first use.
macro_rules! re {
    ($pattern:expr) => {{
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        RE.get_or_init(|| regex::Regex::new($pattern).expect("valid built-in pattern"))
    }};
}

pub mod actors;
pub mod asr;
pub mod audio;
pub mod cancel;
pub mod clone;
pub mod config;
pub mod dialogue;
pub mod dictionaries;
pub mod http;
pub mod models;
pub mod ops;
pub mod problem;
pub mod records;
pub mod server;
pub mod storage;
pub mod telemetry;
pub mod telephony;
pub mod tts;
pub mod turns;
pub mod webhooks;
