//! # sauti — a Rust runtime for Swahili speech
//!
//! A tour of the layout, in the order data flows through it:
//!
//! - [`audio`] — every byte of audio in or out: format sniffing, decoding (symphonia + a pure-Rust Opus
//!   decoder), resampling to 16 kHz (rubato), WAV encoding (hound), levels and voice-activity detection.
//!
//! The binary (`src/main.rs`, `src/cli/`) is a thin clap front end over these modules.

pub mod audio;
pub mod tts;
