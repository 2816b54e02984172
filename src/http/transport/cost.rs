//! `character-cost` (ElevenLabs' header): the characters a synthesis answer is counted for. Every dialect sends it
//! with every synthesis answer (sync, streamed, timed, and a queued job's 202: it is counted when queued),
//! and CORS exposes it to browser clients.

use axum::http::{HeaderName, HeaderValue};

/// The header's name.
pub const CHARACTER_COST: HeaderName = HeaderName::from_static("character-cost");

/// The header for an answer synthesising `chars` characters.
pub fn character_cost(chars: usize) -> [(HeaderName, HeaderValue); 1] {
    [(CHARACTER_COST, HeaderValue::from(chars))]
}
