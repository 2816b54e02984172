//! The voices a server offers (spec §2.2) and the synthesizer behind each: the two built-in formant voices and
//! the neural voices of `[[tts.voices]]`, which are listed inactive (with what to install) when their model or
//! ONNX Runtime is missing.

use std::sync::Arc;

use serde::Serialize;

use super::lexicon::Lexicon;
use super::vits::{VitsOptions, VitsVoice};
use super::voices::{EmbeddedVoice, BARAKA, ZURI};
use super::Synthesizer;
use crate::config::{Settings, VoiceSettingsEntry};

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
    /// The engine behind the voice: `formant` (built in) or `vits`.
    pub engine: String,
    /// The model's licence, where it restricts use (MMS-TTS: CC-BY-NC-4.0, non-commercial).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub licence: Option<String>,
    /// Why an inactive voice cannot synthesise, and what to install.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_detail: Option<String>,
}

struct Entry {
    info: VoiceInfo,
    synthesizer: Result<Arc<dyn Synthesizer>, String>,
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
            engine: "formant".into(),
            licence: None,
            status_detail: None,
        };
        registry.add(
            voice(
                ZURI,
                "Zuri",
                "female",
                "Built-in Swahili formant voice, higher pitch; no model files needed",
            ),
            Ok(Arc::new(EmbeddedVoice::zuri())),
        );
        registry.add(
            voice(
                BARAKA,
                "Baraka",
                "male",
                "Built-in Swahili formant voice, lower pitch; no model files needed",
            ),
            Ok(Arc::new(EmbeddedVoice::baraka())),
        );
        registry
    }

    /// The built-in voices and every configured neural voice (loaded now; a voice that cannot load is listed
    /// inactive with the reason, and the server still starts).
    pub fn from_settings(settings: &Settings, lexicon: &Lexicon) -> Self {
        let mut registry = Self::builtin();
        for voice in &settings.tts.voices {
            let loaded = load(voice, settings, lexicon);
            if let Err(reason) = &loaded {
                tracing::warn!(voice = %voice.id, %reason, "voice inactive");
            } else {
                tracing::info!(voice = %voice.id, model = %voice.model.display(), "voice loaded");
            }
            let info = VoiceInfo {
                voice_id: voice.id.clone(),
                name: voice.name.clone(),
                language_code: voice.locale.split('-').next().unwrap_or("sw").to_string(),
                locale: voice.locale.clone(),
                gender: voice.gender.clone(),
                description: voice.description.clone(),
                status: VoiceStatus::Active,
                engine: voice.engine.clone(),
                licence: voice.licence.clone(),
                status_detail: None,
            };
            registry.add(info, loaded.map(|v| Arc::new(v) as Arc<dyn Synthesizer>));
        }
        registry
    }

    /// Add a voice; an `Err` lists it as inactive with that reason.
    pub fn add(&mut self, mut info: VoiceInfo, synthesizer: Result<Arc<dyn Synthesizer>, String>) {
        if let Err(reason) = &synthesizer {
            info.status = VoiceStatus::Inactive;
            info.status_detail = Some(reason.clone());
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

    /// The synthesizer of a voice: `None` for an unknown voice, `Err(reason)` for an inactive one.
    pub fn synthesizer(&self, voice_id: &str) -> Option<Result<Arc<dyn Synthesizer>, String>> {
        self.entries
            .iter()
            .find(|e| e.info.voice_id == voice_id)
            .map(|e| e.synthesizer.clone())
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

/// Load one configured neural voice; the error says what is missing and how to install it.
/// Load one configured neural voice by id: `None` when no `[[tts.voices]]` entry has that id, `Err` with what
/// to install when it cannot load.
pub fn load_configured(
    settings: &Settings,
    voice_id: &str,
    lexicon: &Lexicon,
) -> Option<Result<Arc<dyn Synthesizer>, String>> {
    let voice = settings.tts.voices.iter().find(|v| v.id == voice_id)?;
    Some(load(voice, settings, lexicon).map(|v| Arc::new(v) as Arc<dyn Synthesizer>))
}

fn load(
    voice: &VoiceSettingsEntry,
    settings: &Settings,
    lexicon: &Lexicon,
) -> Result<VitsVoice, String> {
    let model = if voice.model.is_absolute() {
        voice.model.clone()
    } else {
        settings.models.dir.join(&voice.model)
    };
    let options = VitsOptions {
        speaker: voice.speaker,
        sessions: settings.tts.workers,
        models: settings.models.clone(),
        lexicon: lexicon.clone(),
    };
    VitsVoice::load(&model, &options).map_err(|error| match (&error, &voice.catalog) {
        (crate::models::ModelError::Missing { .. }, Some(name)) => {
            format!("{error}; install it with `sauti models fetch {name}`")
        }
        _ => error.to_string(),
    })
}
