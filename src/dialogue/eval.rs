//! Evaluation sets (`scenarios/eval/*.toml`, `sauti scenario eval`): labelled caller turns run against the
//! embedded engine, with accuracy per intent, safety recall, false escalations, money cases and confusions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::scenario::{self, OneOrMany, Scenario};

/// One evaluation file: a scenario and its labelled cases.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalFile {
    /// The scenario id (`scenarios/<id>.toml`).
    pub scenario: String,
    /// The cases.
    pub cases: Vec<Case>,
}

/// One caller turn and what must come of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// What the caller says.
    pub say: String,
    /// The outcome: an intent id, or `emergency`, `crisis`, `secret`, `fallback`.
    #[serde(default)]
    pub expect: Option<String>,
    /// Slot values the conversation must hold after the turn (`""`: still empty).
    #[serde(default)]
    pub slots: BTreeMap<String, String>,
    /// Substrings the reply must contain (case-insensitive).
    #[serde(default)]
    pub reply_contains: Option<OneOrMany>,
    /// Substrings the reply must not contain.
    #[serde(default)]
    pub reply_excludes: Option<OneOrMany>,
}

/// A case: a first turn with its safety class, and optional follow-up turns.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the caller says first.
    pub say: String,
    /// The outcome of the first turn.
    #[serde(default)]
    pub expect: Option<String>,
    /// Slot values after the first turn.
    #[serde(default)]
    pub slots: BTreeMap<String, String>,
    /// Substrings the first reply must contain.
    #[serde(default)]
    pub reply_contains: Option<OneOrMany>,
    /// Substrings the first reply must not contain.
    #[serde(default)]
    pub reply_excludes: Option<OneOrMany>,
    /// `emergency`, `crisis` or `secret` for safety cases.
    #[serde(default)]
    pub safety: Option<String>,
    /// Follow-up turns in the same conversation.
    #[serde(default)]
    pub then: Vec<Turn>,
}

impl Case {
    /// The first turn.
    pub fn first(&self) -> Turn {
        Turn {
            say: self.say.clone(),
            expect: self.expect.clone(),
            slots: self.slots.clone(),
            reply_contains: self.reply_contains.clone(),
            reply_excludes: self.reply_excludes.clone(),
        }
    }
}

/// The outcome of one case.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The first turn as said.
    pub say: String,
    /// The expected outcome of the first turn.
    pub expected: Option<String>,
    /// The outcome the first turn got.
    pub got: String,
    /// The safety class, if any.
    pub safety: Option<String>,
    /// Whether the case checks slots (a money or number case).
    pub money: bool,
    /// What went wrong; empty when it passed.
    pub failures: Vec<String>,
}

/// Outcomes of every case of one file.
#[derive(Debug, Clone)]
pub struct FileReport {
    /// The file.
    pub file: PathBuf,
    /// The scenario.
    pub scenario: String,
    /// Each case.
    pub cases: Vec<CaseOutcome>,
}

/// Load an evaluation file.
pub fn load(path: &Path) -> anyhow::Result<EvalFile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The scenario file an evaluation file names: beside the `eval/` folder, else in `scenarios/`.
pub fn scenario_for(path: &Path, id: &str) -> anyhow::Result<Scenario> {
    let beside = path
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join(format!("{id}.toml")));
    let file = beside
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(format!("scenarios/{id}.toml")));
    scenario::load(&file).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Run every case of an evaluation file, each in a fresh session; actions are recorded, not sent.
pub async fn run(path: &Path) -> anyhow::Result<FileReport> {
    let file = load(path)?;
    let scenario = scenario_for(path, &file.scenario)?;
    let mut cases = Vec::new();
    for case in &file.cases {
        cases.push(run_case(&scenario, case).await);
    }
    Ok(FileReport {
        file: path.to_path_buf(),
        scenario: file.scenario,
        cases,
    })
}

async fn run_case(scenario: &Scenario, case: &Case) -> CaseOutcome {
    let mut conversation = super::testing::Conversation::new(scenario);
    let mut failures = Vec::new();
    let mut first = String::new();
    let opening = case.first();
    let turns = std::iter::once(&opening).chain(&case.then);
    for (i, turn) in turns.enumerate() {
        let at = format!("turn {} {:?}", i + 1, turn.say);
        let reply = match conversation.say(&turn.say).await {
            Ok((reply, _)) => reply,
            Err(error) => {
                failures.push(format!("{at}: {error}"));
                break;
            }
        };
        if i == 0 {
            first = reply.outcome.clone();
        }
        if let Some(expected) = &turn.expect {
            if &reply.outcome != expected {
                let why = match super::safety::explain(scenario, &turn.say) {
                    Some((_, sign)) => format!(" (sign {sign:?})"),
                    None => String::new(),
                };
                failures.push(format!(
                    "{at}: expected {expected}, got {}{why} — {:?}",
                    reply.outcome, reply.text
                ));
            }
        }
        super::testing::check_reply(
            &at,
            &reply.text,
            turn.reply_contains.as_ref(),
            turn.reply_excludes.as_ref(),
            &mut failures,
        );
        for (slot, want) in &turn.slots {
            let held = conversation
                .session
                .slots
                .get(slot)
                .map_or("", String::as_str);
            if held != want {
                failures.push(format!(
                    "{at}: slot {slot} is {held:?}, expected {want:?} — {:?}",
                    reply.text
                ));
            }
        }
    }
    CaseOutcome {
        say: case.say.clone(),
        expected: case.expect.clone(),
        got: first,
        safety: case.safety.clone(),
        money: !case.slots.is_empty() || case.then.iter().any(|t| !t.slots.is_empty()),
        failures,
    }
}

/// Figures over several files' outcomes.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Cases run.
    pub cases: usize,
    /// Cases with every check met.
    pub passed: usize,
    /// Per safety class: (caught, total).
    pub safety: BTreeMap<String, (usize, usize)>,
    /// Ordinary cases (no safety class) answered as an emergency or crisis, and their number.
    pub false_escalations: (usize, usize),
    /// Money and number cases: (passed, total).
    pub money: (usize, usize),
    /// Ordinary intent cases: (right outcome, total).
    pub intents: (usize, usize),
    /// Per expected outcome: (right, total).
    pub per_intent: BTreeMap<String, (usize, usize)>,
    /// (expected, got) → count, for wrong first turns.
    pub confusions: BTreeMap<(String, String), usize>,
}

impl Summary {
    /// Fold the outcomes of some files.
    pub fn of(reports: &[FileReport]) -> Self {
        let mut s = Self::default();
        for case in reports.iter().flat_map(|r| &r.cases) {
            s.cases += 1;
            let passed = case.failures.is_empty();
            s.passed += usize::from(passed);
            let Some(expected) = case.expected.clone() else {
                continue;
            };
            let right = case.got == expected;
            if let Some(class) = &case.safety {
                let entry = s.safety.entry(class.clone()).or_default();
                entry.0 += usize::from(case.got == *class);
                entry.1 += 1;
            } else {
                s.false_escalations.1 += 1;
                if case.got == "emergency" || case.got == "crisis" {
                    s.false_escalations.0 += 1;
                }
                s.intents.0 += usize::from(right);
                s.intents.1 += 1;
            }
            if case.money {
                s.money.0 += usize::from(passed);
                s.money.1 += 1;
            }
            let entry = s.per_intent.entry(expected.clone()).or_default();
            entry.0 += usize::from(right);
            entry.1 += 1;
            if !right {
                *s.confusions
                    .entry((expected, case.got.clone()))
                    .or_default() += 1;
            }
        }
        s
    }

    /// Safety recall over every class, 0 to 1 (1 when there are no safety cases).
    pub fn safety_recall(&self) -> f64 {
        let (caught, total) = self
            .safety
            .values()
            .fold((0, 0), |(c, t), (a, b)| (c + a, t + b));
        ratio(caught, total)
    }
}

/// `a / b`, or 1 when `b` is 0.
pub fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}
