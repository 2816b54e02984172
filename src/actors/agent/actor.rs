use std::time::Instant;

use base64::Engine as _;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::{AgentError, AgentRequest, AgentTurn, Speech, Timings};
use crate::actors::asr::AsrHandle;
use crate::actors::dialogue::{DialogueHandle, TurnRequest};
use crate::actors::tts::{SynthesisError, TtsHandle};
use crate::actors::work::WorkSet;
use crate::actors::ActorError;
use crate::audio;
use crate::tts::VoiceSettings;

/// Messages to the AgentActor.
pub enum ToAgentActor {
    /// A turn: text mode, or audio mode when `speech` is given.
    Converse {
        /// The turn.
        request: AgentRequest,
        /// The user's audio (audio mode).
        speech: Option<Speech>,
        /// Where the rendered turn goes.
        reply: RpcReplyPort<Result<AgentTurn, AgentError>>,
    },
}

/// The actors a turn goes through.
#[derive(Clone)]
pub struct AgentArgs {
    /// The dialogue layer.
    pub dialogue: DialogueHandle,
    /// Synthesis.
    pub tts: TtsHandle,
    /// Recognition (audio mode).
    pub asr: AsrHandle,
}

/// Runs turns, each as the actor's own work.
pub struct AgentActor;

/// The AgentActor's state: what it was started with, and the turns it has running.
pub struct AgentState {
    args: AgentArgs,
    work: WorkSet,
}

impl Actor for AgentActor {
    type Msg = ToAgentActor;
    type State = AgentState;
    type Arguments = AgentArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: AgentArgs,
    ) -> Result<AgentState, ActorProcessingErr> {
        Ok(AgentState {
            args,
            work: WorkSet::new("agent"),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut AgentState,
    ) -> Result<(), ActorProcessingErr> {
        let ToAgentActor::Converse {
            request,
            speech,
            reply,
        } = message;
        let args = state.args.clone();
        state
            .work
            .answer(reply, async move { turn(&args, request, speech).await });
        Ok(())
    }
}

async fn turn(
    state: &AgentArgs,
    mut request: AgentRequest,
    speech: Option<Speech>,
) -> Result<AgentTurn, AgentError> {
    let started = Instant::now();
    let mut asr_ms = None;
    if let Some(speech) = speech {
        let transcript = state
            .asr
            .transcribe(&request.owner, speech.samples, &speech.language)
            .await?;
        if transcript.text.trim().is_empty() {
            return Err(AgentError::NoSpeech);
        }
        request.text = transcript.text;
        asr_ms = Some(started.elapsed().as_millis() as u64);
    }
    // A secret the caller offered is never echoed back.
    let user_text = state.dialogue.shareable(&request.text);
    let heard = Instant::now();
    let dialogue = state
        .dialogue
        .turn(TurnRequest {
            owner: request.owner.clone(),
            scenario: request.scenario.clone(),
            session_id: request.session_id,
            text: request.text,
            heard_before: None,
            keys: false,
            keypad: false,
            variables: Default::default(),
        })
        .await?;
    let dialogue_ms = heard.elapsed().as_millis() as u64;
    let spoken = Instant::now();
    let lexicon = bounded_reading(request.pronunciation.clone(), &dialogue.reply.text);
    let (samples, audio_base64) = speak(
        state,
        &request.owner,
        &request.voice_id,
        &dialogue.reply.text,
        lexicon,
        request.format,
    )
    .await?;
    let tts_ms = spoken.elapsed().as_millis() as u64;
    Ok(AgentTurn {
        scenario: dialogue.scenario,
        user_text,
        agent_text: dialogue.reply.text,
        audio_base64,
        duration_seconds: samples as f64 / f64::from(audio::SAMPLE_RATE),
        session_id: dialogue.session_id,
        outcome: dialogue.reply.outcome,
        actions: dialogue.reply.actions,
        timings: Timings {
            asr: asr_ms,
            dialogue: dialogue_ms,
            tts: tts_ms,
            total: started.elapsed().as_millis() as u64,
        },
    })
}

/// The longest a reply may read, in characters, with the request's pronunciation dictionaries (the text limit
/// of text-to-speech).
const REPLY_MAX_READ_CHARS: usize = 5_000;

/// The lexicon a reply is read with: the request's dictionaries, unless the reply reads longer than
/// [`REPLY_MAX_READ_CHARS`] with them; then the voice's own (the dialogue has already acted, so the turn is
/// spoken rather than lost, and a dictionary never makes it longer than that limit).
fn bounded_reading(
    lexicon: Option<std::sync::Arc<crate::tts::lexicon::Lexicon>>,
    reply: &str,
) -> Option<std::sync::Arc<crate::tts::lexicon::Lexicon>> {
    let lexicon = lexicon?;
    match crate::tts::pronunciation::expand::read_length(&lexicon, reply, REPLY_MAX_READ_CHARS) {
        Ok(_) => Some(lexicon),
        Err(error) => {
            tracing::warn!(%error, "the reply is read without the request's pronunciation dictionaries");
            None
        }
    }
}

/// Synthesise the reply as base64 WAV. The dialogue has already acted (a flow may have moved money), so a busy
/// synthesizer is waited out for a while rather than failing the turn.
async fn speak(
    state: &AgentArgs,
    owner: &str,
    voice_id: &str,
    text: &str,
    lexicon: Option<std::sync::Arc<crate::tts::lexicon::Lexicon>>,
    format: crate::audio::output::OutputFormat,
) -> Result<(usize, String), AgentError> {
    let mut attempt = 0u32;
    loop {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let outcome = state
            .tts
            .synthesize_then(
                owner,
                voice_id,
                text,
                VoiceSettings::default(),
                lexicon.clone(),
                move |samples| {
                    let encoded = format
                        .encode(&samples)
                        .map(|audio| base64::engine::general_purpose::STANDARD.encode(audio));
                    let _ = sender.send(encoded);
                },
            )
            .await;
        match outcome {
            Ok(samples) => {
                let audio = receiver
                    .await
                    .map_err(|_| "the reply's encoder stopped".to_string())
                    .and_then(|encoded| encoded)
                    .map_err(|e| {
                        SynthesisError::Engine(format!("encoding the reply failed: {e}"))
                    })?;
                return Ok((samples, audio));
            }
            Err(SynthesisError::Actor(ActorError::Busy { .. } | ActorError::Restarting(_)))
                if attempt < 40 =>
            {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tts::lexicon::Lexicon;
    use crate::tts::pronunciation::{layered, Rule};

    #[test]
    fn a_reply_that_reads_too_long_with_the_dictionaries_is_read_without_them() {
        let rules = [Rule::alias("a", &"b".repeat(64))];
        let lexicon = Arc::new(layered(Lexicon::embedded(), &rules).unwrap());
        assert!(bounded_reading(Some(Arc::clone(&lexicon)), "Karibu a leo.").is_some());
        // 100 words of "a" read as 100 × 64 characters and the spaces: over 5,000.
        let long = vec!["a"; 100].join(" ");
        assert!(bounded_reading(Some(lexicon), &long).is_none());
        assert!(bounded_reading(None, "Karibu").is_none());
    }
}
