//! Which model recognises which language: `[[asr.ctc]]` entries name CTC acoustic models preferred for their
//! languages; every other language, and a preferred model's languages while it is not installed, go to Whisper.
//! The choice depends only on the language and on what loaded at start-up.

use std::sync::Arc;

use super::ctc::beam::SearchOptions;
use super::ctc::lm::Weights;
use super::ctc::{Ctc, CtcOptions};
use super::whisper::{Whisper, WhisperOptions};
use super::{AsrError, Hints, Recognizer, Task, Transcript, WordTiming};
use crate::config::{CtcRoute, Settings};
use crate::models::ModelError;

/// A model, or why it is not there (with what to install).
type Loaded = Result<Arc<dyn Recognizer>, String>;

/// One preferred model, the languages it takes and those whose Whisper transcripts it times.
struct Preferred {
    languages: Vec<String>,
    align: Vec<String>,
    model: Loaded,
    ctc: Option<Arc<Ctc>>,
}

/// Recognition routed by language.
pub struct Routed {
    preferred: Vec<Preferred>,
    whisper: Loaded,
}

/// What recognises one language: the engine and where its model lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageRoute {
    /// ISO 639-1 code.
    pub language: String,
    /// `ctc` or `whisper`.
    pub engine: String,
    /// The model's catalog entry (or folder).
    pub model: String,
    /// Whether the model is installed and loaded.
    pub available: bool,
}

impl Routed {
    /// Load Whisper and every preferred model of `settings`.
    pub fn load(settings: &Settings) -> Self {
        let asr = &settings.asr;
        let whisper = {
            let dir = settings.models.dir.join(&asr.model);
            let options = WhisperOptions {
                sessions: asr.workers,
                models: settings.models.clone(),
                max_new_tokens: asr.max_new_tokens,
                variant: asr.variant.clone(),
            };
            let window = std::time::Duration::from_millis(asr.batch_window_ms);
            loaded(
                Whisper::load(&dir, &options)
                    .map(|m| Arc::new(m.batched(asr.batch_size, window)) as Arc<dyn Recognizer>),
                "the Whisper model",
                &asr.catalog,
                &dir,
            )
        };
        let preferred = asr
            .ctc
            .iter()
            .map(|route| {
                let ctc = load_ctc(settings, route);
                Preferred {
                    languages: route.languages.clone(),
                    align: route.align.clone(),
                    model: ctc.clone().map(|m| m as Arc<dyn Recognizer>),
                    ctc: ctc.ok(),
                }
            })
            .collect();
        Self { preferred, whisper }
    }

    /// Whether any model loaded; otherwise why none did.
    pub fn available(&self) -> Result<(), String> {
        if self.whisper.is_ok() || self.preferred.iter().any(|p| p.model.is_ok()) {
            return Ok(());
        }
        let mut reasons: Vec<&str> = self
            .preferred
            .iter()
            .filter_map(|p| p.model.as_ref().err())
            .map(String::as_str)
            .collect();
        reasons.extend(self.whisper.as_ref().err().map(String::as_str));
        Err(reasons.join("; "))
    }

    /// The model for `language`: its preferred model when installed, else Whisper.
    fn model_for(&self, language: &str) -> Result<&Arc<dyn Recognizer>, String> {
        let preferred = self
            .preferred
            .iter()
            .find(|p| p.languages.iter().any(|l| l == language));
        match (preferred.map(|p| &p.model), &self.whisper) {
            (Some(Ok(model)), _) | (_, Ok(model)) => Ok(model),
            (Some(Err(why)), Err(whisper)) => Err(format!("{why}; or {whisper}")),
            (None, Err(whisper)) => Err(whisper.clone()),
        }
    }

    /// What recognises each of `languages`.
    pub fn routes(&self, languages: &[&str], settings: &Settings) -> Vec<LanguageRoute> {
        languages
            .iter()
            .map(|&language| {
                let route = settings
                    .asr
                    .ctc
                    .iter()
                    .zip(&self.preferred)
                    .find(|(_, p)| p.languages.iter().any(|l| l == language));
                let (engine, model, available) = match route {
                    Some((route, p)) if p.model.is_ok() || self.whisper.is_err() => (
                        "ctc",
                        name_of(&route.catalog, &route.model),
                        p.model.is_ok(),
                    ),
                    _ => (
                        "whisper",
                        name_of(&settings.asr.catalog, &settings.asr.model),
                        self.whisper.is_ok(),
                    ),
                };
                LanguageRoute {
                    language: language.to_string(),
                    engine: engine.to_string(),
                    model,
                    available,
                }
            })
            .collect()
    }
}

fn name_of(catalog: &str, folder: &std::path::Path) -> String {
    match catalog.is_empty() {
        true => folder.display().to_string(),
        false => catalog.to_string(),
    }
}

fn load_ctc(settings: &Settings, route: &CtcRoute) -> Result<Arc<Ctc>, String> {
    let dir = settings.models.dir.join(&route.model);
    let options = CtcOptions {
        sessions: settings.asr.workers,
        models: settings.models.clone(),
        variant: route.variant.clone(),
        window_seconds: route.window_seconds,
        overlap_seconds: route.overlap_seconds,
        lm: (!route.lm.as_os_str().is_empty()).then(|| {
            let weights = Weights {
                alpha: route.lm_alpha,
                beta: route.lm_beta,
                ..Weights::default()
            };
            (settings.models.dir.join(&route.lm), weights)
        }),
        search: SearchOptions {
            beam_width: route.beam_width.clamp(1, 1_000),
            hotword_weight: route.hotword_weight,
            ..SearchOptions::default()
        },
    };
    let window = std::time::Duration::from_millis(settings.asr.batch_window_ms);
    let ctc =
        Ctc::load(&dir, &options).map(|m| Arc::new(m.batched(settings.asr.batch_size, window)));
    let typed = ctc.as_ref().ok().cloned();
    loaded(
        ctc.map(|m| m as Arc<dyn Recognizer>),
        &format!("the CTC model for {}", route.languages.join(", ")),
        &route.catalog,
        &dir,
    )
    .map(|_| typed.expect("loaded"))
}

/// A loaded model, logged; or why it is missing, naming what to install.
fn loaded(
    model: Result<Arc<dyn Recognizer>, ModelError>,
    what: &str,
    catalog: &str,
    dir: &std::path::Path,
) -> Loaded {
    match model {
        Ok(model) => {
            tracing::info!(model = %dir.display(), engine = model.engine(), "speech recognition ready");
            Ok(model)
        }
        Err(error) => {
            let why = match &error {
                ModelError::Missing { .. } if !catalog.is_empty() => {
                    format!("{error}; install {what} with `sauti models fetch {catalog}`")
                }
                _ => error.to_string(),
            };
            tracing::warn!(reason = %why, "a speech recognition model is not available");
            Err(why)
        }
    }
}

impl Recognizer for Routed {
    /// Translation is Whisper's alone, whichever model transcribes the language; Whisper's words are aligned
    /// where a CTC route aligns the language.
    fn recognise(
        &self,
        samples: &[f32],
        language: &str,
        task: Task,
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        let model = match task {
            Task::Transcribe => self.model_for(language).map_err(AsrError::Unavailable)?,
            Task::Translate => self.whisper.as_ref().map_err(|why| {
                AsrError::Unavailable(format!("translation needs Whisper: {why}"))
            })?,
        };
        let aligner = self
            .preferred
            .iter()
            .filter(|p| p.align.iter().any(|l| l == language))
            .find_map(|p| p.ctc.as_ref());
        // With an aligner Whisper writes no timestamps: the alignment times the words.
        let wanted = hints.timed;
        let hints = &Hints {
            timed: wanted && aligner.is_none(),
            ..hints.clone()
        };
        let mut transcript = model.recognise(samples, language, task, hints, cancel)?;
        if let (Some(aligner), Task::Transcribe, WordTiming::None, true) =
            (aligner, task, transcript.timing, wanted)
        {
            transcript.words = aligner.align(samples, &transcript.segments, cancel)?;
            transcript.timing = WordTiming::ForcedAlignment;
        }
        Ok(transcript)
    }

    fn engine(&self) -> &'static str {
        "routed"
    }

    fn engine_for(&self, language: &str) -> &'static str {
        self.model_for(language)
            .map_or("none", |model| model.engine())
    }
}
