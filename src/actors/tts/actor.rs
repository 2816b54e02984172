use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::Semaphore;

use super::SynthesisError;
use crate::actors::ActorError;
use crate::tts::catalog::VoiceRegistry;
use crate::tts::VoiceSettings;

/// Messages to the TtsActor.
pub enum ToTtsActor {
    /// Synthesise text with a voice.
    Synthesize {
        /// Which voice.
        voice_id: String,
        /// Raw text (the voice normalises it).
        text: String,
        /// Voice settings.
        settings: VoiceSettings,
        /// Where the samples go.
        reply: RpcReplyPort<Result<Vec<f32>, SynthesisError>>,
    },
}

/// What the TtsActor is started with; shared across restarts so admission counts survive them.
#[derive(Clone)]
pub struct TtsArgs {
    /// The voices.
    pub voices: Arc<VoiceRegistry>,
    /// Permits for requests admitted (running + waiting); none left means 503 `server_busy`.
    pub admission: Arc<Semaphore>,
    /// Permits for running synthesis (the blocking worker count).
    pub workers: Arc<Semaphore>,
}

/// Owns the voices; runs each admitted request on a blocking thread so its mailbox never stalls.
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
            voice_id,
            text,
            settings,
            reply,
        } = message;
        if state.voices.get(&voice_id).is_none() {
            let _ = reply.send(Err(SynthesisError::UnknownVoice(voice_id)));
            return Ok(());
        }
        let Some(synthesizer) = state.voices.synthesizer(&voice_id) else {
            let _ = reply.send(Err(SynthesisError::InactiveVoice(voice_id)));
            return Ok(());
        };
        let Ok(admitted) = Arc::clone(&state.admission).try_acquire_owned() else {
            let busy = ActorError::Busy {
                component: "synthesis",
                retry_after: 2,
            };
            let _ = reply.send(Err(SynthesisError::Actor(busy)));
            return Ok(());
        };
        let workers = Arc::clone(&state.workers);
        tokio::spawn(async move {
            let _admitted = admitted;
            let Ok(_worker) = workers.acquire_owned().await else {
                let _ = reply.send(Err(SynthesisError::Engine(
                    "the worker pool is closed".into(),
                )));
                return;
            };
            let started = std::time::Instant::now();
            let chars = text.chars().count();
            let result =
                tokio::task::spawn_blocking(move || synthesizer.synthesize(&text, &settings)).await;
            let outcome = match result {
                Ok(Ok(samples)) => {
                    tracing::debug!(
                        voice_id,
                        chars,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "synthesised"
                    );
                    Ok(samples)
                }
                Ok(Err(invalid)) => Err(SynthesisError::Invalid(invalid)),
                Err(join) => {
                    tracing::error!(voice_id, error = %join, "synthesizer panicked");
                    Err(SynthesisError::Engine(
                        "the synthesizer failed on this input".into(),
                    ))
                }
            };
            let _ = reply.send(outcome);
        });
        Ok(())
    }
}
