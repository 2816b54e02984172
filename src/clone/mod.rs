//! Voice cloning: a reference recording is analysed into a [`profile::SpeakerProfile`] (pitch, envelope
//! brightness, speaking rate, loudness) and the built-in formant voice nearest to the speaker is moved onto it.
//! The profile is what is stored; the voice is rebuilt from it at start-up.

pub mod profile;

use std::sync::Arc;

use serde::Serialize;

use self::profile::SpeakerProfile;
use crate::storage::ClonedVoiceRecord;
use crate::tts::catalog::{VoiceInfo, VoiceStatus};
use crate::tts::formant::Preset;
use crate::tts::lexicon::Lexicon;
use crate::tts::{EmbeddedVoice, Synthesizer, TtsError, VoiceSettings};

/// Display name when the request gives none.
pub const DEFAULT_NAME: &str = "Cloned Voice";
/// Longest display name; longer ones are cut.
pub const MAX_NAME_CHARS: usize = 100;

/// A cloned voice: the base formant voice with the speaker's pitch and formant scale, speaking at the speaker's
/// rate (the request's `speaking_rate` multiplies it).
pub struct ClonedVoice {
    voice: EmbeddedVoice,
    rate: f32,
}

impl ClonedVoice {
    /// Build the voice a profile describes.
    pub fn new(profile: &SpeakerProfile, lexicon: &Lexicon) -> Self {
        let base = if profile.base == "zuri" {
            Preset::female()
        } else {
            Preset::male()
        };
        let preset = Preset {
            f0: profile.preset_f0,
            formant_scale: profile.formant_scale,
            ..base
        };
        Self {
            voice: EmbeddedVoice::new(preset).with_lexicon(lexicon.clone()),
            rate: profile.rate,
        }
    }

    fn adjusted(&self, settings: &VoiceSettings) -> Result<VoiceSettings, TtsError> {
        settings.validate()?;
        Ok(VoiceSettings {
            speaking_rate: (settings.speaking_rate * self.rate).clamp(0.25, 4.0),
            ..*settings
        })
    }
}

impl Synthesizer for ClonedVoice {
    fn synthesize(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<f32>, TtsError> {
        self.voice.synthesize(text, &self.adjusted(settings)?)
    }

    fn pieces(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<String>, TtsError> {
        self.voice.pieces(text, &self.adjusted(settings)?)
    }

    fn synthesize_piece(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
    ) -> Result<Vec<f32>, TtsError> {
        self.voice
            .synthesize_piece(piece, index, &self.adjusted(settings)?)
    }

    fn engine(&self) -> &'static str {
        "formant"
    }
}

/// The 201 body of `POST /v1/voice-clone/` (spec §2.5 plus what the analysis found).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ClonedVoiceSummary {
    /// Identifier, usable wherever a voice is.
    #[schema(example = "cv_3f9a1c2e7b5d4a60")]
    pub voice_id: String,
    /// Display name.
    #[schema(example = "Cloned Voice")]
    pub name: String,
    /// `ready`.
    #[schema(example = "ready")]
    pub status: &'static str,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// The built-in voice it is built on.
    #[schema(example = "zuri")]
    pub base_voice: String,
    /// Median pitch of the reference speech, Hz.
    pub f0_median_hz: f32,
    /// Seconds of speech analysed (at most 30).
    pub speech_seconds: f32,
}

impl ClonedVoiceSummary {
    /// The summary of a stored voice.
    pub fn of(record: &ClonedVoiceRecord, profile: &SpeakerProfile) -> Self {
        Self {
            voice_id: record.voice_id.clone(),
            name: record.name.clone(),
            status: "ready",
            created_at: record.created_at.clone(),
            base_voice: profile.base.clone(),
            f0_median_hz: (profile.f0_median * 10.0).round() / 10.0,
            speech_seconds: (profile.speech_seconds * 100.0).round() / 100.0,
        }
    }
}

/// How a cloned voice is listed to its owner.
pub fn voice_info(record: &ClonedVoiceRecord, profile: &SpeakerProfile) -> VoiceInfo {
    VoiceInfo {
        voice_id: record.voice_id.clone(),
        name: record.name.clone(),
        language_code: "sw".into(),
        locale: "sw-TZ".into(),
        gender: if profile.base == "zuri" { "female" } else { "male" }.into(),
        description: format!(
            "Cloned from a reference recording ({:.0} Hz median pitch, {:.1} s of speech), built on {}",
            profile.f0_median, profile.speech_seconds, profile.base
        ),
        status: VoiceStatus::Active,
        engine: "formant".into(),
        licence: None,
        status_detail: None,
        created_at: Some(record.created_at.clone()),
    }
}

/// The display name a request asks for: trimmed, the default when blank, cut to 100 characters.
pub fn display_name(given: Option<&str>) -> String {
    let name = given
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_NAME);
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// A stored voice's profile and synthesizer, or why the stored profile cannot be read.
pub fn rebuild(
    record: &ClonedVoiceRecord,
    lexicon: &Lexicon,
) -> Result<(SpeakerProfile, Arc<dyn Synthesizer>), String> {
    let profile: SpeakerProfile = serde_json::from_str(&record.profile)
        .map_err(|e| format!("voice {}: unreadable profile: {e}", record.voice_id))?;
    let voice = Arc::new(ClonedVoice::new(&profile, lexicon));
    Ok((profile, voice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_default_and_are_cut_to_100_characters() {
        assert_eq!(display_name(None), "Cloned Voice");
        assert_eq!(display_name(Some("  ")), "Cloned Voice");
        assert_eq!(display_name(Some(" Amani ")), "Amani");
        let long = "ñ".repeat(150);
        assert_eq!(display_name(Some(&long)).chars().count(), 100);
    }
}
