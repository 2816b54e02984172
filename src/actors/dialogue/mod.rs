//! The DialogueActor: owns the scenario library (reloaded as files change), the configured dialogue backend and
//! the conversation sessions (kept by one of the stores in [`crate::storage::conversations`], re-exported
//! here); answers one text turn at a time per session.

mod actor;

pub use crate::storage::conversations::{
    MemorySessions, SessionError, SessionStore, Sessions, StoredSessions,
};
pub use actor::{DialogueActor, DialogueArgs, ToDialogueActor};

use std::time::Duration;

use super::{ActorError, ActorSlot};
use crate::dialogue::{DialogueError, Reply};

/// Longest a caller waits for a turn (an LLM call and an action included).
const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// A turn to answer.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The caller's key id (sessions are private to it).
    pub owner: String,
    /// The scenario id; `None`: the session's own when continuing one, else the default scenario.
    pub scenario: Option<String>,
    /// A session to continue, or `None` for a new one.
    pub session_id: Option<String>,
    /// What the user said.
    pub text: String,
    /// The caller talked over the session's last reply before this turn: the part of it they heard, which is
    /// all the session's history keeps of it (applied before the turn is answered).
    pub heard_before: Option<String>,
    /// `text` is keys pressed on the call's keypad (digits and `*`), not words.
    pub keys: bool,
    /// The turn comes from a call, which has a keypad.
    pub keypad: bool,
    /// The call's variables (`{{name}}` in templates and actions), never kept with the conversation.
    pub variables: std::collections::BTreeMap<String, String>,
}

/// An answered turn.
#[derive(Debug, Clone)]
pub struct DialogueTurn {
    /// The session (new or continued).
    pub session_id: String,
    /// The scenario that answered.
    pub scenario: String,
    /// The reply.
    pub reply: Reply,
    /// Which backend answered.
    pub backend: &'static str,
    /// On a call: the transfer the reply leads to, once it has been heard.
    pub transfer: Option<crate::dialogue::transfer::TransferPlan>,
    /// On a call: the agent hangs up once the reply has been heard (a farewell).
    pub end_call: bool,
    /// The conversation after the reply (intent, slots with secrets masked, safety class), for its record.
    pub summary: crate::dialogue::transfer::CallSummary,
}

/// Why a turn got no reply.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TurnError {
    /// No scenario with that id.
    #[error("unknown scenario {0:?}; known: {1}")]
    UnknownScenario(String, String),
    /// The session cannot be used.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The backend failed and no fallback was configured.
    #[error(transparent)]
    Backend(#[from] DialogueError),
    /// The actor is restarting, crashed or timed out.
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// The public face of the DialogueActor.
#[derive(Clone)]
pub struct DialogueHandle {
    slot: ActorSlot<ToDialogueActor>,
    safety: crate::dialogue::safety::SharedSafety,
}

impl DialogueHandle {
    /// A handle reading the given slot, masking secrets with the library's safety rules.
    pub fn new(
        slot: ActorSlot<ToDialogueActor>,
        safety: crate::dialogue::safety::SharedSafety,
    ) -> Self {
        Self { slot, safety }
    }

    /// What of a caller's turn may be kept, logged or echoed (any offered secret masked), by the rules in use.
    pub fn shareable(&self, text: &str) -> String {
        crate::dialogue::shareable(&self.safety.current(), text)
    }

    /// Answer a turn.
    pub async fn turn(&self, request: TurnRequest) -> Result<DialogueTurn, TurnError> {
        self.slot
            .call(
                "dialogue",
                |reply| ToDialogueActor::Turn { request, reply },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Whether a turn with this scenario and session would be taken (checked before costly work for it): the
    /// scenario that would answer it.
    pub async fn check(
        &self,
        request: TurnRequest,
    ) -> Result<std::sync::Arc<crate::dialogue::Scenario>, TurnError> {
        self.slot
            .call(
                "dialogue",
                |reply| ToDialogueActor::Check { request, reply },
                Duration::from_secs(10),
            )
            .await?
    }

    /// The caller talked over the last reply of session `session_id`: its history keeps only `heard` of it.
    pub fn interrupted(&self, owner: &str, session_id: &str, heard: &str) {
        if let Some(actor) = self.slot.get() {
            let _ = actor.cast(ToDialogueActor::Interrupted {
                owner: owner.to_string(),
                session_id: session_id.to_string(),
                heard: heard.to_string(),
            });
        }
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}

impl DialogueArgs {
    /// Everything the DialogueActor needs, from the settings: the scenario library (an invalid file stops
    /// start-up with its file and line), the configured backend and its fallback, and the session store: in
    /// `storage` when that is shared with other replicas, else in memory.
    pub fn from_settings(
        settings: &crate::dialogue::settings::DialogueSettings,
        storage: &crate::storage::Storage,
        records: crate::records::Records,
    ) -> Result<Self, crate::dialogue::ScenarioError> {
        use crate::dialogue::library::ScenarioLibrary;
        use crate::dialogue::openai::OpenAiBackend;
        use crate::dialogue::settings::BackendKind;
        use crate::dialogue::{ActionRunner, DialogueBackend, HttpActions, ScenarioBackend};
        use std::sync::Arc;

        let dir = settings
            .scenarios_dir
            .is_dir()
            .then_some(settings.scenarios_dir.as_path());
        let library = ScenarioLibrary::load(dir)?;
        let actions: Arc<dyn ActionRunner> = Arc::new(HttpActions::new());
        let engine: Arc<dyn DialogueBackend> = Arc::new(ScenarioBackend::new(Arc::clone(&actions)));
        let (backend, fallback) = match settings.backend {
            BackendKind::Scenario => (engine, None),
            BackendKind::Openai => {
                let llm: Arc<dyn DialogueBackend> =
                    Arc::new(OpenAiBackend::new(settings.openai.clone(), actions));
                (llm, settings.fallback_to_scenario.then_some(engine))
            }
        };
        let idle = Duration::from_secs(settings.session_idle_minutes * 60);
        Ok(Self {
            library,
            backend,
            fallback,
            records,
            sessions: if storage.shared() {
                Arc::new(StoredSessions::new(
                    storage.clone(),
                    idle,
                    settings.max_sessions,
                ))
            } else {
                Arc::new(MemorySessions::new(idle, settings.max_sessions))
            },
        })
    }
}
