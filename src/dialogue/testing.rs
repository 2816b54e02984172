//! Running a scenario's test conversations against the embedded engine (`sauti scenario test`, `cargo test`):
//! from a fresh session or a fixture (a flow under way, slots filled), with actions recorded or stubbed to fail,
//! time out or answer a value, and every assertion counted by kind.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::scenario::{OneOrMany, Scenario, Step, StubbedAction, TestConversation};
use super::{
    converse, ActiveFlow, DialogueBackend, DialogueError, RecordingActions, Reply, ScenarioBackend,
    Session,
};

/// The outcome of one test conversation.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The test's name.
    pub name: String,
    /// What went wrong, turn by turn; empty when it passed.
    pub failures: Vec<String>,
    /// Assertions by kind (`intent`, `reply_contains`, `slot_was_set`, …): (passed, made).
    pub checks: BTreeMap<&'static str, (usize, usize)>,
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

/// Assertions by kind over several cases: (passed, made).
pub fn tally(cases: &[CaseResult]) -> BTreeMap<&'static str, (usize, usize)> {
    let mut all: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for case in cases {
        for (kind, (passed, made)) in &case.checks {
            let entry = all.entry(kind).or_default();
            entry.0 += passed;
            entry.1 += made;
        }
    }
    all
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
        Self::with_actions(scenario, BTreeMap::new())
    }

    /// A new conversation whose actions in `stubs` answer as set there.
    pub fn with_actions(scenario: &'a Scenario, stubs: BTreeMap<String, StubbedAction>) -> Self {
        let actions = Arc::new(RecordingActions::stubbed(stubs));
        Self {
            scenario,
            backend: ScenarioBackend::new(actions.clone()),
            actions,
            session: Session::default(),
        }
    }

    /// Start from `slots` filled and, when `flow` is given, that flow under way at the first step the slots leave
    /// to do that is not just something said (or why it cannot be).
    pub fn start_at(
        &mut self,
        slots: &BTreeMap<String, String>,
        flow: Option<&str>,
    ) -> Result<(), String> {
        self.session.slots = slots.clone().into_iter().collect();
        let Some(id) = flow else {
            return Ok(());
        };
        let flow = self.scenario.flow(id).ok_or(format!("no flow {id:?}"))?;
        let intent = self
            .scenario
            .intents
            .iter()
            .find(|i| i.flow.as_deref() == Some(id))
            .ok_or(format!("no intent starts the flow {id:?}"))?;
        let step = flow
            .steps
            .iter()
            .position(|s| match s {
                Step::Collect(slot) => !slots.contains_key(slot),
                Step::Reply(_) => false,
                _ => true,
            })
            .unwrap_or(flow.steps.len());
        self.session.flow = Some(ActiveFlow {
            flow: id.to_string(),
            intent: intent.id.clone(),
            step,
        });
        Ok(())
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
        let called = self.actions.take().into_iter().map(|(name, _)| name);
        Ok((reply, called.collect()))
    }
}

async fn run_case(scenario: &Scenario, test: &TestConversation) -> CaseResult {
    let mut conversation = Conversation::with_actions(scenario, test.actions.clone());
    let mut failures = Vec::new();
    let mut checks: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    if let Some(fixture) = &test.fixture {
        if let Err(why) = conversation.start_at(&fixture.slots, fixture.flow.as_deref()) {
            failures.push(format!("fixture: {why}"));
        }
    }
    for (i, turn) in test.turns.iter().enumerate() {
        let at = format!("turn {} ({:?})", i + 1, turn.user);
        let (reply, called) = match conversation.say(&turn.user).await {
            Ok(said) => said,
            Err(error) => {
                failures.push(format!("{at}: {error}"));
                break;
            }
        };
        let mut check = |kind: &'static str, failure: Option<String>| {
            let entry = checks.entry(kind).or_default();
            entry.1 += 1;
            match failure {
                Some(failure) => failures.push(format!("{at}: {failure}")),
                None => entry.0 += 1,
            }
        };
        if let Some(intent) = &turn.intent {
            check(
                "intent",
                (&reply.outcome != intent).then(|| {
                    format!(
                        "expected intent {intent:?}, got {:?} — reply {:?}",
                        reply.outcome, reply.text
                    )
                }),
            );
        }
        let lower = reply.text.to_lowercase();
        for needle in turn.reply_contains.iter().flat_map(|n| n.items()) {
            let missing = !lower.contains(&needle.to_lowercase());
            check(
                "reply_contains",
                missing.then(|| format!("reply {:?} does not contain {needle:?}", reply.text)),
            );
        }
        for needle in turn.reply_excludes.iter().flat_map(|n| n.items()) {
            let present = lower.contains(&needle.to_lowercase());
            check(
                "reply_excludes",
                present.then(|| format!("reply {:?} contains {needle:?}", reply.text)),
            );
        }
        if let Some(action) = &turn.action {
            check(
                "action",
                (!called.contains(action))
                    .then(|| format!("expected action {action:?}, called {called:?}")),
            );
        }
        let slots = &conversation.session.slots;
        for wanted in turn.slot_was_set.iter().flat_map(|s| s.items()) {
            let (name, value) = match wanted.split_once('=') {
                Some((name, value)) => (name.trim(), Some(value.trim())),
                None => (wanted.trim(), None),
            };
            let failure = match (slots.get(name), value) {
                (None, _) => Some(format!("slot {name:?} was not set (slots {slots:?})")),
                (Some(got), Some(value)) if got != value => {
                    Some(format!("slot {name:?} is {got:?}, not {value:?}"))
                }
                _ => None,
            };
            check("slot_was_set", failure);
        }
        for name in turn.slot_was_not_set.iter().flat_map(|s| s.items()) {
            check(
                "slot_was_not_set",
                slots
                    .get(name.trim())
                    .map(|got| format!("slot {name:?} was set to {got:?}")),
            );
        }
    }
    CaseResult {
        name: test.name.clone(),
        failures,
        checks,
    }
}
