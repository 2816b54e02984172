//! The dialogue layer: scenario files, the backends that answer a turn (the embedded scenario engine and an
//! OpenAI-compatible LLM), and the guardrails every turn passes through on the way in and out.

pub mod actions;
pub mod call;
pub mod call_tools;
pub mod check;
pub mod engine;
pub mod eval;
pub mod greetings;
pub mod guardrail_settings;
pub mod guardrails;
pub mod intents;
pub mod keypad;
pub mod language;
pub mod library;
pub mod numbers;
pub mod openai;
pub mod reading;
pub mod repair;
pub mod safety;
pub mod scenario;
pub mod settings;
pub mod shared;
pub mod slots;
pub mod template;
pub mod test_format;
pub mod testing;
pub mod transfer;
pub mod words;

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use time::OffsetDateTime;

pub use actions::{ActionRunner, BoxFuture, HttpActions, RecordingActions};
pub use scenario::{Scenario, ScenarioError};

/// Who said a line of the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The caller.
    User,
    /// The agent.
    Agent,
}

/// A flow in progress.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActiveFlow {
    /// The flow.
    pub flow: String,
    /// The intent that started it.
    pub intent: String,
    /// The step waiting for the user.
    pub step: usize,
}

/// One conversation's memory (kept as JSON when conversations are stored; a field added later must have a
/// default, so conversations stored before it still read).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Session {
    /// What was said, oldest first (secrets masked).
    pub history: Vec<(Role, String)>,
    /// Filled slots.
    pub slots: BTreeMap<String, String>,
    /// The flow in progress.
    pub flow: Option<ActiveFlow>,
    /// The last action's answer.
    pub result: Map<String, Value>,
    /// Fallbacks in a row (to vary the wording).
    pub fallbacks: usize,
    /// SHA-256 digests of the digits of secrets the caller offered (never the secrets), so no later reply can
    /// say them.
    pub offered: Vec<[u8; 32]>,
    /// The caller's last turn named a secret ("PIN yangu imefungwa"): a bare code in the next one ("ni moja mbili
    /// tatu nne") is that secret.
    pub secret_named: bool,
    /// The conversation is a call with a keypad: steps that collect a keyed value are taken, not left out.
    pub keypad: bool,
    /// The call's variables for this turn (`{{name}}` in templates and actions): given with each turn, never
    /// kept with the conversation.
    #[serde(skip)]
    pub variables: BTreeMap<String, String>,
}

impl Session {
    /// The caller talked over the agent's last reply: the history keeps only `heard`, the part of it that
    /// reached the caller (nothing of it when none did).
    pub fn interrupted(&mut self, heard: &str) {
        let Some(at) = self
            .history
            .iter()
            .rposition(|(role, _)| *role == Role::Agent)
        else {
            return;
        };
        match heard.trim() {
            "" => {
                self.history.remove(at);
            }
            heard => self.history[at].1 = heard.to_string(),
        }
    }
}

/// The most history lines kept per session (older ones are dropped).
pub const HISTORY_LIMIT: usize = 40;

/// A backend's answer to one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// What the agent says.
    pub text: String,
    /// The intent matched, or `fallback`, `greeting`, `guardrail` (a reply replaced on its way out), `secret`
    /// (a caller offered one), `emergency`, `crisis`, `llm`.
    pub outcome: String,
    /// Actions called in this turn.
    pub actions: Vec<String>,
    /// Those of them that failed.
    pub failed: Vec<String>,
}

/// Why a backend could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DialogueError {
    /// The backend failed (network, timeout, bad answer).
    #[error("{backend} backend failed: {detail}")]
    Backend {
        /// Which backend.
        backend: &'static str,
        /// What happened.
        detail: String,
    },
}

/// A dialogue backend: answers a turn for a scenario and a session. Chosen by server configuration only.
pub trait DialogueBackend: Send + Sync {
    /// Name for logs and metrics.
    fn name(&self) -> &'static str;

    /// Answer `text` (already screened for emergencies and secrets); the session's history does not yet
    /// hold this turn.
    fn respond<'a>(
        &'a self,
        scenario: &'a Scenario,
        session: &'a mut Session,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Reply, DialogueError>>;
}

/// The embedded scenario engine as a backend.
pub struct ScenarioBackend {
    actions: std::sync::Arc<dyn ActionRunner>,
}

impl ScenarioBackend {
    /// A backend calling actions through `actions`.
    pub fn new(actions: std::sync::Arc<dyn ActionRunner>) -> Self {
        Self { actions }
    }
}

impl DialogueBackend for ScenarioBackend {
    fn name(&self) -> &'static str {
        "scenario"
    }

    fn respond<'a>(
        &'a self,
        scenario: &'a Scenario,
        session: &'a mut Session,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Reply, DialogueError>> {
        Box::pin(async move {
            let now = template::east_africa_now();
            // The engine matches Swahili: Sheng and English words are read as the Swahili it knows.
            let read = scenario.reading.current().read(text);
            Ok(engine::respond(scenario, session, &read, &*self.actions, now).await)
        })
    }
}

/// One guarded turn. The safety layer answers first: a crisis or an emergency gets its reply (numbers first)
/// before any backend runs, and a caller offering a secret gets a warning; the backend's reply is screened on
/// the way out. The history records both sides, with secrets masked. `fallback` answers when `backend` fails.
pub async fn converse(
    scenario: &Scenario,
    session: &mut Session,
    text: &str,
    backend: &dyn DialogueBackend,
    fallback: Option<&dyn DialogueBackend>,
) -> Result<Reply, DialogueError> {
    let g = &scenario.guardrails;
    // Safety sees the turn as read: Sheng words and English verbs in Swahili morphology as the Swahili its signs
    // know (the past-and-over rule then reads their tense); English on its own stays for the English signs.
    let read = scenario.reading.current().read(text);
    let rules = scenario.safety.current();
    let named_before = std::mem::replace(&mut session.secret_named, rules.secrets.names(text));
    let after_naming = named_before && rules.secrets.bare_code(text).is_some();
    let offered =
        g.secrets && (rules.secrets.offers(text) || rules.secrets.offers(&read) || after_naming);
    let remembered = if offered {
        session.offered.extend(rules.secrets.digests(text));
        session.offered.extend(rules.secrets.code_digests(text));
        rules.secrets.mask(text)
    } else {
        text.to_string()
    };
    let screened = safety::screen(scenario, &read).or_else(|| {
        // A crisis in words the reading changed ("ku-end it") still counts as written.
        safety::screen(scenario, text).filter(|case| *case == safety::SafetyCase::Crisis)
    });
    let reply = if let Some(case) = screened {
        // A safety case ends any flow in progress: no money moves on a turn like this.
        session.flow = None;
        session.slots.clear();
        let outcome = match case {
            safety::SafetyCase::Crisis => "crisis",
            safety::SafetyCase::Emergency(_) => "emergency",
        };
        Reply {
            text: safety::reply(scenario, &case),
            outcome: outcome.into(),
            ..Reply::default()
        }
    } else if offered {
        Reply {
            text: safety::secret_warning(scenario),
            outcome: "secret".into(),
            ..Reply::default()
        }
    } else if let Some(last) = repair::asks_to_repeat(text)
        .then(|| last_reply(session))
        .flatten()
    {
        // "Rudia?", "sijasikia": the last reply again, word for word, whatever the backend.
        Reply {
            text: last,
            outcome: "repeat".into(),
            ..Reply::default()
        }
    } else {
        let mut reply = match backend.respond(scenario, session, text).await {
            Ok(reply) => reply,
            Err(error) => {
                let Some(fallback) = fallback else {
                    return Err(error);
                };
                tracing::warn!(scenario = scenario.id, backend = backend.name(), fallback = fallback.name(), %error, "dialogue backend failed; falling back");
                metrics::counter!(crate::telemetry::metrics::DIALOGUE_FALLBACKS, "backend" => backend.name()).increment(1);
                fallback.respond(scenario, session, text).await?
            }
        };
        let repeats_earlier = g.secrets && safety::secrets::says_any(&reply.text, &session.offered);
        let screened = if repeats_earlier {
            Some((
                guardrails::Blocked::Secret,
                safety::secret_warning(scenario),
            ))
        } else {
            guardrails::screen_reply(scenario, &reply.text, text)
        };
        if let Some((why, replacement)) = screened {
            tracing::warn!(scenario = scenario.id, backend = backend.name(), blocked = ?why, "reply replaced by a guardrail");
            reply.text = replacement;
            reply.outcome = "guardrail".into();
        }
        reply
    };
    session.history.push((Role::User, remembered));
    session.history.push((Role::Agent, reply.text.clone()));
    let excess = session.history.len().saturating_sub(HISTORY_LIMIT);
    session.history.drain(..excess);
    Ok(reply)
}

/// The agent's last reply in the session, if any.
fn last_reply(session: &Session) -> Option<String> {
    session
        .history
        .iter()
        .rev()
        .find(|(role, _)| *role == Role::Agent)
        .map(|(_, text)| text.clone())
        .filter(|text| !text.trim().is_empty())
}

/// What of a caller's turn may be kept, logged or echoed: the turn with any offered secret masked.
pub fn shareable(rules: &safety::SafetyRules, text: &str) -> String {
    if rules.secrets.offers(text) {
        rules.secrets.mask(text)
    } else {
        text.to_string()
    }
}

/// Now, in East Africa Time (for templates and dates).
pub fn now() -> OffsetDateTime {
    template::east_africa_now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_reply_keeps_only_what_was_heard() {
        let mut session = Session {
            history: vec![
                (Role::User, "Nataka kutuma pesa".into()),
                (Role::Agent, "Sawa. Unataka kutuma kiasi gani?".into()),
                (Role::User, "Elfu tano".into()),
                (
                    Role::Agent,
                    "Utatuma shilingi elfu tano kwa namba gani?".into(),
                ),
            ],
            ..Session::default()
        };
        session.interrupted("Utatuma shilingi");
        assert_eq!(session.history[3].1, "Utatuma shilingi");
        assert_eq!(session.history[1].1, "Sawa. Unataka kutuma kiasi gani?");
        session.interrupted("  ");
        assert_eq!(session.history.len(), 3, "nothing heard: the reply is gone");
        assert_eq!(session.history[2], (Role::User, "Elfu tano".into()));
    }
}
