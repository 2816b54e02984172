use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::pool::WorkerPool;
use super::spread::{self, Failure};
use super::{Delivery, SynthesisError, Synthesised};
use crate::actors::admit;
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

/// Owns the voices; hands each admitted request to the worker threads so its mailbox never stalls.
pub struct TtsActor;

impl Actor for TtsActor {
    type Msg = ToTtsActor;
    type State = TtsArgs;
    type Arguments = TtsArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: TtsArgs,
    ) -> Result<TtsArgs, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut TtsArgs,
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
        let synthesizer = match state.voices.synthesizer(&voice_id) {
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
        let admitted = match admit(&state.admission, "tts", "synthesis", 2) {
            Ok(admitted) => admitted,
            Err(busy) => {
                let _ = reply.send(Err(SynthesisError::Actor(busy)));
                return Ok(());
            }
        };
        metrics::gauge!(crate::telemetry::metrics::QUEUE_DEPTH, "actor" => "tts").increment(1.0);
        let job = Job {
            pool: Arc::clone(&state.pool),
            owner: owner.clone(),
            synthesizer,
            voice_id,
            text,
            settings,
            lexicon,
            delivery,
            cancel,
            reply,
        };
        if !state.pool.run(&owner, move || job.run(admitted)) {
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
fn record(job: &Job, samples: usize, elapsed: f64) {
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
    pool: Arc<WorkerPool>,
    owner: String,
    synthesizer: Arc<dyn Synthesizer>,
    voice_id: String,
    text: String,
    settings: VoiceSettings,
    lexicon: Option<Arc<Lexicon>>,
    delivery: Delivery,
    cancel: Cancel,
    reply: RpcReplyPort<Result<Synthesised, SynthesisError>>,
}

impl Job {
    /// Synthesise and answer; the admission permit is held until delivery is done.
    fn run(self, _admitted: OwnedSemaphorePermit) {
        let _finished = FinishedGuard;
        let started = std::time::Instant::now();
        let outcome = self.synthesize();
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
        match (outcome, self.delivery) {
            // The caller hears of success at once; delivery runs here, where the samples are still in the
            // cache of the core that made them.
            (Ok((samples, _)), Delivery::Then(then)) => {
                let _ = self.reply.send(Ok(Synthesised::Delivering {
                    samples: samples.len(),
                }));
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| then(samples))).is_err()
                {
                    tracing::error!(voice_id = self.voice_id, "synthesis delivery panicked");
                }
            }
            (Ok((samples, Some(words))), _) => {
                let _ = self.reply.send(Ok(Synthesised::Timed(samples, words)));
            }
            (Ok((samples, None)), _) => {
                let _ = self.reply.send(Ok(Synthesised::Samples(samples)));
            }
            (Err(error), _) => {
                let _ = self.reply.send(Err(error));
            }
        }
    }
}

impl Job {
    /// Synthesise (over idle workers when there are any), turning a panic inside the synthesizer into an error
    /// for this request alone.
    /// The samples, and when each word was spoken if that was asked for.
    fn synthesize(&self) -> Result<(Vec<f32>, Option<Vec<SpokenWord>>), SynthesisError> {
        let voice_id = &self.voice_id;
        let outcome = match matches!(self.delivery, Delivery::Timed) {
            false => spread::synthesize(
                &self.pool,
                &self.owner,
                &self.synthesizer,
                &self.text,
                &self.settings,
                self.lexicon.as_ref(),
                &self.cancel,
            )
            .map(|samples| Some((samples, None))),
            true => spread::synthesize_timed(
                &self.synthesizer,
                &self.text,
                &self.settings,
                self.lexicon.as_ref(),
                &self.cancel,
            )
            .map(|timed| timed.map(|(samples, words)| (samples, Some(words)))),
        };
        match outcome {
            Ok(Some(done)) => Ok(done),
            Ok(None) => Err(SynthesisError::Untimed(voice_id.clone())),
            Err(Failure::Invalid(invalid)) => Err(SynthesisError::Invalid(invalid)),
            Err(Failure::Cancelled) => {
                metrics::counter!(crate::telemetry::metrics::CANCELLED_WORK, "actor" => "tts")
                    .increment(1);
                tracing::info!(
                    voice_id,
                    "synthesis stopped: the caller went away or timed out"
                );
                Err(SynthesisError::Actor(crate::actors::ActorError::Timeout(
                    "tts",
                )))
            }
            Err(Failure::Panicked) => {
                tracing::error!(voice_id, "synthesizer panicked");
                Err(SynthesisError::Engine(
                    "the synthesizer failed on this input".into(),
                ))
            }
        }
    }
}
