//! `[records]`: what is kept of each agent conversation (HTTP, realtime, phone) after it ends.

use serde::{Deserialize, Serialize};

/// `[records]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordSettings {
    /// Days a call record (and its recording) is kept; 0: kept until deleted.
    pub retention_days: u64,
    /// The largest a record may grow (its JSON, in bytes): turns past it are left out and the record is marked
    /// `truncated`.
    pub max_record_bytes: usize,
    /// Record the audio of realtime and phone calls (stereo WAV: the caller left, the agent right). Off by default.
    pub recording: bool,
    /// The longest recording kept of a call, in seconds (held in memory during the call: 32 KB a second).
    pub max_recording_seconds: u64,
}

impl Default for RecordSettings {
    fn default() -> Self {
        Self {
            retention_days: 30,
            max_record_bytes: 512 * 1024,
            recording: false,
            max_recording_seconds: 900,
        }
    }
}

impl RecordSettings {
    /// The first key that is wrong, and why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if !(4_096..=16 * 1024 * 1024).contains(&self.max_record_bytes) {
            return Some((
                "records.max_record_bytes",
                "must be between 4096 and 16777216".into(),
            ));
        }
        if !(1..=7_200).contains(&self.max_recording_seconds) {
            return Some((
                "records.max_recording_seconds",
                "must be between 1 and 7200".into(),
            ));
        }
        None
    }
}
