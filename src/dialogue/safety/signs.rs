//! Signs: short patterns of Swahili words that a turn must contain, matched through verb morphology.
//!
//! A sign is words separated by spaces, all of which must appear within a few words of each other, in any order:
//! - a word matches any form of it (`tapika` matches `anatapika`, `alitapika`, `kutapika`), forgiving one wrong
//!   letter in words of seven letters or more, but only with the same polarity: `pumua` does not match `hapumui`;
//! - `!word` matches only a negative verb of it: `!pumua` matches `hapumui`, `hakupumua`, `sipumui`;
//! - `a|b|c` matches any one of them;
//! - `a_b` is a phrase: its words next to each other (`mafuta_ya_taa`);
//! - `=word` matches only that word exactly as written (`=ananipiga`, not `amenipigia`);
//! - a sign may start with `~N` to set its own span in words (`~3 damu nyingi`);
//! - `@NAME` matches any entry of a named word class of the safety rules (`@INGEST`: kunywa, meza, kula …).

use std::collections::BTreeMap;

use super::super::words::{analyze, analyze_pattern, tokens, Form};

/// Shortest words in which one wrong letter is forgiven (shorter ones must be exact: `kujiua` is not `kujua`,
/// `nabaka` is not `nataka`).
const TYPO_MIN: usize = 7;

/// One word of a sign.
#[derive(Debug, Clone)]
struct Word {
    forms: Vec<Form>,
    negated: bool,
    /// Only this word as written (`=ananipiga`).
    exact: Option<String>,
}

/// One alternative: a word, or a phrase of adjacent words.
type Phrase = Vec<Word>;

/// A compiled sign: for each term, its alternatives.
#[derive(Debug, Clone)]
pub struct Sign {
    /// The sign as written.
    pub text: String,
    terms: Vec<Vec<Phrase>>,
    window: usize,
}

/// A sign that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sign {sign:?}: {problem}")]
pub struct SignError {
    /// The sign.
    pub sign: String,
    /// What is wrong.
    pub problem: String,
}

fn word(spec: &str) -> Option<Word> {
    if let Some(exact) = spec.strip_prefix('=') {
        return Some(Word {
            forms: Vec::new(),
            negated: false,
            exact: Some(tokens(exact).into_iter().next()?),
        });
    }
    let (negated, bare) = match spec.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let bare = tokens(bare).into_iter().next()?;
    Some(Word {
        forms: analyze_pattern(&bare),
        negated,
        exact: None,
    })
}

impl Sign {
    /// Compile `text` with `classes` for `@NAME` references; all words must be within `window` words.
    pub fn compile(
        text: &str,
        classes: &BTreeMap<String, Vec<String>>,
        window: usize,
    ) -> Result<Self, SignError> {
        let fail = |problem: String| SignError {
            sign: text.to_string(),
            problem,
        };
        // `~4 damu nyingi`: this sign's own window.
        let (window, body) = match text.strip_prefix('~').and_then(|r| r.split_once(' ')) {
            Some((n, body)) => (
                n.parse()
                    .map_err(|_| fail(format!("~{n} is not a number of words")))?,
                body,
            ),
            None => (window, text),
        };
        let mut terms = Vec::new();
        for term in body.split_whitespace() {
            let mut alternatives = Vec::new();
            for alternative in term.split('|') {
                let entries: Vec<String> = match alternative.strip_prefix('@') {
                    Some(name) => classes
                        .get(name)
                        .ok_or_else(|| fail(format!("no word class @{name}")))?
                        .clone(),
                    None => vec![alternative.to_string()],
                };
                for entry in entries {
                    let phrase: Option<Phrase> = entry
                        .split(['_', ' '])
                        .filter(|w| !w.is_empty())
                        .map(word)
                        .collect();
                    match phrase {
                        Some(p) if !p.is_empty() => alternatives.push(p),
                        _ => return Err(fail(format!("{entry:?} has no word in it"))),
                    }
                }
            }
            terms.push(alternatives);
        }
        if terms.is_empty() {
            return Err(fail("it is empty".into()));
        }
        let window = window.max(terms.len());
        Ok(Self {
            text: text.to_string(),
            terms,
            window,
        })
    }

    /// Whether the turn (its words already analysed) contains the sign.
    pub fn matches(&self, turn: &[Vec<Form>]) -> bool {
        self.covers(turn).is_some()
    }

    /// The positions of the turn's words that make up the sign, if it is there.
    pub fn covers(&self, turn: &[Vec<Form>]) -> Option<Vec<usize>> {
        // For each term, where it starts and how many words it takes there.
        let found: Vec<Vec<(usize, usize)>> = self
            .terms
            .iter()
            .map(|alternatives| {
                (0..turn.len())
                    .filter_map(|at| {
                        alternatives
                            .iter()
                            .find(|p| phrase_at(p, turn, at))
                            .map(|p| (at, p.len()))
                    })
                    .collect()
            })
            .collect();
        if found.iter().any(Vec::is_empty) {
            return None;
        }
        // Some start from which every term has a position inside the window.
        let inside = |start: usize, p: usize| p >= start && p < start.saturating_add(self.window);
        let start = found.iter().flatten().map(|&(p, _)| p).find(|&start| {
            found
                .iter()
                .all(|term| term.iter().any(|&(p, _)| inside(start, p)))
        })?;
        // Each term's first place from there: the words of one match, not every place a word recurs.
        Some(
            found
                .iter()
                .filter_map(|term| term.iter().find(|&&(p, _)| inside(start, p)))
                .flat_map(|&(p, len)| p..p + len)
                .collect(),
        )
    }
}

fn phrase_at(phrase: &Phrase, turn: &[Vec<Form>], at: usize) -> bool {
    phrase.iter().enumerate().all(|(i, word)| {
        turn.get(at + i)
            .is_some_and(|said| word_matches(word, said))
    })
}

fn word_matches(word: &Word, said: &[Form]) -> bool {
    if let Some(exact) = &word.exact {
        // The first reading of a word is the word itself.
        return said.first().is_some_and(|s| &s.stem == exact);
    }
    said.iter().any(|s| {
        word.forms.iter().any(|w| {
            let polarity = if word.negated {
                s.negative && !w.negative
            } else {
                s.negative == w.negative
            };
            polarity && close(&w.stem, &s.stem)
        })
    })
}

/// Equal, or (both `TYPO_MIN` letters or more) one letter missing or extra, or (one more letter still) one
/// letter wrong: `jichoma` is not `nichoma`.
fn close(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la.abs_diff(lb) > 1 || la.min(lb) < TYPO_MIN {
        return false;
    }
    let shortest = if la == lb { TYPO_MIN + 1 } else { TYPO_MIN };
    // The first two letters carry the verb's meaning-changing prefix (`ji-` reflexive): no typo there.
    let same_start = a.chars().take(2).eq(b.chars().take(2));
    a == b || (same_start && la.min(lb) >= shortest && super::super::words::similar(a, b))
}

/// A turn's words, each with all its readings.
pub fn analyse_turn(text: &str) -> Vec<Vec<Form>> {
    tokens(text).iter().map(|w| analyze(w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(text: &str) -> Sign {
        let mut classes = BTreeMap::new();
        classes.insert(
            "INGEST".to_string(),
            vec!["kunywa".into(), "meza".into(), "kula".into()],
        );
        Sign::compile(text, &classes, 6).unwrap()
    }

    fn hits(sign_text: &str, turn: &str) -> bool {
        sign(sign_text).matches(&analyse_turn(turn))
    }

    #[test]
    fn polarity_is_respected() {
        assert!(hits("!pumua", "baba hapumui kabisa"));
        assert!(hits("!pumua", "mtoto hakupumua kwa dakika"));
        assert!(!hits("!pumua", "mtoto anapumua vizuri"));
        assert!(hits("tapika damu", "bibi anatapika damu"));
        assert!(!hits("tapika damu", "hatapiki damu tena"));
        assert!(hits("!weza pumua", "siwezi kupumua"));
    }

    #[test]
    fn classes_phrases_and_windows() {
        assert!(hits(
            "@INGEST mafuta_ya_taa",
            "mtoto amekunywa mafuta ya taa"
        ));
        assert!(!hits(
            "@INGEST mafuta_ya_taa",
            "mtoto amekunywa mafuta, taa imezima"
        ));
        assert!(hits(
            "jifungua damu",
            "alijifungua jana na sasa damu inatoka"
        ));
        assert!(!hits(
            "damu nyingi",
            "nilipima damu jana hospitalini kwa ajili ya sukari na leo nimekula chakula kingi na matunda mengi na mboga nyingi"
        ));
        assert!(hits("jiua", "nataka nijiue"));
        assert!(!hits("jiua", "nataka kujua saa"));
        assert!(hits("kwama koo", "chakula kimemkwama kooni"));
    }
}
