//! The CloneActor: turns reference recordings into cloned voices (analysis on a blocking thread, a bounded
//! number at a time), stores them and publishes them in the voice registry; deletes them for their owners.

mod actor;

pub use actor::{CloneActor, CloneArgs, ToCloneActor};

use std::time::Duration;

use super::{ActorError, ActorSlot};
use crate::clone::profile::ProfileError;
use crate::clone::ClonedVoiceSummary;
use crate::storage::StorageError;

/// Longest a caller waits for a voice to be built.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A cloning request: the decoded reference and what the form said.
#[derive(Debug, Clone)]
pub struct CloneRequest {
    /// Id of the caller's key (the owner).
    pub owner: String,
    /// Display name (already defaulted and cut).
    pub name: String,
    /// The `consent` field, recorded as provenance.
    pub consent: Option<String>,
    /// 16 kHz mono samples of the reference.
    pub samples: Vec<f32>,
    /// SHA-256 of the uploaded file, hex.
    pub source_sha256: String,
}

/// Why no voice was made or deleted.
#[derive(Debug, thiserror::Error)]
pub enum CloneError {
    /// The recording cannot be cloned from (422).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The owner has as many cloned voices as allowed (409).
    #[error("this key already has {0} cloned voices, the most allowed; delete one first (DELETE /v1/voices/{{voice_id}})")]
    TooMany(usize),
    /// The database failed (503).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The analysis failed on this input (503).
    #[error("voice cloning failed: {0}")]
    Engine(String),
    /// Busy, restarting, crashed or timed out (503).
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// The public face of the CloneActor.
#[derive(Clone)]
pub struct CloneHandle {
    slot: ActorSlot<ToCloneActor>,
}

impl CloneHandle {
    /// A handle reading the given slot.
    pub fn new(slot: ActorSlot<ToCloneActor>) -> Self {
        Self { slot }
    }

    /// Build, store and publish a cloned voice.
    pub async fn clone_voice(
        &self,
        request: CloneRequest,
    ) -> Result<ClonedVoiceSummary, CloneError> {
        self.slot
            .call(
                "clone",
                |reply| ToCloneActor::Clone { request, reply },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Delete `owner`'s cloned voice; `false` when it has none by that id.
    pub async fn delete(&self, owner: &str, voice_id: &str) -> Result<bool, CloneError> {
        let (owner, voice_id) = (owner.to_string(), voice_id.to_string());
        self.slot
            .call(
                "clone",
                |reply| ToCloneActor::Delete {
                    owner,
                    voice_id,
                    reply,
                },
                Duration::from_secs(30),
            )
            .await?
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}
