//! # sauti — a Rust runtime for Swahili speech
//!
//! A tour of the layout, in the order data flows through it:
//!
//! - [`audio`] — every byte of audio in or out: format sniffing, decoding (symphonia + a pure-Rust Opus
//!   decoder), resampling to 16 kHz (rubato), WAV encoding (hound), levels and voice-activity detection.
//! - [`tts`] — text-to-speech: the Swahili text front end every voice shares (normaliser, lexicon, G2P with
//!   syllables, stress and intonation) and the embedded formant voice behind the `Synthesizer` trait.
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
pub mod server;
pub mod storage;
pub mod telemetry;
pub mod tts;
