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

/// `[webhooks]`: post-call webhooks (each key sets its own through `PUT /v1/voice-agent/webhook`).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    /// The operator's destination for keys that set none (empty: none).
    pub url: String,
    /// The secret the operator's destination is signed with.
    pub secret: String,
    /// Allow destinations on loopback, private or link-local addresses (off: refused, as a guard against
    /// requests into the service's own network).
    pub allow_private_destinations: bool,
    /// The first wait before a failed delivery is tried again, in milliseconds; each failure doubles it.
    pub retry_ms: u64,
    /// The longest wait between tries, in milliseconds.
    pub max_retry_ms: u64,
    /// How long a receiver has to answer, in seconds.
    pub timeout_seconds: u64,
    /// Deliveries in a row that may fail before a key's webhook is disabled.
    pub max_failures: u32,
    /// Events one key's queue holds at most (the oldest go first).
    pub max_queued_per_key: usize,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            secret: String::new(),
            allow_private_destinations: false,
            retry_ms: 5_000,
            max_retry_ms: 600_000,
            timeout_seconds: 10,
            max_failures: 10,
            max_queued_per_key: 1_000,
        }
    }
}

impl std::fmt::Debug for WebhookSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSettings")
            .field("url", &self.url)
            .field("secret", &if self.secret.is_empty() { "" } else { "(set)" })
            .field(
                "allow_private_destinations",
                &self.allow_private_destinations,
            )
            .field("retry_ms", &self.retry_ms)
            .field("max_retry_ms", &self.max_retry_ms)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("max_failures", &self.max_failures)
            .field("max_queued_per_key", &self.max_queued_per_key)
            .finish()
    }
}

impl WebhookSettings {
    /// The first key that is wrong, and why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if !self.url.is_empty() && url::Url::parse(&self.url).is_err() {
            return Some(("webhooks.url", "must be an http:// or https:// URL".into()));
        }
        if !self.url.is_empty() && self.secret.len() < 16 {
            return Some(("webhooks.secret", "must be at least 16 characters".into()));
        }
        let bounds = [
            ("webhooks.retry_ms", self.retry_ms, 10, 3_600_000),
            (
                "webhooks.max_retry_ms",
                self.max_retry_ms,
                self.retry_ms,
                86_400_000,
            ),
            ("webhooks.timeout_seconds", self.timeout_seconds, 1, 60),
            (
                "webhooks.max_failures",
                u64::from(self.max_failures),
                1,
                1_000,
            ),
            (
                "webhooks.max_queued_per_key",
                self.max_queued_per_key as u64,
                1,
                100_000,
            ),
        ];
        for (key, value, low, high) in bounds {
            if !(low..=high).contains(&value) {
                return Some((key, format!("must be between {low} and {high}")));
            }
        }
        None
    }
}
