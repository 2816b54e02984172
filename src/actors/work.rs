//! The work an actor does for its messages, owned by the actor. Each actor hands a request's work (a dialogue
//! turn, a voice analysis, a job run) to its [`WorkSet`] instead of a detached task: the set is part of the
//! actor's state, so when the actor stops or is restarted its unfinished work is stopped with it, and nothing
//! it started outlives it. Work on the synthesis and recognition threads is tied to the set by the request's
//! [`Cancel`] flag ([`WorkSet::watch`]), which the set sets when it goes.
//!
//! A panic inside a piece of work is that request's failure alone: it is caught where the work runs
//! ([`WorkSet::answer`], [`catch`]), counted in `sauti_work_faults_total{actor}`, logged at error level, and
//! the caller is answered with [`ActorError::Faulted`] (500 `internal_error` over HTTP; a failed job for a job
//! run). The actor and every other request carry on.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use ractor::RpcReplyPort;
use tokio::task::JoinSet;

use super::ActorError;
use crate::cancel::Cancel;

/// One actor's running work.
pub struct WorkSet {
    actor: &'static str,
    tasks: JoinSet<()>,
    watched: Arc<Watched>,
}

/// The cancel flags of requests whose work runs on worker threads, by a number of their own.
#[derive(Default)]
struct Watched {
    next: AtomicU64,
    flags: Mutex<HashMap<u64, Cancel>>,
}

impl Watched {
    fn flags(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Cancel>> {
        self.flags.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Keeps a request's work on the worker threads tied to its actor's [`WorkSet`] until dropped (when the work
/// is done).
pub struct Tied {
    id: u64,
    watched: Arc<Watched>,
}

impl Drop for Tied {
    fn drop(&mut self) {
        self.watched.flags().remove(&self.id);
    }
}

impl WorkSet {
    /// An empty set for `actor` (the label its faults are counted under).
    pub fn new(actor: &'static str) -> Self {
        Self {
            actor,
            tasks: JoinSet::new(),
            watched: Arc::default(),
        }
    }

    /// Run `work` for a caller waiting on `reply`: the caller gets its outcome, or [`ActorError::Faulted`] if
    /// it panicked.
    pub fn answer<T, E>(
        &mut self,
        reply: RpcReplyPort<Result<T, E>>,
        work: impl Future<Output = Result<T, E>> + Send + 'static,
    ) where
        T: Send + 'static,
        E: From<ActorError> + Send + 'static,
    {
        let actor = self.actor;
        self.spawn(async move {
            let outcome = match catch_unwind(work).await {
                Ok(outcome) => outcome,
                Err(panic) => Err(fault(actor, panic.as_ref()).into()),
            };
            let _ = reply.send(outcome);
        });
    }

    /// Run `work`, which answers no one; a panic is counted and logged.
    pub fn run(&mut self, work: impl Future<Output = ()> + Send + 'static) {
        let actor = self.actor;
        self.spawn(async move {
            if let Err(panic) = catch_unwind(work).await {
                fault(actor, panic.as_ref());
            }
        });
    }

    /// Tie work that runs on the worker threads to this set: `cancel` is set if the set goes first.
    pub fn watch(&self, cancel: &Cancel) -> Tied {
        let id = self.watched.next.fetch_add(1, Ordering::Relaxed);
        self.watched.flags().insert(id, cancel.clone());
        Tied {
            id,
            watched: Arc::clone(&self.watched),
        }
    }

    /// Pieces of work running now (worker-thread work included).
    pub fn len(&mut self) -> usize {
        self.reap();
        self.tasks.len() + self.watched.flags().len()
    }

    /// Whether no work runs.
    pub fn is_empty(&mut self) -> bool {
        self.len() == 0
    }

    fn spawn(&mut self, work: impl Future<Output = ()> + Send + 'static) {
        self.reap();
        self.tasks.spawn(work);
    }

    /// Let go of finished tasks.
    fn reap(&mut self) {
        while let Some(finished) = self.tasks.try_join_next() {
            if let Err(error) = finished {
                if error.is_panic() {
                    fault(self.actor, error.into_panic().as_ref());
                }
            }
        }
    }
}

impl Drop for WorkSet {
    fn drop(&mut self) {
        let stopped = self.tasks.len();
        self.tasks.abort_all();
        let flags: Vec<Cancel> = self.watched.flags().drain().map(|(_, c)| c).collect();
        for flag in &flags {
            flag.cancel();
        }
        if stopped + flags.len() > 0 {
            tracing::warn!(
                actor = self.actor,
                stopped = stopped + flags.len(),
                "the actor stopped; its unfinished work stops with it"
            );
        }
    }
}

/// One task, owned by whoever holds this: stopped when it is dropped (or aborted); a panic is counted and logged.
pub struct OwnedTask(tokio::task::JoinHandle<()>);

impl OwnedTask {
    /// Start `work` as `actor`'s.
    pub fn spawn(actor: &'static str, work: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(tokio::spawn(async move {
            if let Err(panic) = catch_unwind(work).await {
                fault(actor, panic.as_ref());
            }
        }))
    }

    /// Stop the task at its next await.
    pub fn abort(&self) {
        self.0.abort();
    }
}

impl Drop for OwnedTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Run `work` on this thread; a panic becomes [`ActorError::Faulted`] (counted and logged).
pub fn catch<T>(actor: &'static str, work: impl FnOnce() -> T) -> Result<T, ActorError> {
    std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|panic| fault(actor, panic.as_ref()))
}

/// Run `work` to its end here; a panic becomes [`ActorError::Faulted`] (counted and logged).
pub async fn caught<T>(
    actor: &'static str,
    work: impl Future<Output = T>,
) -> Result<T, ActorError> {
    catch_unwind(work)
        .await
        .map_err(|panic| fault(actor, panic.as_ref()))
}

/// Count and log a panic of `actor`'s work; what its caller is told.
pub fn fault(actor: &'static str, panic: &(dyn std::any::Any + Send)) -> ActorError {
    let message = panic_message(panic);
    metrics::counter!(crate::telemetry::metrics::WORK_FAULTS, "actor" => actor).increment(1);
    tracing::error!(
        actor,
        panic = message,
        "work panicked; its request fails, the actor carries on"
    );
    ActorError::Faulted(actor)
}

/// What a panic said.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// `work`, with a panic inside it caught and returned.
pub fn catch_unwind<F: Future>(
    work: F,
) -> impl Future<Output = Result<F::Output, Box<dyn std::any::Any + Send>>> {
    CatchUnwind(Box::pin(work))
}

/// A future whose panic is caught and returned.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_answers_its_own_caller_and_the_set_carries_on() {
        let mut set = WorkSet::new("test");
        let (panicked, failed) = tokio::sync::oneshot::channel::<Result<u32, ActorError>>();
        let (fine, answered) = tokio::sync::oneshot::channel::<Result<u32, ActorError>>();
        set.answer(panicked.into(), async { panic!("boom") });
        set.answer(fine.into(), async { Ok(7) });
        assert_eq!(failed.await.unwrap(), Err(ActorError::Faulted("test")));
        assert_eq!(answered.await.unwrap(), Ok(7));
    }

    #[tokio::test]
    async fn dropping_the_set_stops_its_work() {
        let mut set = WorkSet::new("test");
        let (reply, answer) = tokio::sync::oneshot::channel::<Result<(), ActorError>>();
        set.answer(reply.into(), std::future::pending());
        let cancel = Cancel::new();
        let tied = set.watch(&cancel);
        assert_eq!(set.len(), 2);
        drop(set);
        assert!(answer.await.is_err(), "the caller hears the work has gone");
        assert!(cancel.is_cancelled());
        drop(tied);
    }

    #[test]
    fn a_finished_worker_thread_task_is_no_longer_watched() {
        let mut set = WorkSet::new("test");
        let cancel = Cancel::new();
        drop(set.watch(&cancel));
        assert!(set.is_empty());
        drop(set);
        assert!(!cancel.is_cancelled());
    }
}
