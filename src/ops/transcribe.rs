//! Recognition of an uploaded recording, however it is asked for (the native API, ElevenLabs' speech to text,
//! OpenAI's transcriptions and translations): the language checked, the audio decoded within the codec
//! permits (422 when it cannot be), then recognised once a recognizer is there (503 when none is).

use std::sync::Arc;

use super::usage::{self, Usage};
use super::Service;
use crate::asr::{Task, Transcript, DEFAULT_LANGUAGE, LANGUAGES};
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
