//! Running a scenario's test conversations against the embedded engine (`sauti scenario test`, `cargo test`).

use std::sync::Arc;

use super::scenario::{OneOrMany, Scenario, TestConversation};
use super::{
    converse, DialogueBackend, DialogueError, RecordingActions, Reply, ScenarioBackend, Session,
};

/// The outcome of one test conversation.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The test's name.
    pub name: String,
    /// What went wrong, turn by turn; empty when it passed.
    pub failures: Vec<String>,
}

impl CaseResult {
    /// Whether every turn met its expectations.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Run every test conversation of a scenario, each in a fresh session; actions are recorded, not sent.
pub async fn run_tests(scenario: &Scenario) -> Vec<CaseResult> {
    let mut results = Vec::new();
    for test in &scenario.tests {
        results.push(run_case(scenario, test).await);
    }
    results
}

/// Check a reply against substrings it must contain and must not (case-insensitive); each miss is a failure
/// starting with `at`.
pub fn check_reply(
    at: &str,
    reply: &str,
    contains: Option<&OneOrMany>,
    excludes: Option<&OneOrMany>,
    failures: &mut Vec<String>,
) {
    let lower = reply.to_lowercase();
    for needle in contains.iter().flat_map(|n| n.items()) {
        if !lower.contains(&needle.to_lowercase()) {
            failures.push(format!("{at}: reply {reply:?} does not contain {needle:?}"));
        }
    }
    for needle in excludes.iter().flat_map(|n| n.items()) {
        if lower.contains(&needle.to_lowercase()) {
            failures.push(format!("{at}: reply {reply:?} contains {needle:?}"));
        }
    }
}

/// A conversation with the embedded engine in a fresh session; actions are recorded, not sent.
pub struct Conversation<'a> {
    scenario: &'a Scenario,
    actions: Arc<RecordingActions>,
    backend: ScenarioBackend,
    /// The session, for checks on its slots.
    pub session: Session,
}

impl<'a> Conversation<'a> {
    /// A new conversation with `scenario`.
    pub fn new(scenario: &'a Scenario) -> Self {
        let actions = Arc::new(RecordingActions::default());
        Self {
            scenario,
            backend: ScenarioBackend::new(actions.clone()),
            actions,
            session: Session::default(),
        }
    }

    /// One guarded turn: the reply and the actions it called.
    pub async fn say(&mut self, text: &str) -> Result<(Reply, Vec<String>), DialogueError> {
        let reply = converse(
            self.scenario,
            &mut self.session,
            text,
            &self.backend as &dyn DialogueBackend,
            None,
        )
        .await?;
        let called = self
            .actions
            .take()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        Ok((reply, called))
    }
}

async fn run_case(scenario: &Scenario, test: &TestConversation) -> CaseResult {
    let mut conversation = Conversation::new(scenario);
    let mut failures = Vec::new();
    for (i, turn) in test.turns.iter().enumerate() {
        let at = format!("turn {} ({:?})", i + 1, turn.user);
        let (reply, called) = match conversation.say(&turn.user).await {
            Ok(said) => said,
            Err(error) => {
                failures.push(format!("{at}: {error}"));
                break;
            }
        };
        if let Some(intent) = &turn.intent {
            if &reply.outcome != intent {
                failures.push(format!(
                    "{at}: expected intent {intent:?}, got {:?} — reply {:?}",
                    reply.outcome, reply.text
                ));
            }
        }
        check_reply(
            &at,
            &reply.text,
            turn.reply_contains.as_ref(),
            turn.reply_excludes.as_ref(),
            &mut failures,
        );
        if let Some(action) = &turn.action {
            if !called.contains(action) {
                failures.push(format!(
                    "{at}: expected action {action:?}, called {called:?}"
                ));
            }
        }
    }
    CaseResult {
        name: test.name.clone(),
        failures,
    }
}
