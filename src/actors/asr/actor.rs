use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RecognitionError;
use crate::actors::fair::WorkerPool;
use crate::actors::work::{self, Tied, WorkSet};
use crate::actors::{admit, ActorError};
use crate::asr::{AsrError, Hints, Recognizer, Task, Transcript};
use crate::cancel::Cancel;
use crate::telemetry::metrics;

/// Messages to the AsrActor.
pub enum ToAsrActor {
    /// Transcribe audio.
    Transcribe {
        /// The API key whose share of the recognition workers this uses.
        owner: String,
        /// 16 kHz mono samples.
        samples: Arc<Vec<f32>>,
        /// ISO 639-1 code.
        language: String,
        /// Transcribe, or translate into English.
        task: Task,
        /// Words to favour and the text before.
        hints: Hints,
        /// Set when the caller stops waiting; recognition stops at its next window.
        cancel: Cancel,
        /// Where the transcript goes, with how long the audio waited for a worker.
        reply: RpcReplyPort<Result<(Transcript, Duration), RecognitionError>>,
    },
    /// Is a recognizer installed?
    Availability(RpcReplyPort<Result<(), RecognitionError>>),
}

/// What the AsrActor is started with; shared across restarts.
#[derive(Clone)]
pub struct AsrArgs {
    /// The recognizer, or why there is none (what to install).
    pub recognizer: Result<Arc<dyn Recognizer>, String>,
    /// Permits for requests admitted (running + waiting); none left means 503 `server_busy`.
    pub admission: Arc<Semaphore>,
    /// The recognition workers, taken round-robin between API keys.
    pub pool: Arc<WorkerPool>,
}

/// Owns the recognizer; each admitted request waits in its key's queue for a recognition worker, so the mailbox
/// never stalls and one key's uploads cannot hold every worker. The work it started is tied to it: when it
/// stops, that work stops at its next window.
pub struct AsrActor;

/// The AsrActor's state: what it was started with, and the work it has running.
pub struct AsrState {
    args: AsrArgs,
    work: WorkSet,
}

impl Actor for AsrActor {
    type Msg = ToAsrActor;
    type State = AsrState;
    type Arguments = AsrArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: AsrArgs,
    ) -> Result<AsrState, ActorProcessingErr> {
        Ok(AsrState {
            args,
            work: WorkSet::new("asr"),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut AsrState,
    ) -> Result<(), ActorProcessingErr> {
        #[cfg(feature = "fault-injection")]
        crate::actors::faults::maybe_panic("asr");
        match message {
            ToAsrActor::Availability(reply) => {
                let _ = reply.send(
                    state
                        .args
                        .recognizer
                        .as_ref()
                        .map(|_| ())
                        .map_err(|why| RecognitionError::Unavailable(why.clone())),
                );
            }
            ToAsrActor::Transcribe {
                owner,
                samples,
                language,
                task,
                hints,
                cancel,
                reply,
            } => {
                let recognizer = match &state.args.recognizer {
                    Ok(recognizer) => Arc::clone(recognizer),
                    Err(why) => {
                        let _ = reply.send(Err(RecognitionError::Unavailable(why.clone())));
                        return Ok(());
                    }
                };
                let admitted = match admit(&state.args.admission, "asr", "speech recognition", 5) {
                    Ok(admitted) => admitted,
                    Err(busy) => {
                        let _ = reply.send(Err(RecognitionError::Actor(busy)));
                        return Ok(());
                    }
                };
                let job = Job {
                    recognizer,
                    samples,
                    language,
                    task,
                    hints,
                    cancel: cancel.clone(),
                    reply,
                    queued: Instant::now(),
                    _admitted: admitted,
                    _depth: Depth::counted(),
                    _tied: state.work.watch(&cancel),
                };
                queue(&state.args.pool, &mut state.work, &owner, job, cancel);
            }
        }
        Ok(())
    }
}

/// One admitted recognition: while it waits in its key's queue it holds the audio, an admission permit and a
/// place in the queue-depth gauge, all let go when it is dropped.
struct Job {
    recognizer: Arc<dyn Recognizer>,
    samples: Arc<Vec<f32>>,
    language: String,
    task: Task,
    hints: Hints,
    cancel: Cancel,
    reply: RpcReplyPort<Result<(Transcript, Duration), RecognitionError>>,
    /// When it was queued.
    queued: Instant,
    _admitted: OwnedSemaphorePermit,
    _depth: Depth,
    _tied: Tied,
}

impl Job {
    /// Recognise on this worker and answer; a panic in the work fails this request alone.
    fn run(self) {
        if self.cancel.is_cancelled() {
            ::metrics::counter!(metrics::CANCELLED_WORK, "actor" => "asr").increment(1);
            return;
        }
        let waited = self.queued.elapsed();
        ::metrics::histogram!(metrics::ASR_QUEUE_WAIT).record(waited.as_secs_f64());
        let outcome = work::catch("asr", || {
            #[cfg(feature = "fault-injection")]
            crate::actors::faults::maybe_panic("recognition");
            run(
                self.recognizer.as_ref(),
                &self.samples,
                &self.language,
                self.task,
                &self.hints,
                &self.cancel,
            )
        });
        let _ = self.reply.send(match outcome {
            Ok(outcome) => outcome
                .map(|transcript| (transcript, waited))
                .map_err(RecognitionError::from),
            Err(fault) => Err(RecognitionError::Actor(fault)),
        });
    }
}

/// Counts an admitted recognition in `sauti_actor_queue_depth{actor="asr"}` (waiting or running) while alive.
struct Depth;

impl Depth {
    fn counted() -> Self {
        ::metrics::gauge!(metrics::QUEUE_DEPTH, "actor" => "asr").increment(1.0);
        Self
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        ::metrics::gauge!(metrics::QUEUE_DEPTH, "actor" => "asr").decrement(1.0);
    }
}

/// Queue `job` in `owner`'s turn on the workers. A caller that leaves while its job waits costs nothing more:
/// the job (its audio, its admission permit) is let go at once, not held until a worker reaches it.
fn queue(pool: &WorkerPool, work: &mut WorkSet, owner: &str, job: Job, cancel: Cancel) {
    let waiting = Arc::new(Mutex::new(Some(job)));
    let taken = Arc::clone(&waiting);
    let queued = pool.run(owner, move || {
        if let Some(job) = take(&taken) {
            job.run();
        }
    });
    if !queued {
        tracing::error!("the recognition workers have stopped");
        if let Some(job) = take(&waiting) {
            let _ = job
                .reply
                .send(Err(RecognitionError::Actor(ActorError::Crashed("asr"))));
        }
        return;
    }
    // Ends when the caller's call ends, however it ends (it cancels on the way out).
    work.run(async move {
        cancel.cancelled().await;
        if take(&waiting).is_some() {
            ::metrics::counter!(metrics::CANCELLED_WORK, "actor" => "asr").increment(1);
        }
    });
}

/// The job still waiting in `slot`, if a worker has not taken it (nor a cancellation let it go).
fn take(slot: &Mutex<Option<Job>>) -> Option<Job> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Transcribe, turning a panic inside the engine into an error for this request alone.
fn run(
    recognizer: &dyn Recognizer,
    samples: &[f32],
    language: &str,
    task: Task,
    hints: &Hints,
    cancel: &Cancel,
) -> Result<Transcript, AsrError> {
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        recognizer.recognise(samples, language, task, hints, cancel)
    }))
    .unwrap_or_else(|_| {
        ::metrics::counter!(metrics::WORK_FAULTS, "actor" => "asr").increment(1);
        tracing::error!("the recognizer panicked");
        Err(AsrError::Engine(
            "the recognizer failed on this input".into(),
        ))
    });
    if outcome == Err(AsrError::Cancelled) {
        ::metrics::counter!(metrics::CANCELLED_WORK, "actor" => "asr").increment(1);
    }
    let seconds = samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
    let elapsed = started.elapsed().as_secs_f64();
    if outcome.is_ok() && seconds > 0.0 {
        ::metrics::counter!(metrics::ASR_AUDIO_MS, "engine" => recognizer.engine_for(language))
            .increment((seconds * 1000.0) as u64);
        ::metrics::histogram!(metrics::ASR_REAL_TIME_FACTOR, "engine" => recognizer.engine_for(language))
            .record(elapsed / seconds);
    }
    tracing::debug!(
        language,
        audio_seconds = seconds,
        elapsed_ms = (elapsed * 1000.0) as u64,
        ok = outcome.is_ok(),
        "transcribed"
    );
    outcome
}
