//! A turn with the voice agent, typed or spoken. Every check a caller can act on comes before any audio is
//! decoded or heard: the voice (404), what was said (422), the dictionaries, the scenario and session.

use std::sync::Arc;

use super::usage::{self, Usage};
use super::Service;
use crate::actors::agent::{AgentRequest, AgentTurn, Speech};
use crate::actors::dialogue::TurnRequest;
use crate::audio::output::OutputFormat;
use crate::dictionaries::Locator;
use crate::problem::ApiError;
use crate::storage::usage::UsageKind;

/// A turn, as any protocol states it.
pub struct Converse {
    /// The key asking.
    pub owner: String,
    /// The scenario; `None`: the session's own, or the default.
    pub scenario: Option<String>,
    /// The reply's voice; `None`: the agent's voice.
    pub voice_id: Option<String>,
    /// The session to continue.
    pub session_id: Option<String>,
    /// The caller's pronunciation dictionaries, read over the reply.
    pub locators: Vec<Locator>,
    /// The reply's audio format.
    pub format: OutputFormat,
}

impl Service {
    /// A typed turn: `text` is what the caller says.
    pub async fn converse_text(
        &self,
        turn: Converse,
        text: String,
    ) -> Result<(AgentRequest, AgentTurn), ApiError> {
        super::text::utterance("text", &text, self.settings.dialogue.max_text_chars)?;
        let mut request = self.agent_request(turn).await?;
        request.text = text;
        let answer = self.graph.agent.converse(request.clone()).await?;
        self.answered(&request.owner, &answer).await;
        Ok((request, answer))
    }

    /// A spoken turn: `audio` is the upload (or why there is none), decoded and recognised once the scenario
    /// and session are known to be right.
    pub async fn converse_audio(
        &self,
        turn: Converse,
        audio: Result<Vec<u8>, ApiError>,
    ) -> Result<(AgentRequest, AgentTurn), ApiError> {
        let request = self.agent_request(turn).await?;
        self.check_conversation(&request.owner, &request.scenario, &request.session_id)
            .await?;
        let audio = self.decode(audio?, Default::default()).await?;
        self.graph.asr.ensure_available().await?;
        usage::record(Usage::RecognisedSeconds(audio.duration_seconds()));
        let speech = Speech {
            samples: Arc::new(audio.samples),
            language: crate::asr::DEFAULT_LANGUAGE.to_string(),
        };
        let answer = self
            .graph
            .agent
            .converse_audio(request.clone(), speech)
            .await?;
        self.answered(&request.owner, &answer).await;
        Ok((request, answer))
    }

    /// The agent's request for `turn`: its voice checked (the agent's voice when none is named) and its
    /// dictionaries read.
    async fn agent_request(&self, turn: Converse) -> Result<AgentRequest, ApiError> {
        let voice_id = self.agent_voice(&turn.owner, turn.voice_id).await?;
        let pronunciation = self
            .dictionaries
            .resolve(&turn.owner, &turn.locators)
            .await?;
        Ok(AgentRequest {
            owner: turn.owner,
            scenario: turn.scenario,
            session_id: turn.session_id,
            text: String::new(),
            voice_id,
            pronunciation,
            format: turn.format,
        })
    }
}

impl Service {
    /// The voice the agent speaks to `owner` with: the one named (if the key may use it, else 404), or the
    /// agent's voice.
    pub async fn agent_voice(
        &self,
        owner: &str,
        named: Option<String>,
    ) -> Result<String, ApiError> {
        let voice_id = named.unwrap_or_else(|| self.settings.tts.agent_voice.clone());
        self.voice_of(owner, &voice_id, "/v1/voices").await?;
        Ok(voice_id)
    }

    /// Whether a conversation can go on in `scenario` and `session_id` for `owner` (the scenario exists, the
    /// session is the key's and of that scenario): checked before any audio is decoded or heard.
    pub async fn check_conversation(
        &self,
        owner: &str,
        scenario: &Option<String>,
        session_id: &Option<String>,
    ) -> Result<std::sync::Arc<crate::dialogue::Scenario>, ApiError> {
        let request = TurnRequest {
            owner: owner.to_string(),
            scenario: scenario.clone(),
            session_id: session_id.clone(),
            text: String::new(),
            heard_before: None,
            keys: false,
            keypad: false,
            variables: Default::default(),
        };
        Ok(self.graph.dialogue.check(request).await?)
    }
}

impl Service {
    /// Count a turn answered (for the key, in the store), and the characters its reply was spoken with.
    async fn answered(&self, owner: &str, turn: &AgentTurn) {
        usage::record(Usage::AgentTurn);
        usage::record(Usage::Characters(turn.agent_text.chars().count()));
        self.count(owner, UsageKind::AgentTurns, 1.0).await;
    }
}
