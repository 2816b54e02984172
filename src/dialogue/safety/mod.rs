//! The safety layer every turn passes before any backend: medical emergencies by their danger signs, suicidal
//! thoughts and self-harm, and secrets offered by the caller. It errs towards escalation, lives apart from the
//! scenario's intents, and is the same for every scenario and backend. Its rules are data
//! (`scenarios/language/safety.toml`, [`rules`]); a scenario file adds signs, extends or narrows a category,
//! and sets the words and numbers of the replies.

pub mod lexicon;
pub mod rules;
pub mod secrets;
pub mod signs;

use super::scenario::Scenario;
use super::words::Form;
use signs::{analyse_turn, Sign};

pub use lexicon::{Lexicon, DEFAULT_WINDOW};
pub use rules::{SafetyRules, SharedSafety};

/// What the safety layer found in a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SafetyCase {
    /// A medical (or violent) emergency, with the category that matched (`breathing`, `poisoning`, …, or
    /// `scenario` for a sign of the scenario's own).
    Emergency(String),
    /// Suicidal thoughts or self-harm.
    Crisis,
}

/// The safety case in a user's turn, if any: crisis signs first, then emergencies (unless the turn tells of
/// something past and over), the scenario's own signs included.
pub fn screen(scenario: &Scenario, text: &str) -> Option<SafetyCase> {
    explain(scenario, text).map(|(case, _)| case)
}

/// Like [`screen`], with the sign that matched (for `sauti scenario eval` and the logs).
pub fn explain(scenario: &Scenario, text: &str) -> Option<(SafetyCase, String)> {
    let rules = scenario.safety.current();
    let lexicon = &rules.lexicon;
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
    // The scenario's own signs, compiled once per version of the rules; a list that did not compile (only a
    // scenario that skipped the load-time checks can have one) fails closed: it matches every turn.
    let unusable = || "(the scenario's own signs, which do not compile)".to_string();
    let own = |signs: &Option<Vec<Sign>>| match signs {
        Some(signs) => first(signs),
        None => Some(unusable()),
    };
    let compiled = scenario.guardrails.compiled(&rules);
    if let Some(sign) = own(&compiled.crisis) {
        return Some((SafetyCase::Crisis, sign));
    }
    // Something past and over: a past marker, and either a recovery or nothing that says it is happening now.
    // Or a question asked "just to know".
    let resolved = (first(&lexicon.past).is_some()
        && (first(&lexicon.recovered).is_some() || first(&lexicon.current).is_none()))
        || first(&lexicon.asking).is_some();
    let Some(extensions) = &compiled.categories else {
        return Some((SafetyCase::Emergency("scenario".into()), unusable()));
    };
    for category in &lexicon.categories {
        let extension = extensions.get(&category.id);
        let more = extension.map_or(&[][..], |e| e.signs.as_slice());
        let fewer = extension.map_or(&[][..], |e| e.unless.as_slice());
        let Some(sign) = first(&category.signs).or_else(|| first(more)) else {
            continue;
        };
        if category.crisis {
            // An idiom or a story excuses only the words it covers: the crisis counts if a sign remains.
            let rest = without(&turn, &category.unless);
            let remains = |signs: &[Sign]| {
                signs
                    .iter()
                    .find(|s| s.matches(&rest))
                    .map(|s| s.text.clone())
            };
            match remains(&category.signs).or_else(|| remains(more)) {
                Some(sign) => return Some((SafetyCase::Crisis, sign)),
                None => continue,
            }
        }
        let excepted = first(&category.unless).is_some() || first(fewer).is_some();
        if !resolved && !excepted {
            return Some((SafetyCase::Emergency(category.id.clone()), sign));
        }
    }
    own(&compiled.emergency)
        .filter(|_| !resolved)
        .map(|sign| (SafetyCase::Emergency("scenario".into()), sign))
}

/// The turn with the words every matching sign of `signs` covers left out (as words nothing matches).
fn without(turn: &[Vec<Form>], signs: &[Sign]) -> Vec<Vec<Form>> {
    let mut rest = turn.to_vec();
    for sign in signs {
        for at in sign.covers(turn).into_iter().flatten() {
            if let Some(word) = rest.get_mut(at) {
                word.clear();
            }
        }
    }
    rest
}

/// What the agent says for a safety case: the scenario's reply (numbers first), then the category's advice.
pub fn reply(scenario: &Scenario, case: &SafetyCase) -> String {
    let g = &scenario.guardrails;
    let rules = scenario.safety.current();
    match case {
        SafetyCase::Crisis => g
            .crisis_reply
            .clone()
            .unwrap_or_else(|| rules.replies.crisis.clone()),
        SafetyCase::Emergency(category) => {
            let first = g
                .emergency_reply
                .clone()
                .unwrap_or_else(|| rules.replies.emergency.clone());
            let advice = g.emergency_advice.get(category).cloned().or_else(|| {
                rules
                    .lexicon
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

/// What the agent says to a caller who offers a secret.
pub fn secret_warning(scenario: &Scenario) -> String {
    scenario
        .guardrails
        .secret_warning
        .clone()
        .unwrap_or_else(|| scenario.safety.current().replies.secret_warning.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_rules_compile() {
        let rules = SafetyRules::built_in();
        let lexicon = &rules.lexicon;
        assert!(lexicon.categories.len() >= 14);
        assert!(lexicon.categories[0].crisis);
        assert!(lexicon
            .categories
            .iter()
            .all(|c| c.crisis || c.advice.is_some()));
        assert!(!rules.medical.is_empty() && !rules.secrets.is_empty());
    }

    #[test]
    fn a_rules_file_that_is_not_toml_is_refused_with_a_line_and_a_message() {
        for text in ["\r", "\u{1}", "[classes", ""] {
            let error = SafetyRules::parse("rules.toml", text).unwrap_err();
            assert!(!error.message.trim().is_empty(), "{text:?}: {error}");
            assert!(
                error.line >= 1 && error.line <= text.lines().count().max(1) + 1,
                "{text:?}: {error}"
            );
        }
    }

    /// `scenarios/FORMAT.md` lists the categories and word classes from the rules themselves; run with
    /// `SAUTI_BLESS_DOCS=1` to rewrite the lists after changing the rules.
    #[test]
    fn format_lists_the_safety_categories() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/FORMAT.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let lexicon = &SafetyRules::built_in().lexicon;
        let mut expected = doc.clone();
        for (what, table) in [
            ("categories", lexicon.categories_table()),
            ("classes", lexicon.classes_table()),
        ] {
            let start = format!("<!-- {what}: generated from");
            let end = format!("<!-- end of {what} -->");
            let a = expected.find(&start).expect("the start marker");
            let a = a + expected[a..].find('\n').unwrap() + 1;
            let b = a + expected[a..].find(&end).expect("the end marker");
            expected.replace_range(a..b, &table);
        }
        if std::env::var_os("SAUTI_BLESS_DOCS").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        assert!(
            doc == expected,
            "scenarios/FORMAT.md does not list the safety rules as they are; rerun with SAUTI_BLESS_DOCS=1"
        );
    }
}
