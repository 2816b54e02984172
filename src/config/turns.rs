//! `[turns]`: how realtime and transcription sessions tell speech from silence and when a caller's turn ends.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[turns]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnSettings {
    /// The speech detector: `auto` (Silero VAD when installed, the energy detector otherwise), `silero`
    /// (required: start-up fails without it) or `energy`.
    pub vad: Detector,
    /// Silero VAD's folder under `models.dir` (`sauti models fetch silero-vad`).
    pub silero_model: PathBuf,
    /// The speech probability above which a Silero frame starts speech (speech goes on down to 0.15 less).
    pub vad_threshold: f32,
    /// Start recognising a realtime turn once the caller has been quiet this long (milliseconds, at least 200,
    /// the silence a turn keeps at its end), so the transcript is ready when the end-of-turn silence is over;
    /// the recognition is dropped if they speak again. 0: recognise each turn once it has ended.
    pub early_recognition_ms: u64,
    /// Where Swahili is recognised by a CTC model: recognise a realtime turn this many milliseconds at a time
    /// while the caller speaks and send what was heard so far (`tentative_user_transcript`); at the turn's end only
    /// the rest is recognised. 0: no interim transcripts, and each turn is recognised whole.
    pub interim_ms: u64,
    /// End turns with Smart Turn v3: a pause the model judges complete ends the turn, others wait up to
    /// `smart_turn_longest_ms`. Off by default (see docs/turn-taking.md for how it does on Swahili).
    pub smart_turn: bool,
    /// Smart Turn's folder under `models.dir` (`sauti models fetch smart-turn-v3`).
    pub smart_turn_model: PathBuf,
    /// The pause after which a turn is judged, in milliseconds.
    pub smart_turn_pause_ms: u64,
    /// The silence that ends a turn the model judged incomplete, in milliseconds.
    pub smart_turn_longest_ms: u64,
    /// The probability above which a turn is complete.
    pub smart_turn_threshold: f32,
}

/// Which speech detector sessions use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Detector {
    /// Silero when installed, else energy.
    Auto,
    /// Silero, required.
    Silero,
    /// The energy detector.
    Energy,
}

impl Default for TurnSettings {
    fn default() -> Self {
        Self {
            vad: Detector::Auto,
            silero_model: PathBuf::from("silero-vad"),
            vad_threshold: 0.5,
            early_recognition_ms: 200,
            interim_ms: 1_000,
            smart_turn: false,
            smart_turn_model: PathBuf::from("smart-turn-v3"),
            smart_turn_pause_ms: 200,
            smart_turn_longest_ms: 2_000,
            smart_turn_threshold: 0.5,
        }
    }
}

impl TurnSettings {
    /// The first key that is out of range, and why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if !(0.05..=0.95).contains(&self.vad_threshold) {
            return Some((
                "turns.vad_threshold",
                "must be between 0.05 and 0.95".into(),
            ));
        }
        if self.early_recognition_ms != 0 && !(200..=3_000).contains(&self.early_recognition_ms) {
            return Some((
                "turns.early_recognition_ms",
                "must be 0 (off) or between 200 and 3000".into(),
            ));
        }
        if self.interim_ms != 0 && !(500..=5_000).contains(&self.interim_ms) {
            return Some((
                "turns.interim_ms",
                "must be 0 (off) or between 500 and 5000".into(),
            ));
        }
        if !(0.05..=0.95).contains(&self.smart_turn_threshold) {
            return Some((
                "turns.smart_turn_threshold",
                "must be between 0.05 and 0.95".into(),
            ));
        }
        if !(100..=1_000).contains(&self.smart_turn_pause_ms) {
            return Some((
                "turns.smart_turn_pause_ms",
                "must be between 100 and 1000".into(),
            ));
        }
        if !(self.smart_turn_pause_ms..=5_000).contains(&self.smart_turn_longest_ms) {
            return Some((
                "turns.smart_turn_longest_ms",
                "must be between turns.smart_turn_pause_ms and 5000".into(),
            ));
        }
        None
    }
}
