//! The voices a server offers (spec §2.2) and the synthesizer behind each: the two built-in formant voices and
//! the neural voices of `[[tts.voices]]`, which are listed inactive (with what to install) when their model or
//! ONNX Runtime is missing. Cloned voices are added while the server runs; each is visible only to the key that
//! made it.

use std::sync::{Arc, RwLock};

use bytes::Bytes;
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
    /// When a cloned voice was made (RFC 3339); absent for the server's own voices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// A cloned voice's speaker similarity to its reference (cosine of speaker embeddings), when a speaker
    /// encoder is installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    /// What a cloned voice's owner should know about it (a similarity under the floor, a marginal reference).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

struct Entry {
    info: VoiceInfo,
    synthesizer: Result<Arc<dyn Synthesizer>, String>,
}

/// A cloned voice and the key that owns it.
struct Cloned {
    owner: String,
    entry: Entry,
}

/// The server voices as JSON.
struct Written {
    /// Each voice.
    each: Vec<String>,
    /// The whole list body, for a caller without cloned voices and no language filter.
    all: Bytes,
}

/// Every voice of this server, in listing order, then the cloned voices.
#[derive(Default)]
pub struct VoiceRegistry {
    entries: Vec<Entry>,
    /// The server voices' JSON, written once: the voice list is the most requested document.
    entries_json: std::sync::OnceLock<Written>,
    cloned: RwLock<Vec<Cloned>>,
    /// The server's lexicon, which every voice reads with unless a request brings its own.
    lexicon: Arc<Lexicon>,
    /// The neural tone-colour converter cloned voices are re-voiced with, when installed.
    converter: Option<Arc<crate::clone::tone::ToneConverter>>,
}

impl VoiceRegistry {
    /// The two built-in voices of the embedded synthesizer, with the shipped lexicon.
    pub fn builtin() -> Self {
        Self::builtin_with(Lexicon::embedded())
    }

    /// The two built-in voices, reading with `lexicon`.
    fn builtin_with(lexicon: &Lexicon) -> Self {
        let mut registry = Self {
            lexicon: Arc::new(lexicon.clone()),
            ..Self::default()
        };
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
            created_at: None,
            similarity: None,
            warnings: Vec::new(),
        };
        registry.add(
            voice(
                ZURI,
                "Zuri",
                "female",
                "Built-in Swahili formant voice, higher pitch; no model files needed",
            ),
            Ok(Arc::new(
                EmbeddedVoice::zuri().with_lexicon(lexicon.clone()),
            )),
        );
        registry.add(
            voice(
                BARAKA,
                "Baraka",
                "male",
                "Built-in Swahili formant voice, lower pitch; no model files needed",
            ),
            Ok(Arc::new(
                EmbeddedVoice::baraka().with_lexicon(lexicon.clone()),
            )),
        );
        registry
    }

    /// The server's lexicon (the shipped one with the operator's `tts.lexicon_path` laid over it).
    pub fn lexicon(&self) -> &Arc<Lexicon> {
        &self.lexicon
    }

    /// The tone-colour converter, when installed.
    pub fn converter(&self) -> Option<&Arc<crate::clone::tone::ToneConverter>> {
        self.converter.as_ref()
    }

    /// The first active Swahili voice of a neural engine, if any (the best base for a neural clone).
    pub fn neural_swahili(&self) -> Option<String> {
        self.entries
            .iter()
            .find(|e| {
                e.synthesizer.is_ok()
                    && e.info.engine != "formant"
                    && e.info.language_code.eq_ignore_ascii_case("sw")
            })
            .map(|e| e.info.voice_id.clone())
    }

    /// The built-in voices and every configured neural voice (loaded now; a voice that cannot load is listed
    /// inactive with the reason, and the server still starts).
    pub fn from_settings(settings: &Settings, lexicon: &Lexicon) -> Self {
        let mut registry = Self::builtin_with(lexicon);
        registry.converter = crate::clone::neural::load_converter(settings);
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
                created_at: None,
                similarity: None,
                warnings: Vec::new(),
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
        self.entries_json = std::sync::OnceLock::new();
    }

    /// A voice as `owner` (a key id) may see it: the server's voices and the owner's cloned voices.
    pub fn get_for(&self, owner: &str, voice_id: &str) -> Option<VoiceInfo> {
        if let Some(info) = self.get(voice_id) {
            return Some(info.clone());
        }
        self.read_cloned()
            .iter()
            .find(|c| c.owner == owner && c.entry.info.voice_id == voice_id)
            .map(|c| c.entry.info.clone())
    }

    /// The body of the voice list `owner` sees (or of one language), `{"voices": [...]}`: the server's voices,
    /// from JSON written once, then the owner's cloned voices.
    pub fn list_json_for(&self, owner: &str, language: Option<&str>) -> Bytes {
        let written = self.entries_json.get_or_init(|| {
            let each: Vec<String> = self
                .entries
                .iter()
                .map(|e| serde_json::to_string(&e.info).unwrap_or_default())
                .collect();
            let all = Bytes::from(list_body(each.iter().map(String::as_str)));
            Written { each, all }
        });
        let cloned = self.read_cloned();
        let mut owned = cloned.iter().filter(|c| c.owner == owner).peekable();
        if language.is_none() && owned.peek().is_none() {
            return written.all.clone();
        }
        let wanted =
            |info: &VoiceInfo| language.is_none_or(|l| info.language_code.eq_ignore_ascii_case(l));
        let server = self
            .entries
            .iter()
            .zip(&written.each)
            .filter(|(entry, _)| wanted(&entry.info))
            .map(|(_, json)| std::borrow::Cow::Borrowed(json.as_str()));
        let theirs = owned.filter(|c| wanted(&c.entry.info)).map(|c| {
            std::borrow::Cow::Owned(serde_json::to_string(&c.entry.info).unwrap_or_default())
        });
        let parts: Vec<std::borrow::Cow<str>> = server.chain(theirs).collect();
        Bytes::from(list_body(parts.iter().map(|p| p.as_ref())))
    }

    /// Add a cloned voice owned by `owner` (replacing one with the same id); an `Err` lists it as inactive
    /// with that reason.
    pub fn add_cloned(
        &self,
        owner: &str,
        mut info: VoiceInfo,
        synthesizer: Result<Arc<dyn Synthesizer>, String>,
    ) {
        if let Err(reason) = &synthesizer {
            info.status = VoiceStatus::Inactive;
            info.status_detail = Some(reason.clone());
        }
        let mut cloned = self.write_cloned();
        cloned.retain(|c| c.entry.info.voice_id != info.voice_id);
        cloned.push(Cloned {
            owner: owner.to_string(),
            entry: Entry { info, synthesizer },
        });
    }

    /// Remove `owner`'s cloned voice; whether there was one.
    pub fn remove_cloned(&self, owner: &str, voice_id: &str) -> bool {
        let mut cloned = self.write_cloned();
        let before = cloned.len();
        cloned.retain(|c| !(c.owner == owner && c.entry.info.voice_id == voice_id));
        cloned.len() != before
    }

    /// Every cloned voice here, as (owner, voice id).
    pub fn cloned_ids(&self) -> Vec<(String, String)> {
        self.read_cloned()
            .iter()
            .map(|c| (c.owner.clone(), c.entry.info.voice_id.clone()))
            .collect()
    }

    /// How many cloned voices `owner` has.
    pub fn cloned_count(&self, owner: &str) -> usize {
        self.read_cloned()
            .iter()
            .filter(|c| c.owner == owner)
            .count()
    }

    fn read_cloned(&self) -> std::sync::RwLockReadGuard<'_, Vec<Cloned>> {
        self.cloned
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write_cloned(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Cloned>> {
        self.cloned
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One of the server's own voices (built-in or configured), whoever asks.
    pub fn get(&self, voice_id: &str) -> Option<&VoiceInfo> {
        self.entries
            .iter()
            .find(|e| e.info.voice_id == voice_id)
            .map(|e| &e.info)
    }

    /// The synthesizer of a voice as `owner` may use it: one of the server's voices, or a cloned voice of
    /// `owner`'s. `None` for a voice unknown to `owner` (another key's cloned voice is unknown to it),
    /// `Err(reason)` for an inactive one. The TtsActor speaks only through this, so ownership holds whichever
    /// path asked.
    pub fn synthesizer_for(
        &self,
        owner: &str,
        voice_id: &str,
    ) -> Option<Result<Arc<dyn Synthesizer>, String>> {
        self.get_for(owner, voice_id)?;
        self.synthesizer(voice_id)
    }

    /// The synthesizer of a voice, whoever owns it: `None` for an unknown voice, `Err(reason)` for an
    /// inactive one. For the server's own work on voices (cloning over a base voice); requests go through
    /// [`Self::synthesizer_for`].
    pub fn synthesizer(&self, voice_id: &str) -> Option<Result<Arc<dyn Synthesizer>, String>> {
        self.entries
            .iter()
            .find(|e| e.info.voice_id == voice_id)
            .map(|e| e.synthesizer.clone())
            .or_else(|| {
                self.read_cloned()
                    .iter()
                    .find(|c| c.entry.info.voice_id == voice_id)
                    .map(|c| c.entry.synthesizer.clone())
            })
    }

    /// Every voice `owner` sees: the server's own, then the owner's cloned voices.
    pub fn list_for(&self, owner: &str) -> Vec<VoiceInfo> {
        let mut all = self.list(None);
        let cloned = self.read_cloned();
        all.extend(
            cloned
                .iter()
                .filter(|c| c.owner == owner)
                .map(|c| c.entry.info.clone()),
        );
        all
    }

    /// The server's own voices, or those of one language.
    pub fn list(&self, language: Option<&str>) -> Vec<VoiceInfo> {
        self.entries
            .iter()
            .filter(|e| language.is_none_or(|l| e.info.language_code.eq_ignore_ascii_case(l)))
            .map(|e| e.info.clone())
            .collect()
    }
}

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

/// Load one configured neural voice; the error says what is missing and how to install it.
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

/// `{"voices":[…]}` around the voices' JSON.
fn list_body<'a>(voices: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut body = String::with_capacity(16 + voices.clone().map(|v| v.len() + 1).sum::<usize>());
    body.push_str("{\"voices\":[");
    for (i, voice) in voices.enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(voice);
    }
    body.push_str("]}");
    body
}
