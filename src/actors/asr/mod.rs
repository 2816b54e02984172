//! The AsrActor: owns the recognizer and admits transcription requests to the recognition workers, a bounded
//! number at a time, queued per API key and served round-robin (one key may hold at most all workers but one).
//! Without a model it is still a running actor that answers "not available" with what to install.

mod actor;

pub use actor::{AsrActor, AsrArgs, ToAsrActor};

use std::sync::Arc;
use std::time::Duration;

use super::fair::WorkerPool;
use super::{ActorError, ActorSlot};
use crate::asr::{AsrError, Hints, Task, Transcript};
use crate::cancel::Cancel;

/// Longest a caller waits for a transcript (queueing included).
const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// Why recognition gave no transcript.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum RecognitionError {
    /// No model is installed or it failed to load (503, with what to install).
    #[error("speech recognition is not available: {0}")]
    Unavailable(String),
    /// The language is not one the model knows (422), or the model failed (503).
    #[error(transparent)]
    Asr(#[from] AsrError),
    /// Busy, restarting, crashed or timed out (503).
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// The public face of the AsrActor.
#[derive(Clone)]
pub struct AsrHandle {
    slot: ActorSlot<ToAsrActor>,
    /// The recognition workers, where the handle may tell whether one is free.
    workers: Option<Arc<WorkerPool>>,
}

impl AsrHandle {
    /// A handle reading the given slot.
    pub fn new(slot: ActorSlot<ToAsrActor>) -> Self {
        Self {
            slot,
            workers: None,
        }
    }

    /// The handle, able to tell whether a recognition worker is free (see [`AsrHandle::has_spare`]).
    pub fn with_workers(self, workers: Arc<WorkerPool>) -> Self {
        Self {
            workers: Some(workers),
            ..self
        }
    }

    /// Whether a recognition for `owner` would start at once: a worker is idle, within its key's share. For work
    /// worth doing only with capacity to spare (recognition while a caller speaks); true where not known.
    pub fn has_spare(&self, owner: &str) -> bool {
        self.workers
            .as_ref()
            .is_none_or(|workers| workers.idle_for(owner) > 0)
    }

    /// Transcribe 16 kHz mono samples spoken in `language` for `owner` (the API key whose share of the
    /// recognition workers it uses).
    pub async fn transcribe(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
    ) -> Result<Transcript, RecognitionError> {
        self.recognise(owner, samples, language, Task::Transcribe, Hints::default())
            .await
    }

    /// `task` on 16 kHz mono samples spoken in `language` with `hints`, for `owner` (an API key id).
    pub async fn recognise(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
        task: Task,
        hints: Hints,
    ) -> Result<Transcript, RecognitionError> {
        self.recognise_queued(owner, samples, language, task, hints)
            .await
            .map(|(transcript, _)| transcript)
    }

    /// [`AsrHandle::transcribe`], with how long the audio waited for a recognition worker (behind other keys'
    /// and its own key's work).
    pub async fn transcribe_queued(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
    ) -> Result<(Transcript, Duration), RecognitionError> {
        self.recognise_queued(owner, samples, language, Task::Transcribe, Hints::default())
            .await
    }

    async fn recognise_queued(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
        task: Task,
        hints: Hints,
    ) -> Result<(Transcript, Duration), RecognitionError> {
        let (owner, language) = (owner.to_string(), language.to_string());
        // Cancels the work when this call ends however it ends (an answer, the deadline, a client gone).
        let cancel = Cancel::new();
        let _stop_when_gone = cancel.on_drop();
        self.slot
            .call(
                "asr",
                |reply| ToAsrActor::Transcribe {
                    owner,
                    samples,
                    language,
                    task,
                    hints,
                    cancel,
                    reply,
                },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Fail fast (before an upload is read) when no recognizer is installed.
    pub async fn ensure_available(&self) -> Result<(), RecognitionError> {
        self.slot
            .call("asr", ToAsrActor::Availability, Duration::from_secs(10))
            .await?
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}

#[cfg(test)]
mod tests;
