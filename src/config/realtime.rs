//! `[realtime]`: the realtime voice agent's sockets (turn-taking, session lifetimes, how many at once).

use serde::{Deserialize, Serialize};

/// `[realtime]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RealtimeSettings {
    /// Silence that ends the caller's turn, in milliseconds (a session may ask for 200 to 3,000).
    pub end_of_turn_ms: u64,
    /// How long the caller must speak over a reply before it stops, in milliseconds: shorter sounds
    /// ("eeh", "mhm", a knock on the line) leave it playing (0 to 3,000).
    pub min_interruption_ms: u64,
    /// A session that hears nothing from its client for this long is closed.
    pub idle_seconds: u64,
    /// The longest a session may last.
    pub max_session_seconds: u64,
    /// Sessions one API key may hold open at once.
    pub max_sessions_per_key: usize,
    /// Sessions the server holds open at once.
    pub max_sessions: usize,
    /// Speech input sockets (ElevenLabs' `stream-input` and `multi-stream-input`) one API key may hold open.
    pub max_speech_sockets_per_key: usize,
    /// Speech input sockets the server holds open at once.
    pub max_speech_sockets: usize,
    /// How long a token from `POST /v1/voice-agent/sessions` may wait before it opens a socket.
    pub token_ttl_seconds: u64,
    /// How far ahead of real time a caller's audio may run (sent faster than it plays) before the socket is read
    /// no faster than real time.
    pub max_audio_ahead_seconds: u64,
}

impl Default for RealtimeSettings {
    fn default() -> Self {
        Self {
            end_of_turn_ms: 500,
            min_interruption_ms: 500,
            idle_seconds: 60,
            max_session_seconds: 1_800,
            max_sessions_per_key: 5,
            max_sessions: 200,
            max_speech_sockets_per_key: 20,
            max_speech_sockets: 500,
            token_ttl_seconds: 300,
            max_audio_ahead_seconds: 10,
        }
    }
}

/// The range a session may set its end-of-turn silence in.
pub const END_OF_TURN_RANGE_MS: (u64, u64) = (200, 3_000);

impl RealtimeSettings {
    /// The first key that is out of range, and why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let (lo, hi) = END_OF_TURN_RANGE_MS;
        if !(lo..=hi).contains(&self.end_of_turn_ms) {
            return Some((
                "realtime.end_of_turn_ms",
                format!("must be between {lo} and {hi}"),
            ));
        }
        if self.min_interruption_ms > 3_000 {
            return Some((
                "realtime.min_interruption_ms",
                "must be at most 3000".into(),
            ));
        }
        for (key, value) in [
            ("realtime.idle_seconds", self.idle_seconds as usize),
            (
                "realtime.max_session_seconds",
                self.max_session_seconds as usize,
            ),
            ("realtime.max_sessions_per_key", self.max_sessions_per_key),
            ("realtime.max_sessions", self.max_sessions),
            (
                "realtime.max_speech_sockets_per_key",
                self.max_speech_sockets_per_key,
            ),
            ("realtime.max_speech_sockets", self.max_speech_sockets),
            (
                "realtime.token_ttl_seconds",
                self.token_ttl_seconds as usize,
            ),
            (
                "realtime.max_audio_ahead_seconds",
                self.max_audio_ahead_seconds as usize,
            ),
        ] {
            if value == 0 {
                return Some((key, "must be at least 1".into()));
            }
        }
        None
    }
}

/// `[telephony]`: the phone network behind Twilio calls (transfers and hang-ups through Twilio's REST API).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelephonySettings {
    /// Twilio's REST API (a test points it at a local server).
    pub twilio_api_base: String,
    /// The Twilio account (`AC…`); empty: the account each call's stream names.
    pub twilio_account_sid: String,
    /// The account's auth token (`SAUTI__TELEPHONY__TWILIO_AUTH_TOKEN`); never logged. Empty: calls cannot be
    /// transferred or hung up through Twilio, and the caller is told when a transfer fails.
    pub twilio_auth_token: String,
}

impl Default for TelephonySettings {
    fn default() -> Self {
        Self {
            twilio_api_base: "https://api.twilio.com".into(),
            twilio_account_sid: String::new(),
            twilio_auth_token: String::new(),
        }
    }
}

impl std::fmt::Debug for TelephonySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let token = match self.twilio_auth_token.is_empty() {
            true => "",
            false => "(set)",
        };
        f.debug_struct("TelephonySettings")
            .field("twilio_api_base", &self.twilio_api_base)
            .field("twilio_account_sid", &self.twilio_account_sid)
            .field("twilio_auth_token", &token)
            .finish()
    }
}

impl TelephonySettings {
    /// The first key that is wrong, and why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let base = &self.twilio_api_base;
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Some((
                "telephony.twilio_api_base",
                "must be an http:// or https:// URL".into(),
            ));
        }
        let sid = &self.twilio_account_sid;
        if !sid.is_empty() && !crate::telephony::plain_id(sid) {
            return Some((
                "telephony.twilio_account_sid",
                "must be letters and digits (AC…)".into(),
            ));
        }
        None
    }
}
