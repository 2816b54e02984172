//! Speech recognition: the [`Recognizer`] trait the AsrActor owns, Whisper behind it ([`whisper`]), Whisper's
//! log-mel front end ([`mel`]) and the plan that cuts long audio into 30 s windows at pauses ([`windows`]).

pub mod captions;
pub mod ctc;
pub mod eval;
pub mod mel;
pub mod routing;
pub mod whisper;
pub mod windows;

use serde::Serialize;

/// Languages the API accepts (ISO 639-1), `sw` first: the default.
pub const LANGUAGES: [&str; 11] = [
    "sw", "en", "fr", "de", "es", "pt", "ar", "zh", "ja", "ko", "ru",
];

/// The language used when a request names none.
pub const DEFAULT_LANGUAGE: &str = "sw";

/// What recognition writes: the words as spoken, or their English translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Text in the spoken language.
    Transcribe,
    /// English text (Whisper's translate task).
    Translate,
}

/// What a caller knows of the audio besides its language: words likely to be said, and text that came before.
#[derive(Debug, Clone, PartialEq)]
pub struct Hints {
    /// Words and phrases to favour (ElevenLabs' `keyterms`): names, places, products.
    pub keyterms: Vec<String>,
    /// Text said before this audio, or written in its style (OpenAI's `prompt`).
    pub prompt: String,
    /// Whether Whisper writes its timestamps (segments for captions, words), as it does by default: the same
    /// audio then reads the same in every answer. Off where a CTC model aligns the words instead.
    pub timed: bool,
}

impl Default for Hints {
    fn default() -> Self {
        Self {
            keyterms: Vec::new(),
            prompt: String::new(),
            timed: true,
        }
    }
}

impl Hints {
    /// Whether there is nothing to go on.
    pub fn is_empty(&self) -> bool {
        self.keyterms.is_empty() && self.prompt.trim().is_empty()
    }
}

/// One decoded stretch of audio.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Segment {
    /// Start in seconds from the beginning of the audio.
    pub start: f64,
    /// End in seconds.
    pub end: f64,
    /// What was said in it.
    pub text: String,
}

impl Segment {
    /// Its words over its time, each as long as its share of the letters (for engines that time segments, not
    /// words).
    pub fn words_by_length(&self) -> Vec<Word> {
        let words: Vec<&str> = self.text.split_whitespace().collect();
        let letters: usize = words.iter().map(|w| w.chars().count()).sum();
        let per_letter = (self.end - self.start) / letters.max(1) as f64;
        let mut at = self.start;
        words
            .into_iter()
            .map(|word| {
                let start = at;
                at += word.chars().count() as f64 * per_letter;
                Word {
                    word: word.to_string(),
                    start,
                    end: at.min(self.end),
                }
            })
            .collect()
    }
}

/// One word and when it was said.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Word {
    /// The word.
    pub word: String,
    /// Start in seconds from the beginning of the audio.
    pub start: f64,
    /// End in seconds.
    pub end: f64,
}

/// Where a transcript's word times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WordTiming {
    /// No word times (Whisper with no CTC model for the language).
    #[default]
    None,
    /// The CTC model that recognised the words timed them from its own frames.
    Ctc,
    /// Whisper's words force-aligned with the CTC model installed for the language.
    ForcedAlignment,
    /// Whisper's own timestamps time its segments; each word takes its share of its segment by length.
    WhisperTimestamps,
}

impl WordTiming {
    /// The name the `sauti-word-timing` header gives it.
    pub fn name(self) -> &'static str {
        match self {
            WordTiming::None => "none",
            WordTiming::Ctc => "ctc",
            WordTiming::ForcedAlignment => "forced-alignment",
            WordTiming::WhisperTimestamps => "whisper-timestamps",
        }
    }
}

/// What a recognizer heard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transcript {
    /// The whole transcript: the segments' texts joined by spaces.
    pub text: String,
    /// The decoded stretches, in order (empty when no speech was found).
    pub segments: Vec<Segment>,
    /// Every word with its times, from engines that align words with the audio (empty from the others).
    pub words: Vec<Word>,
    /// Where the word times come from.
    pub timing: WordTiming,
}

impl Transcript {
    /// The transcript of timed words: segments break where the words pause for `pause` seconds or more.
    pub fn from_words(words: Vec<Word>, pause: f64) -> Self {
        let mut segments: Vec<Segment> = Vec::new();
        for word in &words {
            match segments.last_mut() {
                Some(segment) if word.start - segment.end < pause => {
                    segment.text.push(' ');
                    segment.text.push_str(&word.word);
                    segment.end = word.end;
                }
                _ => segments.push(Segment {
                    start: word.start,
                    end: word.end,
                    text: word.word.clone(),
                }),
            }
        }
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            text,
            segments,
            words,
            timing: WordTiming::Ctc,
        }
    }
}

/// Why recognition gave no transcript.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum AsrError {
    /// The model has no token for this language (422).
    #[error("the speech recognition model does not know the language {0:?}")]
    UnsupportedLanguage(String),
    /// The model failed on this input (503 so the client may retry).
    #[error("speech recognition failed: {0}")]
    Engine(String),
    /// No model for this language is installed (503, with what to install).
    #[error("speech recognition is not available: {0}")]
    Unavailable(String),
    /// The caller went away or its deadline passed; recognition stopped at a window boundary.
    #[error("speech recognition was stopped: the caller went away or its time ran out")]
    Cancelled,
}

/// Speech to text: 16 kHz mono samples in, a transcript out. Implementations are shared across threads.
pub trait Recognizer: Send + Sync {
    /// Transcribe `samples` (16 kHz mono) spoken in `language` (an ISO 639-1 code).
    fn transcribe(&self, samples: &[f32], language: &str) -> Result<Transcript, AsrError> {
        self.transcribe_until(samples, language, &crate::cancel::Cancel::new())
    }

    /// [`Recognizer::transcribe`], stopping with [`AsrError::Cancelled`] at the next unit of work (a 30-second
    /// window) once `cancel` is set.
    fn transcribe_until(
        &self,
        samples: &[f32],
        language: &str,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        self.recognise(
            samples,
            language,
            Task::Transcribe,
            &Hints::default(),
            cancel,
        )
    }

    /// Speech in `language` written as English (Whisper's translate task), stopping like
    /// [`Recognizer::transcribe_until`].
    fn translate_until(
        &self,
        samples: &[f32],
        language: &str,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        self.recognise(
            samples,
            language,
            Task::Translate,
            &Hints::default(),
            cancel,
        )
    }

    /// `task` with `hints`, stopping like [`Recognizer::transcribe_until`]: Whisper reads the hints as the text
    /// before the audio, CTC models as words to favour. Engines that only transcribe answer a translation with
    /// [`transcribes_only`].
    fn recognise(
        &self,
        samples: &[f32],
        language: &str,
        task: Task,
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError>;

    /// The engine's name, for metrics and logs.
    fn engine(&self) -> &'static str;

    /// The name of the engine that recognises `language` (the same for every language, except where recognition
    /// is routed by language).
    fn engine_for(&self, _language: &str) -> &'static str {
        self.engine()
    }
}

/// Why an engine that only transcribes cannot translate `language`.
pub fn transcribes_only(engine: &str, language: &str) -> AsrError {
    AsrError::Unavailable(format!(
        "the {engine} engine that recognises {language:?} transcribes only; translation needs a multilingual \
         Whisper model"
    ))
}

/// The languages a loaded recognizer serves and the engine that serves each (none when nothing loaded).
pub fn served(
    recognizer: &Result<std::sync::Arc<dyn Recognizer>, String>,
) -> Vec<(&'static str, &'static str)> {
    let Ok(recognizer) = recognizer else {
        return Vec::new();
    };
    LANGUAGES
        .iter()
        .map(|&language| (language, recognizer.engine_for(language)))
        .filter(|(_, engine)| *engine != "none")
        .collect()
}

/// Load the configured recognizers (Whisper, and the CTC models preferred for their languages), or say why there
/// is none and what to install (the 503 detail).
pub fn load(settings: &crate::config::Settings) -> Result<std::sync::Arc<dyn Recognizer>, String> {
    let routed = routing::Routed::load(settings);
    routed.available()?;
    Ok(std::sync::Arc::new(routed))
}
