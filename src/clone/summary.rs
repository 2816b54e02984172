//! The 201 body of `POST /v1/voice-clone/`: what was made and what the analysis found.

use serde::Serialize;

use super::profile::{Method, SpeakerProfile};
use crate::storage::ClonedVoiceRecord;

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
    /// The voice it is built on.
    #[schema(example = "zuri")]
    pub base_voice: String,
    /// `formant` (the built-in synthesizer takes the profile), `dsp` (converted after synthesis by signal
    /// processing) or `neural` (re-voiced with the speaker's tone colour by the neural converter).
    #[schema(example = "formant")]
    pub method: String,
    /// Median pitch of the reference speech, Hz.
    pub f0_median_hz: f32,
    /// Seconds of speech analysed (at most 30).
    pub speech_seconds: f32,
    /// Cosine similarity of speaker embeddings, reference against the new voice (with a speaker encoder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    /// The tone-colour converter that re-voices it (`method` `neural`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "openvoice-v2")]
    pub converter: Option<String>,
    /// What the owner should know: a similarity under the server's floor (the voice may not sound like the
    /// speaker), a marginal reference (some clipping or noise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
            method: match profile.method {
                Method::Formant => "formant",
                Method::Dsp => "dsp",
                Method::Neural => "neural",
            }
            .into(),
            f0_median_hz: (profile.f0_median * 10.0).round() / 10.0,
            speech_seconds: (profile.speech_seconds * 100.0).round() / 100.0,
            similarity: profile.similarity,
            converter: profile.tone.as_ref().map(|t| t.converter.clone()),
            warnings: profile.warnings.clone(),
        }
    }
}
