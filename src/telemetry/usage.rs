//! What the service's work used, counted in one place: characters synthesised, seconds of audio recognised
//! or cloned from, agent turns. The operations (`crate::ops`) record every request's use, and the realtime
//! sessions their turns'. `/metrics` shows the totals as `sauti_usage_total{kind}`.

/// One measure of use.
#[derive(Debug, Clone, Copy)]
pub enum Usage {
    /// Characters of text synthesised (as sent, before dictionaries).
    Characters(usize),
    /// Seconds of audio recognised.
    RecognisedSeconds(f64),
    /// Seconds of audio a voice was cloned from.
    ClonedSeconds(f64),
    /// One agent turn answered.
    AgentTurn,
}

/// Count `usage`.
pub fn record(usage: Usage) {
    let (kind, amount) = match usage {
        Usage::Characters(chars) => ("tts_characters", chars as f64),
        Usage::RecognisedSeconds(seconds) => ("asr_seconds", seconds),
        Usage::ClonedSeconds(seconds) => ("clone_seconds", seconds),
        Usage::AgentTurn => ("agent_turns", 1.0),
    };
    metrics::counter!(crate::telemetry::metrics::USAGE, "kind" => kind)
        .increment(amount.round().max(0.0) as u64);
}
