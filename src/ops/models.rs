//! What this server has installed, for the model lists of every dialect: the synthesis engines with the voices
//! they speak (active voices only), and the recognition engines with the languages each serves (a language
//! routed to a CTC model that is not installed is Whisper's, as recognition routes it).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Service;
use crate::tts::catalog::VoiceStatus;

/// One installed engine and what it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Engine {
    /// `formant` (the embedded voices), `vits` (neural voices); `ctc` or `whisper` (recognition).
    #[schema(example = "ctc")]
    pub engine: String,
    /// ISO 639-1 codes of the languages it serves.
    #[schema(example = json!(["sw"]))]
    pub languages: Vec<String>,
    /// The voices it speaks (synthesis engines only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["zuri", "baraka"]))]
    pub voices: Vec<String>,
}

impl Service {
    /// The synthesis engines with an active voice, and their voices.
    pub fn speech_engines(&self) -> Vec<Engine> {
        let mut engines: BTreeMap<String, Engine> = BTreeMap::new();
        for voice in self.voices.list(None) {
            if voice.status != VoiceStatus::Active {
                continue;
            }
            let engine = engines
                .entry(voice.engine.clone())
                .or_insert_with(|| Engine {
                    engine: voice.engine.clone(),
                    languages: Vec::new(),
                    voices: Vec::new(),
                });
            if !engine.languages.contains(&voice.language_code) {
                engine.languages.push(voice.language_code.clone());
            }
            engine.voices.push(voice.voice_id);
        }
        engines.into_values().collect()
    }

    /// The recognition engines installed, and the languages each serves.
    pub fn recognition_engines(&self) -> Vec<Engine> {
        let mut engines: BTreeMap<&str, Engine> = BTreeMap::new();
        for &(language, engine) in self.recognition.iter() {
            engines
                .entry(engine)
                .or_insert_with(|| Engine {
                    engine: engine.to_string(),
                    languages: Vec::new(),
                    voices: Vec::new(),
                })
                .languages
                .push(language.to_string());
        }
        engines.into_values().collect()
    }
}
