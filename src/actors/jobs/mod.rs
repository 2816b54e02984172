//! The JobsActor: long texts synthesised in the background, one persistent queue in SQLite. Every state change
//! is written before it is acted on, so a crash or restart loses nothing: queued and running jobs run again
//! and finish, succeeded ones keep their audio, and no job completes twice. A job the process stopped under
//! twice while it ran (a crash, an out-of-memory kill) is failed at the next start instead of run again.

mod actor;
mod runner;

pub use actor::{JobsActor, JobsArgs, ToJobsActor};

use std::time::Duration;

use super::{ActorError, ActorSlot};
use crate::storage::JobRecord;
use crate::tts::VoiceSettings;

const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a job request failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum JobsError {
    /// No job with this id for this key (404; other keys' jobs are reported the same way).
    #[error("job {0:?} not found")]
    NotFound(String),
    /// Audio asked for before the job finished (409).
    #[error("job {id:?} is {status}; its audio is available once it has succeeded")]
    NotReady {
        /// The job.
        id: String,
        /// Its current status.
        status: &'static str,
    },
    /// Audio asked for of a failed job (409).
    #[error("job {id:?} failed and has no audio: {reason}")]
    Failed {
        /// The job.
        id: String,
        /// Why it failed.
        reason: String,
    },
    /// A succeeded job whose audio is no longer stored (410; asking again cannot bring it back).
    #[error("job {0:?} succeeded, but its audio is no longer stored; create the job again")]
    AudioGone(String),
    /// Too many unfinished jobs for this key (429).
    #[error("at most {0} queued or running jobs per API key; wait for some to finish")]
    TooMany(usize),
    /// No such voice (404).
    #[error("voice {0:?} not found")]
    UnknownVoice(String),
    /// The data directory's disk is full (507): new jobs are refused until space returns.
    #[error("{0}")]
    NoSpace(String),
    /// The database or the audio folder failed (503).
    #[error("job storage failed: {0}")]
    Storage(String),
    /// The actor is restarting, crashed or timed out (503).
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// A new job's request.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// The key id that owns it.
    pub owner: String,
    /// The text.
    pub text: String,
    /// The voice.
    pub voice_id: String,
    /// Voice settings.
    pub settings: VoiceSettings,
    /// The rules of the pronunciation dictionaries it names, in order (empty: none).
    pub pronunciation: Vec<crate::tts::pronunciation::Rule>,
}

/// The public face of the JobsActor.
#[derive(Clone)]
pub struct JobsHandle {
    slot: ActorSlot<ToJobsActor>,
}

impl JobsHandle {
    /// A handle reading the given slot.
    pub fn new(slot: ActorSlot<ToJobsActor>) -> Self {
        Self { slot }
    }

    /// Queue a job; returns it as stored (status `queued`).
    pub async fn create(&self, job: NewJob) -> Result<JobRecord, JobsError> {
        self.slot
            .call(
                "jobs",
                |reply| ToJobsActor::Create { job, reply },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// A job of `owner` by id.
    pub async fn get(&self, owner: &str, id: &str) -> Result<JobRecord, JobsError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.slot
            .call(
                "jobs",
                |reply| ToJobsActor::Get { owner, id, reply },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// The WAV of a succeeded job of `owner`, opened for reading.
    pub async fn audio(&self, owner: &str, id: &str) -> Result<crate::storage::Blob, JobsError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.slot
            .call(
                "jobs",
                |reply| ToJobsActor::Audio { owner, id, reply },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// What wakes the actor when jobs may be waiting (queued by another replica, say).
    pub fn waker(&self) -> crate::storage::JobsWaker {
        let slot = self.slot.clone();
        std::sync::Arc::new(move || {
            let _ = slot.cast(ToJobsActor::Poll);
        })
    }

    /// Whether the actor runs and its database answers (readiness).
    pub async fn ready(&self) -> bool {
        self.slot
            .call("jobs", ToJobsActor::Ping, Duration::from_secs(5))
            .await
            .unwrap_or(false)
    }
}
