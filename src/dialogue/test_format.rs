//! The test conversations of a scenario file (`[[tests]]`): turns and what must come of them, where a test starts,
//! and what stubbed actions answer. Run by [`super::testing`]; documented in `scenarios/FORMAT.md`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A test conversation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestConversation {
    /// What it shows.
    pub name: String,
    /// Where the conversation starts (a flow under way, slots already filled); a fresh session without it.
    #[serde(default)]
    pub fixture: Option<TestFixture>,
    /// Actions that answer as set here instead of being recorded: `"fail"`, `"timeout"`, or a result table.
    #[serde(default)]
    pub actions: BTreeMap<String, StubbedAction>,
    /// The turns, in order.
    pub turns: Vec<TestTurn>,
}

/// Where a test conversation starts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFixture {
    /// Slots already filled, by name.
    #[serde(default)]
    pub slots: BTreeMap<String, String>,
    /// A flow under way, at the first step the filled slots leave to do (its replies before it already said).
    #[serde(default)]
    pub flow: Option<String>,
}

/// What a stubbed action answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum StubbedAction {
    /// `"fail"` (the call failed) or `"timeout"` (no answer in time).
    Outcome(String),
    /// The action's result: the values its success template reads as `{result.name}`.
    Result(serde_json::Map<String, serde_json::Value>),
}

/// One user turn and what must come of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestTurn {
    /// What the user says.
    pub user: String,
    /// The intent that must match (or `fallback`, `guardrail`, `emergency`).
    #[serde(default)]
    pub intent: Option<String>,
    /// Substrings the reply must contain (case-insensitive).
    #[serde(default)]
    pub reply_contains: Option<OneOrMany>,
    /// Substrings the reply must not contain.
    #[serde(default)]
    pub reply_excludes: Option<OneOrMany>,
    /// An action that must be called in this turn.
    #[serde(default)]
    pub action: Option<String>,
    /// Slots that must be filled after this turn: names, or `name=value`.
    #[serde(default)]
    pub slot_was_set: Option<OneOrMany>,
    /// Slots that must not be filled after this turn.
    #[serde(default)]
    pub slot_was_not_set: Option<OneOrMany>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings.
    pub fn items(&self) -> Vec<&str> {
        match self {
            Self::One(one) => vec![one.as_str()],
            Self::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}
