use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::Semaphore;

use super::RecognitionError;
use crate::actors::admit;
use crate::asr::{AsrError, Recognizer, Task, Transcript};
use crate::cancel::Cancel;
use crate::telemetry::metrics;

/// Messages to the AsrActor.
pub enum ToAsrActor {
    /// Transcribe audio.
    Transcribe {
        /// 16 kHz mono samples.
        samples: Arc<Vec<f32>>,
        /// ISO 639-1 code.
        language: String,
        /// Transcribe, or translate into English.
        task: Task,
        /// Set when the caller stops waiting; recognition stops at its next window.
        cancel: Cancel,
        /// Where the transcript goes.
        reply: RpcReplyPort<Result<Transcript, RecognitionError>>,
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
    /// Recognitions running at once.
    pub running: Arc<Semaphore>,
}

/// Owns the recognizer; each admitted request runs on a blocking thread so the mailbox never stalls.
pub struct AsrActor;

impl Actor for AsrActor {
    type Msg = ToAsrActor;
    type State = AsrArgs;
    type Arguments = AsrArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: AsrArgs,
    ) -> Result<AsrArgs, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut AsrArgs,
    ) -> Result<(), ActorProcessingErr> {
        #[cfg(feature = "fault-injection")]
        crate::actors::faults::maybe_panic("asr");
        match message {
            ToAsrActor::Availability(reply) => {
                let _ = reply.send(
                    state
                        .recognizer
                        .as_ref()
                        .map(|_| ())
                        .map_err(|why| RecognitionError::Unavailable(why.clone())),
                );
            }
            ToAsrActor::Transcribe {
                samples,
                language,
                task,
                cancel,
                reply,
            } => {
                let recognizer = match &state.recognizer {
                    Ok(recognizer) => Arc::clone(recognizer),
                    Err(why) => {
                        let _ = reply.send(Err(RecognitionError::Unavailable(why.clone())));
                        return Ok(());
                    }
                };
                let admitted = match admit(&state.admission, "asr", "speech recognition", 5) {
                    Ok(admitted) => admitted,
                    Err(busy) => {
                        let _ = reply.send(Err(RecognitionError::Actor(busy)));
                        return Ok(());
                    }
                };
                let running = Arc::clone(&state.running);
                tokio::spawn(async move {
                    let _admitted = admitted;
                    // A caller that leaves while this waits for a turn costs nothing more: its audio is let go
                    // at once, not held until a recognizer frees.
                    let turn = tokio::select! {
                        turn = running.acquire_owned() => turn.ok(),
                        () = cancel.cancelled() => None,
                    };
                    let Some(_turn) = turn else {
                        ::metrics::counter!(metrics::CANCELLED_WORK, "actor" => "asr").increment(1);
                        return;
                    };
                    if cancel.is_cancelled() {
                        ::metrics::counter!(metrics::CANCELLED_WORK, "actor" => "asr").increment(1);
                        return;
                    }
                    let outcome = tokio::task::spawn_blocking(move || {
                        run(recognizer.as_ref(), &samples, &language, task, &cancel)
                    })
                    .await
                    .unwrap_or_else(|_| {
                        Err(AsrError::Engine(
                            "the recognizer stopped unexpectedly".into(),
                        ))
                    });
                    let _ = reply.send(outcome.map_err(RecognitionError::from));
                });
            }
        }
        Ok(())
    }
}

/// Transcribe, turning a panic inside the engine into an error for this request alone.
fn run(
    recognizer: &dyn Recognizer,
    samples: &[f32],
    language: &str,
    task: Task,
    cancel: &Cancel,
) -> Result<Transcript, AsrError> {
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| match task {
        Task::Transcribe => recognizer.transcribe_until(samples, language, cancel),
        Task::Translate => recognizer.translate_until(samples, language, cancel),
    }))
    .unwrap_or_else(|_| {
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
