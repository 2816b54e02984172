//! The voices a server offers (spec §2.2) and the synthesizer behind each.

use std::sync::Arc;

use serde::Serialize;

use super::voices::{EmbeddedVoice, BARAKA, ZURI};
use super::Synthesizer;

/// Whether a voice can synthesise now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VoiceStatus {
    /// Ready to use.
    Active,
    /// Listed but unusable (its model or runtime is missing); synthesis answers 503.
    Inactive,
}

/// A voice as clients see it (`GET /v1/voices`).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct VoiceInfo {
    /// Identifier used in paths and requests.
    pub voice_id: String,
    /// Human-readable name.
    pub name: String,
    /// ISO 639-1 code.
    pub language_code: String,
    /// `<language>-<REGION>`.
    pub locale: String,
    /// Speaker gender.
    pub gender: String,
    /// One-line description.
    pub description: String,
    /// `active` or `inactive`.
    pub status: VoiceStatus,
}

struct Entry {
    info: VoiceInfo,
    synthesizer: Option<Arc<dyn Synthesizer>>,
}

/// Every voice of this server, in listing order.
#[derive(Default)]
pub struct VoiceRegistry {
    entries: Vec<Entry>,
}

impl VoiceRegistry {
    /// The two built-in voices of the embedded synthesizer.
    pub fn builtin() -> Self {
        let mut registry = Self::default();
        let voice = |id: &str, name: &str, gender: &str, description: &str| VoiceInfo {
            voice_id: id.into(),
            name: name.into(),
            language_code: "sw".into(),
            locale: "sw-TZ".into(),
            gender: gender.into(),
            description: description.into(),
            status: VoiceStatus::Active,
        };
        registry.add(
            voice(
                ZURI,
                "Zuri",
                "female",
                "Built-in Swahili formant voice, higher pitch; no model files needed",
            ),
            Some(Arc::new(EmbeddedVoice::zuri())),
        );
        registry.add(
            voice(
                BARAKA,
                "Baraka",
                "male",
                "Built-in Swahili formant voice, lower pitch; no model files needed",
            ),
            Some(Arc::new(EmbeddedVoice::baraka())),
        );
        registry
    }

    /// Add a voice; `None` as synthesizer lists it as inactive.
    pub fn add(&mut self, mut info: VoiceInfo, synthesizer: Option<Arc<dyn Synthesizer>>) {
        if synthesizer.is_none() {
            info.status = VoiceStatus::Inactive;
        }
        self.entries.retain(|e| e.info.voice_id != info.voice_id);
        self.entries.push(Entry { info, synthesizer });
    }

    /// A voice's public description.
    pub fn get(&self, voice_id: &str) -> Option<&VoiceInfo> {
        self.entries
            .iter()
            .find(|e| e.info.voice_id == voice_id)
            .map(|e| &e.info)
    }

    /// The synthesizer of an active voice.
    pub fn synthesizer(&self, voice_id: &str) -> Option<Arc<dyn Synthesizer>> {
        self.entries
            .iter()
            .find(|e| e.info.voice_id == voice_id)
            .and_then(|e| e.synthesizer.clone())
    }

    /// Every voice, or those of one language.
    pub fn list(&self, language: Option<&str>) -> Vec<VoiceInfo> {
        self.entries
            .iter()
            .filter(|e| language.is_none_or(|l| e.info.language_code.eq_ignore_ascii_case(l)))
            .map(|e| e.info.clone())
            .collect()
    }
}
