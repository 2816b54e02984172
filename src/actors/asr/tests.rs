//! The AsrActor's queue: keys take turns on the workers, a request that waits and is then given up lets go of
//! its audio and its place at once, and a recognizer that panics fails only its own request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ractor::Actor;
use tokio::sync::Semaphore;

use super::{AsrActor, AsrArgs, AsrHandle, RecognitionError};
use crate::actors::fair::WorkerPool;
use crate::actors::ActorSlot;
use crate::asr::{AsrError, Recognizer, Transcript};
use crate::cancel::Cancel;

/// Audio whose first sample is this is held until the gate opens.
const HELD: f32 = 0.0;
/// Audio whose first sample is this makes the recognizer panic.
const PANICS: f32 = 2.0;

/// A recognizer that holds some recognitions until its gate opens.
#[derive(Default)]
struct Gated {
    open: Mutex<bool>,
    opened: Condvar,
    /// Recognitions that have reached the gate (held, or passed once it opened).
    held: AtomicUsize,
}

impl Gated {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl Recognizer for Gated {
    fn recognise(
        &self,
        samples: &[f32],
        _language: &str,
        _task: crate::asr::Task,
        _hints: &crate::asr::Hints,
        _cancel: &Cancel,
    ) -> Result<Transcript, AsrError> {
        match samples.first() {
            Some(&HELD) => {
                self.held.fetch_add(1, Ordering::SeqCst);
                let mut open = self.open.lock().unwrap();
                while !*open {
                    open = self.opened.wait(open).unwrap();
                }
            }
            Some(&PANICS) => panic!("the engine failed"),
            _ => {}
        }
        Ok(Transcript::from_words(Vec::new(), 1.0))
    }

    fn engine(&self) -> &'static str {
        "gated"
    }
}

/// A running AsrActor with `workers` workers, its handle and its admission permits.
async fn start(workers: usize, gate: &Arc<Gated>) -> (AsrHandle, Arc<Semaphore>) {
    let admission = Arc::new(Semaphore::new(16));
    let recognizer: Arc<dyn Recognizer> = Arc::clone(gate) as Arc<dyn Recognizer>;
    let args = AsrArgs {
        recognizer: Ok(recognizer),
        admission: Arc::clone(&admission),
        pool: Arc::new(WorkerPool::new("asr-test", workers, 0).expect("threads")),
    };
    let (actor, _) = Actor::spawn(None, AsrActor, args).await.expect("actor");
    let slot = ActorSlot::default();
    slot.set(Some(actor));
    (AsrHandle::new(slot), admission)
}

fn audio(first: f32) -> Arc<Vec<f32>> {
    Arc::new(vec![first; 160])
}

/// Wait (with a deadline) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_key_is_recognised_while_one_key_holds_its_share() {
    let gate = Arc::new(Gated::default());
    let (asr, admission) = start(2, &gate).await;
    let busy: Vec<_> = (0..4)
        .map(|_| {
            let asr = asr.clone();
            tokio::spawn(async move { asr.transcribe("a", audio(HELD), "sw").await })
        })
        .collect();
    until("the busy key's requests admitted", || {
        admission.available_permits() == 12
    })
    .await;
    let other = tokio::time::timeout(
        Duration::from_secs(10),
        asr.transcribe("b", audio(1.0), "sw"),
    )
    .await
    .expect("another key's request waited behind the busy key's");
    assert!(other.is_ok(), "{other:?}");
    gate.open();
    for request in busy {
        assert!(request.await.unwrap().is_ok());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_request_given_up_lets_go_of_its_audio_at_once() {
    let gate = Arc::new(Gated::default());
    let (asr, admission) = start(1, &gate).await;
    let running = {
        let asr = asr.clone();
        tokio::spawn(async move { asr.transcribe("a", audio(HELD), "sw").await })
    };
    // The one worker is taken before the second request comes, so that one waits (sent together, the second
    // could reach the worker first, finish at once and leave nothing waiting to give up).
    until("the first request on the worker", || {
        gate.held.load(Ordering::SeqCst) == 1
    })
    .await;
    let samples = audio(1.0);
    let waiting = {
        let (asr, samples) = (asr.clone(), Arc::clone(&samples));
        tokio::spawn(async move { asr.transcribe("b", samples, "sw").await })
    };
    until("both requests admitted", || {
        admission.available_permits() == 14
    })
    .await;
    waiting.abort();
    until("the given-up request still holds its audio", || {
        Arc::strong_count(&samples) == 1
    })
    .await;
    until("the given-up request still holds its place", || {
        admission.available_permits() == 15
    })
    .await;
    gate.open();
    assert!(running.await.unwrap().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recognizer_that_panics_fails_only_its_own_request() {
    let gate = Arc::new(Gated::default());
    gate.open();
    let (asr, _) = start(1, &gate).await;
    let failed = asr.transcribe("a", audio(PANICS), "sw").await;
    assert!(
        matches!(failed, Err(RecognitionError::Asr(AsrError::Engine(_)))),
        "{failed:?}"
    );
    assert!(asr.transcribe("a", audio(1.0), "sw").await.is_ok());
}
