//! The AgentActor: one voice-agent turn is dialogue (DialogueActor) then speech (TtsActor), timed per stage;
//! the audio mode puts recognition (AsrActor) in front.

mod actor;

pub use actor::{AgentActor, AgentArgs, ToAgentActor};

use std::sync::Arc;
use std::time::Duration;

use super::asr::RecognitionError;
use super::dialogue::TurnError;
use super::tts::SynthesisError;
use super::{ActorError, ActorSlot};

/// Longest a caller waits for a whole turn.
const CALL_TIMEOUT: Duration = Duration::from_secs(180);

/// A text-mode turn.
#[derive(Debug, Clone)]
pub struct AgentRequest {
    /// The caller's key id.
    pub owner: String,
    /// Scenario id; `None`: the session's own, or the default for a new conversation.
    pub scenario: Option<String>,
    /// Session to continue.
    pub session_id: Option<String>,
    /// What the user said.
    pub text: String,
    /// Voice of the reply.
    pub voice_id: String,
    /// The lexicon the reply is read with (the request's pronunciation dictionaries over the server's
    /// lexicon); `None`: the voice's own.
    pub pronunciation: Option<Arc<crate::tts::lexicon::Lexicon>>,
    /// The format the reply's audio is encoded in.
    pub format: crate::audio::output::OutputFormat,
}

/// What an audio-mode turn heard: 16 kHz mono samples and their language.
#[derive(Debug, Clone)]
pub struct Speech {
    /// The user's audio.
    pub samples: Arc<Vec<f32>>,
    /// ISO 639-1 code.
    pub language: String,
}

/// Milliseconds spent per stage.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, utoipa::ToSchema)]
pub struct Timings {
    /// Speech recognition (audio mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asr: Option<u64>,
    /// The dialogue layer.
    pub dialogue: u64,
    /// Synthesis and encoding of the reply.
    pub tts: u64,
    /// The whole turn.
    pub total: u64,
}

/// A rendered turn.
#[derive(Debug, Clone)]
pub struct AgentTurn {
    /// The scenario that answered.
    pub scenario: String,
    /// What the user said: the text given, or the transcript of the audio.
    pub user_text: String,
    /// The reply text.
    pub agent_text: String,
    /// Base64 of the 16 kHz mono WAV of the reply.
    pub audio_base64: String,
    /// Seconds of reply audio.
    pub duration_seconds: f64,
    /// The session.
    pub session_id: String,
    /// What the dialogue layer decided (intent, fallback, guardrail, emergency…).
    pub outcome: String,
    /// Actions called.
    pub actions: Vec<String>,
    /// Per-stage timings.
    pub timings: Timings,
}

/// Why a turn failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    /// The dialogue layer refused or failed.
    #[error(transparent)]
    Dialogue(#[from] TurnError),
    /// Synthesis of the reply failed.
    #[error(transparent)]
    Synthesis(#[from] SynthesisError),
    /// Recognition of the user's audio failed.
    #[error(transparent)]
    Recognition(#[from] RecognitionError),
    /// The user's audio holds no speech that could be recognised.
    #[error("no speech was recognised in the audio")]
    NoSpeech,
    /// The agent actor itself is unavailable.
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// The public face of the AgentActor.
#[derive(Clone)]
pub struct AgentHandle {
    slot: ActorSlot<ToAgentActor>,
}

impl AgentHandle {
    /// A handle reading the given slot.
    pub fn new(slot: ActorSlot<ToAgentActor>) -> Self {
        Self { slot }
    }

    /// Run a text-mode turn.
    pub async fn converse(&self, request: AgentRequest) -> Result<AgentTurn, AgentError> {
        self.slot
            .call(
                "agent",
                |reply| ToAgentActor::Converse {
                    request,
                    speech: None,
                    reply,
                },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Run an audio-mode turn: `request.text` is ignored and replaced by the transcript of `speech`.
    pub async fn converse_audio(
        &self,
        request: AgentRequest,
        speech: Speech,
    ) -> Result<AgentTurn, AgentError> {
        self.slot
            .call(
                "agent",
                |reply| ToAgentActor::Converse {
                    request,
                    speech: Some(speech),
                    reply,
                },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}
