//! `character-cost` (ElevenLabs' header): the characters a synthesis answer is counted for. Every dialect sends it
//! with every synthesis answer (sync, streamed, timed, and a queued job's 202: it is counted when queued),
//! and CORS exposes it to browser clients.

use axum::http::{HeaderName, HeaderValue};

/// The header's name.
pub const CHARACTER_COST: HeaderName = HeaderName::from_static("character-cost");

/// `sauti-word-timing` on every transcription answer: where its word times come from (`ctc`, the recognising
/// model's own frames; `forced-alignment`, Whisper's words aligned with a CTC model; `whisper-timestamps`,
/// Whisper's segment timestamps shared among their words; `none`).
pub const WORD_TIMING: HeaderName = HeaderName::from_static("sauti-word-timing");

/// The header for a transcript timed by `timing`.
pub fn word_timing(timing: crate::asr::WordTiming) -> [(HeaderName, HeaderValue); 1] {
    [(WORD_TIMING, HeaderValue::from_static(timing.name()))]
}

/// The header for an answer synthesising `chars` characters.
pub fn character_cost(chars: usize) -> [(HeaderName, HeaderValue); 1] {
    [(CHARACTER_COST, HeaderValue::from(chars))]
}
