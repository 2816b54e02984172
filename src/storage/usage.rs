//! What each key used, kept where every replica counts it: a running total per key, month and kind (the row a
//! charge locks, so replicas charging the same key at once are counted one after the other and a limit is
//! never passed), a breakdown per day and voice, and each key's monthly limits. Engine-neutral records here;
//! the SQL in [`super::sqlite`] and [`super::postgres`].

/// A kind of use, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UsageKind {
    /// Characters synthesised (limited by `character_limit`).
    Characters,
    /// Seconds of audio recognised (limited by `audio_seconds_limit`).
    AudioSeconds,
    /// Agent turns answered.
    AgentTurns,
    /// Seconds of realtime sessions and calls.
    CallSeconds,
}

impl UsageKind {
    /// Every kind.
    pub const ALL: [UsageKind; 4] = [
        Self::Characters,
        Self::AudioSeconds,
        Self::AgentTurns,
        Self::CallSeconds,
    ];

    /// The stored (and reported) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Characters => "characters",
            Self::AudioSeconds => "audio_seconds",
            Self::AgentTurns => "agent_turns",
            Self::CallSeconds => "call_seconds",
        }
    }

    /// The kind of a stored name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// The column of `key_limits` that limits this kind, if one does.
    pub(super) fn limit_column(self) -> Option<&'static str> {
        match self {
            Self::Characters => Some("character_limit"),
            Self::AudioSeconds => Some("audio_seconds_limit"),
            Self::AgentTurns | Self::CallSeconds => None,
        }
    }
}

/// One use to count.
#[derive(Debug, Clone, PartialEq)]
pub struct Charge {
    /// The key.
    pub owner: String,
    /// The month it counts in, `YYYY-MM` (UTC).
    pub period: String,
    /// The day, `YYYY-MM-DD` (UTC).
    pub day: String,
    /// What was used.
    pub kind: UsageKind,
    /// The voice it was used with (`""`: none).
    pub voice_id: String,
    /// How much; negative gives back what a failed request was charged (never refused).
    pub amount: f64,
}

/// What a charge found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Charged {
    /// Counted: the month's total now, and the key's limit on it.
    Counted { total: f64, limit: Option<f64> },
    /// Refused (nothing counted): the month's total would have passed the key's limit.
    OverLimit { total: f64, limit: f64 },
}

/// A key's monthly limits (`None`: unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KeyLimits {
    /// Characters synthesised per month.
    pub characters: Option<i64>,
    /// Seconds of audio recognised per month.
    pub audio_seconds: Option<f64>,
}

impl KeyLimits {
    /// The limit on `kind`.
    pub fn of(&self, kind: UsageKind) -> Option<f64> {
        match kind {
            UsageKind::Characters => self.characters.map(|n| n as f64),
            UsageKind::AudioSeconds => self.audio_seconds,
            UsageKind::AgentTurns | UsageKind::CallSeconds => None,
        }
    }
}

/// Use on one day, of one kind, with one voice.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// What was used.
    pub kind: UsageKind,
    /// The voice (`""`: none).
    pub voice_id: String,
    /// How much.
    pub amount: f64,
}
