//! The supervised actor graph. A root supervisor spawns every component actor linked to itself and restarts
//! one that crashes; handles (`XHandle`) find the current incarnation through an [`ActorSlot`], so they keep
//! working across restarts, and a request whose actor dies under it gets [`ActorError::Crashed`] (503).
//!
//! - [`tts`] — synthesis with bounded admission on blocking threads.
//! - [`jobs`] — the persistent queue of long synthesis jobs.
//! - [`dialogue`] — scenarios, the dialogue backend and conversation sessions.
//! - [`asr`] — speech recognition with bounded admission on blocking threads.
//! - [`agent`] — one voice-agent turn: (recognition,) dialogue, then speech.
//! - [`clone`] — voice cloning: speaker analysis, storage and publication of cloned voices.
//! - [`realtime`] — one actor per live voice-agent conversation: turn-taking, streamed replies, barge-in.
//! - [`background`] — the service's background loops, started again when one panics or ends.
//! - [`supervisor`] — spawning, restart budget, readiness.
//! - [`work`] — the work each actor runs for its messages, owned by the actor; a panic fails one request.
//! - [`fair`] — the worker threads synthesis and recognition run on, shared fairly between API keys.

pub mod agent;
pub mod asr;
pub mod background;
pub mod clone;
pub mod dialogue;
pub mod fair;
#[cfg(feature = "fault-injection")]
pub mod faults;
pub mod jobs;
pub mod realtime;
pub mod supervisor;
pub mod tts;
pub mod work;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

/// Why a message to an actor got no answer, or a typed "cannot do that now".
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ActorError {
    /// The component is not part of this build yet.
    #[error("{0}")]
    NotAvailable(String),
    /// The actor is being restarted after a crash.
    #[error("the {0} component is restarting; try again shortly")]
    Restarting(&'static str),
    /// The actor died while handling this request.
    #[error("the {0} component failed while handling this request; try again")]
    Crashed(&'static str),
    /// The work for this request panicked; the actor and other requests carry on.
    #[error("the {0} component failed unexpectedly while working on this request; the request id finds it in the log")]
    Faulted(&'static str),
    /// No answer in time.
    #[error("the {0} component did not answer in time")]
    Timeout(&'static str),
    /// Admission refused: every worker is busy and the queue is full.
    #[error("the {component} queue is full; retry in {retry_after} s")]
    Busy {
        /// Which component.
        component: &'static str,
        /// Suggested wait in seconds.
        retry_after: u64,
    },
}

/// Where the current incarnation of an actor lives; the supervisor swaps it on restart.
pub struct ActorSlot<M> {
    current: Arc<RwLock<Option<ActorRef<M>>>>,
}

impl<M> Clone for ActorSlot<M> {
    fn clone(&self) -> Self {
        Self {
            current: Arc::clone(&self.current),
        }
    }
}

impl<M> Default for ActorSlot<M> {
    fn default() -> Self {
        Self {
            current: Arc::new(RwLock::new(None)),
        }
    }
}

impl<M: Send + 'static> ActorSlot<M> {
    /// The running actor, if any.
    pub fn get(&self) -> Option<ActorRef<M>> {
        self.current.read().ok().and_then(|guard| guard.clone())
    }

    /// Point the slot at a (re)started actor, or at nothing while it restarts.
    pub fn set(&self, actor: Option<ActorRef<M>>) {
        if let Ok(mut guard) = self.current.write() {
            *guard = actor;
        }
    }

    /// Ask the current actor and wait for its reply.
    pub async fn call<T: Send + 'static>(
        &self,
        component: &'static str,
        build: impl FnOnce(RpcReplyPort<T>) -> M,
        timeout: Duration,
    ) -> Result<T, ActorError> {
        let actor = self.get().ok_or(ActorError::Restarting(component))?;
        match actor.call(build, Some(timeout)).await {
            Ok(CallResult::Success(reply)) => Ok(reply),
            Ok(CallResult::Timeout) => Err(ActorError::Timeout(component)),
            Ok(CallResult::SenderError) => Err(ActorError::Crashed(component)),
            Err(_) => Err(ActorError::Restarting(component)),
        }
    }

    /// Send without waiting for a reply.
    pub fn cast(&self, message: M) -> Result<(), ActorError> {
        let actor = self.get().ok_or(ActorError::Restarting("actor"))?;
        actor
            .cast(message)
            .map_err(|_| ActorError::Restarting("actor"))
    }
}

/// Admit one request to a bounded component: a permit while there is room, else [`ActorError::Busy`] (and the
/// rejection counted for `/metrics` under `actor`).
pub fn admit(
    admission: &std::sync::Arc<tokio::sync::Semaphore>,
    actor: &'static str,
    component: &'static str,
    retry_after: u64,
) -> Result<tokio::sync::OwnedSemaphorePermit, ActorError> {
    std::sync::Arc::clone(admission)
        .try_acquire_owned()
        .map_err(|_| {
            metrics::counter!(crate::telemetry::metrics::BUSY_REJECTIONS, "actor" => actor)
                .increment(1);
            ActorError::Busy {
                component,
                retry_after,
            }
        })
}
