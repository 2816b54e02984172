use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::spread::{self, Failure};
use super::{Delivery, SynthesisError, Synthesised};
use crate::actors::admit;
use crate::actors::fair::WorkerPool;
use crate::actors::work::{self, Tied, WorkSet};
use crate::cancel::Cancel;
use crate::tts::catalog::VoiceRegistry;
use crate::tts::lexicon::Lexicon;
use crate::tts::VoiceSettings;
use crate::tts::{SpokenWord, Synthesizer};

/// Messages to the TtsActor.
pub enum ToTtsActor {
    /// Synthesise text with a voice.
    Synthesize {
        /// The API key asking: its share of the workers is what this request uses.
        owner: String,
        /// Which voice.
        voice_id: String,
        /// Raw text (the voice normalises it).
        text: String,
        /// Voice settings.
        settings: VoiceSettings,
        /// The lexicon to read with in place of the voice's own (the request's pronunciation dictionaries).
        lexicon: Option<Arc<Lexicon>>,
        /// What to answer with.
        delivery: Delivery,
        /// Set when the caller stops waiting; the work stops at its next piece.
        cancel: Cancel,
        /// Where the audio goes.
        reply: RpcReplyPort<Result<Synthesised, SynthesisError>>,
    },
}

/// What the TtsActor is started with; shared across restarts so admission counts survive them.
#[derive(Clone)]
pub struct TtsArgs {
    /// The voices.
    pub voices: Arc<VoiceRegistry>,
    /// Permits for requests admitted (running + waiting); none left means 503 `server_busy`.
    pub admission: Arc<Semaphore>,
    /// The synthesis worker threads.
    pub pool: Arc<WorkerPool>,
}

/// Owns the voices; hands each admitted request to the worker threads so its mailbox never stalls. The work
/// it started is tied to it: when it stops, that work stops at its next piece.
pub struct TtsActor;

/// The TtsActor's state: what it was started with, and the work it has running.
pub struct TtsState {
    args: TtsArgs,
    work: WorkSet,
}

impl Actor for TtsActor {
    type Msg = ToTtsActor;
    type State = TtsState;
    type Arguments = TtsArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: TtsArgs,
    ) -> Result<TtsState, ActorProcessingErr> {
        Ok(TtsState {
            args,
            work: WorkSet::new("tts"),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut TtsState,
    ) -> Result<(), ActorProcessingErr> {
        #[cfg(feature = "fault-injection")]
        crate::actors::faults::maybe_panic("tts");
        let ToTtsActor::Synthesize {
            owner,
            voice_id,
            text,
            settings,
            lexicon,
            delivery,
            cancel,
            reply,
        } = message;
        let synthesizer = match state.args.voices.synthesizer_for(&owner, &voice_id) {
            None => {
                let _ = reply.send(Err(SynthesisError::UnknownVoice(voice_id)));
                return Ok(());
            }
            Some(Err(reason)) => {
                let _ = reply.send(Err(SynthesisError::InactiveVoice {
                    voice: voice_id,
                    reason,
                }));
                return Ok(());
            }
            Some(Ok(synthesizer)) => synthesizer,
        };
        let admitted = match admit(&state.args.admission, "tts", "synthesis", 2) {
            Ok(admitted) => admitted,
            Err(busy) => {
                let _ = reply.send(Err(SynthesisError::Actor(busy)));
                return Ok(());
            }
        };
        metrics::gauge!(crate::telemetry::metrics::QUEUE_DEPTH, "actor" => "tts").increment(1.0);
        let job = Job {
            tied: state.work.watch(&cancel),
            work: Work {
                pool: Arc::clone(&state.args.pool),
                owner: owner.clone(),
                synthesizer,
                voice_id,
                text,
                settings,
                lexicon,
                cancel,
            },
            delivery,
            reply,
        };
        if !state.args.pool.run(&owner, move || job.run(admitted)) {
            tracing::error!("the synthesis workers have stopped");
        }
        Ok(())
    }
}

/// Lowers the queue-depth gauge when a job ends, however it ends.
struct FinishedGuard;

impl Drop for FinishedGuard {
    fn drop(&mut self) {
        metrics::gauge!(crate::telemetry::metrics::QUEUE_DEPTH, "actor" => "tts").decrement(1.0);
    }
}

/// Characters, audio seconds and real-time factor of a finished synthesis, for `/metrics`.
fn record(job: &Work, samples: usize, elapsed: f64) {
    let seconds = samples as f64 / f64::from(crate::audio::SAMPLE_RATE);
    // Cloned voice ids are recorded as "cloned" (telemetry::labels).
    let voice = job.voice_id.clone();
    metrics::counter!(crate::telemetry::metrics::TTS_CHARACTERS, "voice" => voice.clone())
        .increment(job.text.chars().count() as u64);
    metrics::counter!(crate::telemetry::metrics::TTS_AUDIO_MS, "voice" => voice)
        .increment((seconds * 1000.0) as u64);
    if seconds > 0.0 {
        metrics::histogram!(crate::telemetry::metrics::TTS_REAL_TIME_FACTOR, "engine" => job.synthesizer.engine())
            .record(elapsed / seconds);
    }
}

/// One admitted synthesis request, run on a blocking worker.
struct Job {
    /// Ties the work to the actor that took the request.
    tied: Tied,
    work: Work,
    delivery: Delivery,
    reply: RpcReplyPort<Result<Synthesised, SynthesisError>>,
}

/// What to synthesise, and where.
struct Work {
    pool: Arc<WorkerPool>,
    owner: String,
    synthesizer: Arc<dyn Synthesizer>,
    voice_id: String,
    text: String,
    settings: VoiceSettings,
    lexicon: Option<Arc<Lexicon>>,
    cancel: Cancel,
}

impl Job {
    /// Synthesise and answer; the admission permit is held until delivery is done. A panic in the work fails
    /// this request alone.
    fn run(self, _admitted: OwnedSemaphorePermit) {
        let _finished = FinishedGuard;
        let Job {
            tied: _tied,
            work,
            delivery,
            reply,
        } = self;
        let stream = match &delivery {
            Delivery::Stream { out, .. } => Some(out.clone()),
            _ => None,
        };
        let mut reply = Some(reply);
        let done = work::catch("tts", || {
            #[cfg(feature = "fault-injection")]
            crate::actors::faults::maybe_panic("synthesis");
            work.deliver(delivery, &mut reply);
        });
        if let Err(fault) = done {
            match (reply.take(), stream) {
                (Some(reply), _) => {
                    let _ = reply.send(Err(SynthesisError::Actor(fault)));
                }
                (None, Some(out)) => {
                    let _ = out.send(Err(SynthesisError::Actor(fault)));
                }
                (None, None) => {}
            }
        }
    }
}

impl Work {
    /// Synthesise and answer through `reply` (taken once it is answered).
    fn deliver(
        self,
        delivery: Delivery,
        reply: &mut Option<RpcReplyPort<Result<Synthesised, SynthesisError>>>,
    ) {
        let started = std::time::Instant::now();
        let Some(answer) = reply.take() else { return };
        if let Delivery::Stream { timed, out } = delivery {
            if answer.send(Ok(Synthesised::Streaming)).is_ok() {
                self.stream(timed, out, started);
            }
            return;
        }
        // Put back until the outcome is known: a panic before then is answered with the fault.
        *reply = Some(answer);
        let outcome = self.synthesize(matches!(delivery, Delivery::Timed));
        if let Ok((samples, _)) = &outcome {
            record(&self, samples.len(), started.elapsed().as_secs_f64());
        }
        tracing::debug!(
            voice_id = self.voice_id,
            chars = self.text.chars().count(),
            ok = outcome.is_ok(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "synthesised"
        );
        let Some(reply) = reply.take() else { return };
        match (outcome, delivery) {
            // The caller hears of success at once; delivery runs here, where the samples are still in the
            // cache of the core that made them.
            (Ok((samples, _)), Delivery::Then(then)) => {
                let _ = reply.send(Ok(Synthesised::Delivering {
                    samples: samples.len(),
                }));
                let _ = work::catch("tts", || then(samples));
            }
            (Ok((samples, Some(words))), _) => {
                let _ = reply.send(Ok(Synthesised::Timed(samples, words)));
            }
            (Ok((samples, None)), _) => {
                let _ = reply.send(Ok(Synthesised::Samples(samples)));
            }
            (Err(error), _) => {
                let _ = reply.send(Err(error));
            }
        }
    }

    /// Hand on each piece as it is made; a failure is the stream's last item.
    fn stream(self, timed: bool, out: super::stream::PieceSender, started: std::time::Instant) {
        let outcome = super::stream::stream(
            &self.pool,
            &self.owner,
            &self.synthesizer,
            &self.text,
            &self.settings,
            self.lexicon.as_ref(),
            &self.cancel,
            timed,
            &out,
        );
        tracing::debug!(
            voice_id = self.voice_id,
            chars = self.text.chars().count(),
            ok = outcome.is_ok(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "synthesised as a stream"
        );
        match outcome {
            Ok(samples) => record(&self, samples, started.elapsed().as_secs_f64()),
            Err(failure) => {
                let _ = out.send(Err(failed(&self.voice_id, failure)));
            }
        }
    }

    /// Synthesise (over idle workers when there are any), turning a panic inside the synthesizer into an error
    /// for this request alone.
    /// The samples, and when each word was spoken if that was asked for.
    fn synthesize(
        &self,
        timed: bool,
    ) -> Result<(Vec<f32>, Option<Vec<SpokenWord>>), SynthesisError> {
        let outcome = match timed {
            false => spread::synthesize(
                &self.pool,
                &self.owner,
                &self.synthesizer,
                &self.text,
                &self.settings,
                self.lexicon.as_ref(),
                &self.cancel,
            )
            .map(|samples| (samples, None)),
            true => spread::synthesize_timed(
                &self.synthesizer,
                &self.text,
                &self.settings,
                self.lexicon.as_ref(),
                &self.cancel,
            )
            .and_then(|timed| timed.ok_or(Failure::Untimed))
            .map(|(samples, words)| (samples, Some(words))),
        };
        outcome.map_err(|failure| failed(&self.voice_id, failure))
    }
}

/// What a failed synthesis tells its caller (and the logs and metrics).
fn failed(voice_id: &str, failure: Failure) -> SynthesisError {
    match failure {
        Failure::Invalid(invalid) => SynthesisError::Invalid(invalid),
        Failure::Untimed => SynthesisError::Untimed(voice_id.to_string()),
        Failure::Cancelled => {
            metrics::counter!(crate::telemetry::metrics::CANCELLED_WORK, "actor" => "tts")
                .increment(1);
            tracing::info!(
                voice_id,
                "synthesis stopped: the caller went away or timed out"
            );
            SynthesisError::Actor(crate::actors::ActorError::Timeout("tts"))
        }
        Failure::Panicked => {
            metrics::counter!(crate::telemetry::metrics::WORK_FAULTS, "actor" => "tts")
                .increment(1);
            tracing::error!(voice_id, "synthesizer panicked");
            SynthesisError::Engine("the synthesizer failed on this input".into())
        }
    }
}
