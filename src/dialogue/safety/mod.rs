//! The safety layer every turn passes before any backend: medical emergencies by their danger signs, suicidal
//! thoughts and self-harm, and secrets offered by the caller. It errs towards escalation, lives apart from the
//! scenario's intents, and is the same for every scenario and backend; a scenario file adds signs and sets the
//! words and numbers of the replies.

pub mod secrets;
pub mod signs;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::scenario::Scenario;
use signs::{analyse_turn, Sign, SignError};

/// Default span, in words, within which every word of a sign must appear.
pub const DEFAULT_WINDOW: usize = 6;

/// What the safety layer found in a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SafetyCase {
    /// A medical (or violent) emergency, with the category that matched (`breathing`, `poisoning`, …, or
    /// `scenario` for a sign of the scenario's own).
    Emergency(String),
    /// Suicidal thoughts or self-harm.
    Crisis,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    classes: BTreeMap<String, Vec<String>>,
    categories: Vec<CategoryFile>,
    resolved: ResolvedFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CategoryFile {
    id: String,
    #[serde(default)]
    crisis: bool,
    #[serde(default)]
    advice: Option<String>,
    signs: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    window: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResolvedFile {
    past: Vec<String>,
    recovered: Vec<String>,
    asking: Vec<String>,
    current: Vec<String>,
}

/// One compiled category of signs.
#[derive(Debug)]
pub struct Category {
    /// Its id.
    pub id: String,
    /// Whether it is a crisis (self-harm) rather than a medical emergency.
    pub crisis: bool,
    /// What to do, said after the scenario's emergency reply.
    pub advice: Option<String>,
    signs: Vec<Sign>,
    unless: Vec<Sign>,
}

/// The compiled built-in lexicon.
#[derive(Debug)]
pub struct Lexicon {
    /// Word classes signs can name as `@NAME`.
    pub classes: BTreeMap<String, Vec<String>>,
    /// Categories, in the order they are tried (crisis first).
    pub categories: Vec<Category>,
    past: Vec<Sign>,
    recovered: Vec<Sign>,
    asking: Vec<Sign>,
    current: Vec<Sign>,
}

fn compile_all(
    texts: &[String],
    classes: &BTreeMap<String, Vec<String>>,
    window: usize,
) -> Result<Vec<Sign>, SignError> {
    texts
        .iter()
        .map(|t| Sign::compile(t, classes, window))
        .collect()
}

impl Lexicon {
    fn parse(source: &str) -> Result<Self, String> {
        let file: LexiconFile = toml::from_str(source).map_err(|e| e.to_string())?;
        let classes = file.classes;
        let mut categories = Vec::new();
        for category in file.categories {
            let window = category.window.unwrap_or(DEFAULT_WINDOW);
            categories.push(Category {
                signs: compile_all(&category.signs, &classes, window).map_err(|e| e.to_string())?,
                unless: compile_all(&category.unless, &classes, usize::MAX / 2)
                    .map_err(|e| e.to_string())?,
                id: category.id,
                crisis: category.crisis,
                advice: category.advice,
            });
        }
        categories.sort_by_key(|c| !c.crisis);
        let whole = usize::MAX / 2;
        Ok(Self {
            past: compile_all(&file.resolved.past, &classes, whole).map_err(|e| e.to_string())?,
            recovered: compile_all(&file.resolved.recovered, &classes, whole)
                .map_err(|e| e.to_string())?,
            asking: compile_all(&file.resolved.asking, &classes, whole)
                .map_err(|e| e.to_string())?,
            current: compile_all(&file.resolved.current, &classes, whole)
                .map_err(|e| e.to_string())?,
            classes,
            categories,
        })
    }

    /// The lexicon built into sauti (`src/dialogue/safety/lexicon.toml`).
    pub fn built_in() -> &'static Self {
        static LEXICON: OnceLock<Lexicon> = OnceLock::new();
        LEXICON.get_or_init(|| {
            Self::parse(include_str!("lexicon.toml"))
                .unwrap_or_else(|e| panic!("the built-in safety lexicon is invalid: {e}"))
        })
    }

    /// A category by id.
    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }
}

/// Compile a scenario's own signs (for `sauti scenario check` and at run time).
pub fn compile_signs(texts: &[String]) -> Result<Vec<Sign>, SignError> {
    compile_all(texts, &Lexicon::built_in().classes, DEFAULT_WINDOW)
}

/// The safety case in a user's turn, if any: crisis signs first, then emergencies (unless the turn tells of
/// something past and over), the scenario's own signs included.
pub fn screen(scenario: &Scenario, text: &str) -> Option<SafetyCase> {
    explain(scenario, text).map(|(case, _)| case)
}

/// Like [`screen`], with the sign that matched (for `sauti scenario eval` and the logs).
pub fn explain(scenario: &Scenario, text: &str) -> Option<(SafetyCase, String)> {
    let lexicon = Lexicon::built_in();
    let turn = analyse_turn(text);
    if turn.is_empty() {
        return None;
    }
    let first = |signs: &[Sign]| {
        signs
            .iter()
            .find(|s| s.matches(&turn))
            .map(|s| s.text.clone())
    };
    // The scenario's own signs, compiled once; a list that did not compile (only a scenario that skipped the
    // load-time checks can have one) fails closed: it matches every turn.
    let own = |signs: &Option<Vec<Sign>>| match signs {
        Some(signs) => first(signs),
        None => Some("(the scenario's own signs, which do not compile)".to_string()),
    };
    let compiled = scenario.guardrails.compiled();
    if let Some(sign) = own(&compiled.crisis) {
        return Some((SafetyCase::Crisis, sign));
    }
    // Something past and over: a past marker, and either a recovery or nothing that says it is happening now.
    // Or a question asked "just to know".
    let resolved = (first(&lexicon.past).is_some()
        && (first(&lexicon.recovered).is_some() || first(&lexicon.current).is_none()))
        || first(&lexicon.asking).is_some();
    for category in &lexicon.categories {
        let Some(sign) = first(&category.signs) else {
            continue;
        };
        if category.crisis {
            return Some((SafetyCase::Crisis, sign));
        }
        if !resolved && first(&category.unless).is_none() {
            return Some((SafetyCase::Emergency(category.id.clone()), sign));
        }
    }
    own(&compiled.emergency)
        .filter(|_| !resolved)
        .map(|sign| (SafetyCase::Emergency("scenario".into()), sign))
}

/// Built-in emergency reply, for scenarios that do not set their own.
pub const DEFAULT_EMERGENCY_REPLY: &str = "Hii ni dharura. Piga simu 112 sasa hivi; Tanzania unaweza pia kupiga 114 au 115, na Kenya 999 au 112. Nenda hospitali iliyo karibu nawe mara moja, na usibaki peke yako.";

/// Built-in crisis reply, for scenarios that do not set their own.
pub const DEFAULT_CRISIS_REPLY: &str = "Pole sana kwa unayopitia, na asante kwa kuniambia; hauko peke yako, na maisha yako yana thamani. Tafadhali ongea na mtu sasa hivi: piga 112 popote Tanzania au Kenya, au Kenya 1199 bila malipo, au mwambie mtu unayemwamini awe karibu nawe. Kama umejidhuru au umekunywa kitu, piga 112 sasa hivi au nenda hospitali iliyo karibu.";

/// What the agent says for a safety case: the scenario's reply (numbers first), then the category's advice.
pub fn reply(scenario: &Scenario, case: &SafetyCase) -> String {
    let g = &scenario.guardrails;
    match case {
        SafetyCase::Crisis => g
            .crisis_reply
            .clone()
            .unwrap_or_else(|| DEFAULT_CRISIS_REPLY.to_string()),
        SafetyCase::Emergency(category) => {
            let first = g
                .emergency_reply
                .clone()
                .unwrap_or_else(|| DEFAULT_EMERGENCY_REPLY.to_string());
            let advice = g.emergency_advice.get(category).cloned().or_else(|| {
                Lexicon::built_in()
                    .category(category)
                    .and_then(|c| c.advice.clone())
            });
            match advice {
                Some(advice) if !advice.trim().is_empty() => format!("{first} {advice}"),
                _ => first,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_lexicon_compiles() {
        let lexicon = Lexicon::built_in();
        assert!(lexicon.categories.len() >= 14);
        assert!(lexicon.categories[0].crisis);
        assert!(lexicon
            .categories
            .iter()
            .all(|c| c.crisis || c.advice.is_some()));
    }
}
