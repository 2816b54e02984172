//! Text-to-speech: the Swahili text front end shared by every voice, and the embedded formant voice.
//!
//! - [`normalize`] turns written Swahili (numbers, money, dates, clock times, phone numbers, abbreviations,
//!   acronyms) into words; [`lexicon`] holds the pronunciation exceptions.
//! - [`g2p`] turns words into phonemes, syllables, stress and phrase intonation.
//! - [`formant`] renders phonemes with a rule-based formant synthesizer (no model files).
//! - [`vits`] runs neural VITS voices (MMS-TTS, Piper) through ONNX Runtime.
//! - [`voices`] puts them together behind the [`Synthesizer`] trait that every voice implements.

pub mod alignment;
pub mod catalog;
pub mod formant;
pub mod g2p;
pub mod lexicon;
pub mod normalize;
pub mod pronunciation;
pub mod vits;
pub mod voices;

pub use voices::{EmbeddedVoice, Synthesizer};

/// A word as a voice spoke it: its written (normalised) form and when, in seconds from the start of the audio.
#[derive(Debug, Clone, PartialEq)]
pub struct SpokenWord {
    /// The word as read: lowercase, numbers and abbreviations written out.
    pub text: String,
    /// Start in seconds.
    pub start: f64,
    /// End in seconds.
    pub end: f64,
}

/// Samples with when each word in them was spoken.
pub type Timed = (Vec<f32>, Vec<SpokenWord>);

/// How a voice should speak (spec §2.3). Every voice maps these onto its own controls.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct VoiceSettings {
    /// Tempo: 2.0 speaks in about half the time. Allowed 0.25–4.0.
    #[schema(minimum = 0.25, maximum = 4.0, example = 1.0)]
    #[serde(deserialize_with = "sent::speaking_rate")]
    pub speaking_rate: f32,
    /// Liveliness of pitch and loudness (VITS: noise_scale). Allowed 0.0–2.0.
    #[schema(minimum = 0.0, maximum = 2.0, example = 0.667)]
    #[serde(deserialize_with = "sent::noise_scale")]
    pub noise_scale: f32,
    /// Variation of sound durations (VITS: noise_scale_w). Allowed 0.0–2.0.
    #[schema(minimum = 0.0, maximum = 2.0, example = 0.8)]
    #[serde(deserialize_with = "sent::noise_scale_duration")]
    pub noise_scale_duration: f32,
}

/// Settings read at the precision they were sent: a value outside its range by less than an `f32` can tell
/// (`2.0000000000000004`) is refused, not rounded into range.
mod sent {
    use serde::de::{Deserialize, Deserializer, Error};

    /// `value` if it lies within `range`, checked before it is narrowed to `f32`.
    pub fn within(value: f64, name: &str, (min, max): (f32, f32)) -> Result<f32, String> {
        if value.is_finite() && (f64::from(min)..=f64::from(max)).contains(&value) {
            return Ok(value as f32);
        }
        Err(format!(
            "voice_settings.{name} must be between {min} and {max}, got {value}"
        ))
    }

    fn ranged<'de, D: Deserializer<'de>>(
        deserializer: D,
        name: &str,
        range: (f32, f32),
    ) -> Result<f32, D::Error> {
        within(f64::deserialize(deserializer)?, name, range).map_err(D::Error::custom)
    }

    pub fn speaking_rate<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        ranged(d, "speaking_rate", super::SPEAKING_RATE_RANGE)
    }

    pub fn noise_scale<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        ranged(d, "noise_scale", super::NOISE_SCALE_RANGE)
    }

    pub fn noise_scale_duration<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        ranged(d, "noise_scale_duration", super::NOISE_SCALE_DURATION_RANGE)
    }
}

/// A speaking rate sent as `f64` (an ElevenLabs or OpenAI `speed`), checked at that precision and narrowed.
pub fn speaking_rate_of(sent: f64, name: &str) -> Result<f32, String> {
    let (min, max) = SPEAKING_RATE_RANGE;
    sent::within(sent, "speaking_rate", SPEAKING_RATE_RANGE)
        .map_err(|_| format!("`{name}` must be between {min} and {max}, not {sent}"))
}

impl Default for VoiceSettings {
    fn default() -> Self {
        Self {
            speaking_rate: 1.0,
            noise_scale: 0.667,
            noise_scale_duration: 0.8,
        }
    }
}

/// Allowed ranges of the voice settings, inclusive.
pub const SPEAKING_RATE_RANGE: (f32, f32) = (0.25, 4.0);
/// Allowed range of `noise_scale`.
pub const NOISE_SCALE_RANGE: (f32, f32) = (0.0, 2.0);
/// Allowed range of `noise_scale_duration`.
pub const NOISE_SCALE_DURATION_RANGE: (f32, f32) = (0.0, 2.0);

impl VoiceSettings {
    /// Check every member against its documented range.
    pub fn validate(&self) -> Result<(), TtsError> {
        let check = |name: &'static str, value: f32, (lo, hi): (f32, f32)| {
            if value.is_finite() && (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(TtsError::SettingOutOfRange {
                    name,
                    value,
                    min: lo,
                    max: hi,
                })
            }
        };
        check("speaking_rate", self.speaking_rate, SPEAKING_RATE_RANGE)?;
        check("noise_scale", self.noise_scale, NOISE_SCALE_RANGE)?;
        check(
            "noise_scale_duration",
            self.noise_scale_duration,
            NOISE_SCALE_DURATION_RANGE,
        )
    }
}

/// Why synthesis could not produce audio.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum TtsError {
    /// Empty or whitespace-only text.
    #[error("`text` is empty")]
    EmptyText,
    /// Text with nothing pronounceable in it (only punctuation or symbols).
    #[error("`text` contains nothing that can be spoken")]
    NothingToSay,
    /// A voice setting outside its range.
    #[error("voice_settings.{name} must be between {min} and {max}, got {value}")]
    SettingOutOfRange {
        /// The member name.
        name: &'static str,
        /// The value sent.
        value: f32,
        /// Lowest allowed.
        min: f32,
        /// Highest allowed.
        max: f32,
    },
    /// The text reads longer than allowed once the pronunciation dictionaries' rules are applied.
    #[error(transparent)]
    ReadsTooLong(#[from] pronunciation::expand::ReadsTooLong),
    /// The engine failed on this input (ONNX Runtime reported an error).
    #[error("the synthesis engine failed: {0}")]
    Engine(String),
}

#[cfg(test)]
mod settings_tests {
    use super::*;

    #[test]
    fn settings_are_checked_at_the_precision_they_were_sent() {
        let read = |json: &str| serde_json::from_str::<VoiceSettings>(json);
        assert_eq!(read(r#"{"noise_scale": 2.0}"#).unwrap().noise_scale, 2.0);
        for outside in [
            r#"{"noise_scale": 2.0000000000000004}"#,
            r#"{"noise_scale_duration": -1e-300}"#,
            r#"{"speaking_rate": 0.24999999999}"#,
            r#"{"speaking_rate": 4.000000000001}"#,
        ] {
            let error = read(outside).unwrap_err().to_string();
            assert!(error.contains("must be between"), "{outside}: {error}");
        }
        assert_eq!(read("{}").unwrap(), VoiceSettings::default());
        assert!(speaking_rate_of(4.0000000001, "speed")
            .unwrap_err()
            .contains("`speed`"));
        assert_eq!(speaking_rate_of(0.25, "speed"), Ok(0.25));
    }
}
