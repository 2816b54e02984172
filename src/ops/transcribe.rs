//! Recognition of an uploaded recording, however it is asked for (the native API, ElevenLabs' speech to text,
//! OpenAI's transcriptions and translations): the language checked, the audio decoded within the codec
//! permits (422 when it cannot be), then recognised once a recognizer is there (503 when none is).

use std::sync::Arc;

use super::usage::{self, Usage};
use super::Service;
use crate::asr::{Hints, Task, Transcript, DEFAULT_LANGUAGE, LANGUAGES};
use crate::problem::ApiError;
use crate::storage::usage::UsageKind;

/// A recording to recognise.
pub struct Transcribe {
    /// The key asking (whose share of the recognition workers is used).
    pub owner: String,
    /// The upload's audio, or why there is none.
    pub audio: Result<Vec<u8>, ApiError>,
    /// The language it is spoken in, checked with [`language`].
    pub language: String,
    /// Transcribe, or translate into English.
    pub task: Task,
    /// Words to favour and the text before (checked with [`hints`]).
    pub hints: Hints,
}

/// What was heard, and how long the recording is in seconds (to the millisecond).
pub struct Heard {
    /// The transcript.
    pub transcript: Transcript,
    /// The recording's length.
    pub duration_seconds: f64,
}

/// The request's language, `sw` when none is given; anything outside the spec's eleven codes is 422.
pub fn language(given: Option<&str>) -> Result<String, ApiError> {
    let code = given.unwrap_or(DEFAULT_LANGUAGE).to_ascii_lowercase();
    if LANGUAGES.contains(&code.as_str()) {
        Ok(code)
    } else {
        Err(ApiError::unprocessable(format!(
            "unsupported language {code:?}; use one of {}",
            LANGUAGES.join(", ")
        )))
    }
}

/// At most this many key terms (as ElevenLabs takes), each at most [`MAX_KEYTERM_CHARS`] characters and
/// [`MAX_KEYTERM_WORDS`] words.
pub const MAX_KEYTERMS: usize = 1_000;
/// The longest key term.
pub const MAX_KEYTERM_CHARS: usize = 50;
/// The most words in one key term.
pub const MAX_KEYTERM_WORDS: usize = 5;
/// Characters a key term may not hold.
const KEYTERM_REFUSED: &[char] = &['<', '>', '{', '}', '[', ']', '\\'];
/// The longest prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 2_000;

/// The request's hints, checked (422 for too many or too long key terms, or too long a prompt), with times asked
/// for.
pub fn hints(keyterms: Vec<String>, prompt: Option<&str>) -> Result<Hints, ApiError> {
    let keyterms: Vec<String> = keyterms
        .into_iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    if keyterms.len() > MAX_KEYTERMS {
        return Err(ApiError::unprocessable(format!(
            "{} keyterms were given; at most {MAX_KEYTERMS} are taken",
            keyterms.len()
        )));
    }
    for term in &keyterms {
        let why = if term.chars().count() > MAX_KEYTERM_CHARS {
            format!("is longer than {MAX_KEYTERM_CHARS} characters")
        } else if term.split_whitespace().count() > MAX_KEYTERM_WORDS {
            format!("has more than {MAX_KEYTERM_WORDS} words")
        } else if term.contains(KEYTERM_REFUSED) {
            "holds one of < > { } [ ] \\".to_string()
        } else {
            continue;
        };
        return Err(ApiError::unprocessable(format!(
            "the keyterm {term:?} {why}"
        )));
    }
    let prompt = prompt.unwrap_or_default().trim().to_string();
    if prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(ApiError::unprocessable(format!(
            "`prompt` is longer than {MAX_PROMPT_CHARS} characters"
        )));
    }
    // Every transcription answer is decoded the same way, whatever its format asks for, so a `json` and a
    // `verbose_json` answer for the same audio say the same words.
    Ok(Hints {
        keyterms,
        prompt,
        timed: true,
    })
}

impl Service {
    /// Recognise a recording.
    pub async fn transcribe(&self, request: Transcribe) -> Result<Heard, ApiError> {
        let audio = self.decode(request.audio?, Default::default()).await?;
        self.graph.asr.ensure_available().await?;
        let duration_seconds = (audio.duration_seconds() * 1000.0).round() / 1000.0;
        let owner = &request.owner;
        self.charge(owner, UsageKind::AudioSeconds, "", duration_seconds)
            .await?;
        let recognised = self
            .graph
            .asr
            .recognise(
                owner,
                Arc::new(audio.samples),
                &request.language,
                request.task,
                request.hints,
            )
            .await;
        let transcript = match recognised {
            Ok(transcript) => transcript,
            Err(error) => {
                self.refund(owner, UsageKind::AudioSeconds, "", duration_seconds)
                    .await;
                return Err(error.into());
            }
        };
        usage::record(Usage::RecognisedSeconds(duration_seconds));
        Ok(Heard {
            transcript,
            duration_seconds,
        })
    }
}
