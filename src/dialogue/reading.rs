//! How a caller's turn is read before the safety signs and the intents see it: Sheng words, and English words
//! inside Swahili morphology, become the Swahili words the scenarios already know.
//!
//! The data is `scenarios/language/reading.toml` (embedded; a copy in the scenarios folder replaces it and is
//! reloaded with the scenarios):
//! - `[words]` (Sheng) map a word wherever it stands, and a verb stem with the prefixes it came with:
//!   `amedondoka` reads `ameanguka`;
//! - `[stems]` (English verbs) map only inside Swahili morphology: `ana-bleed` and `anableed` read `anatokwa
//!   damu`, `hajabreathe` reads `hajapumua`, still negative, and a prefix written apart (`ame faint`) joins its
//!   stem; an English word on its own stays English, for the signs' English phrasings;
//! - `[phrases]` map runs of words.
//!
//! Everything else of the turn (numbers, punctuation, names) stays as it was written.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use super::words::analyze;

/// The built-in reading.
pub const BUILT_IN: &str = include_str!("../../scenarios/language/reading.toml");
/// Where a scenarios folder keeps its own copy.
pub const FILE: &str = "language/reading.toml";

/// Shortest word or stem the reading maps (shorter ones hide inside too many Swahili words).
const MIN_KEY: usize = 3;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    words: HashMap<String, String>,
    #[serde(default)]
    stems: HashMap<String, String>,
    #[serde(default)]
    phrases: HashMap<String, String>,
}

/// A compiled reading.
#[derive(Debug, Default)]
pub struct Reading {
    words: HashMap<String, String>,
    /// Read only after a Swahili prefix.
    stems: HashMap<String, String>,
    /// Runs of words (as tokens) and what they read, longest first.
    phrases: Vec<(Vec<String>, String)>,
}

/// Why a reading file was refused, with the line at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ReadingError {
    /// The file.
    pub file: String,
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Reading {
    /// The built-in reading.
    pub fn built_in() -> Arc<Self> {
        static BUILT: std::sync::OnceLock<Arc<Reading>> = std::sync::OnceLock::new();
        Arc::clone(BUILT.get_or_init(|| {
            Arc::new(Self::parse("(embedded) language/reading.toml", BUILT_IN).expect("valid"))
        }))
    }

    /// Compile reading text; every key must be one lower-case word of at least three letters (a phrase: two
    /// words or more) and every value Swahili words.
    pub fn parse(file: &str, source: &str) -> Result<Self, ReadingError> {
        let fail = |line: usize, message: String| ReadingError {
            file: file.to_string(),
            line,
            message,
        };
        let parsed: File = toml::from_str(source).map_err(|e| {
            let line = e
                .span()
                .map_or(1, |s| source[..s.start].matches('\n').count() + 1);
            fail(line, super::scenario::syntax_problem(source, &e))
        })?;
        let line_of = |key: &str| {
            source
                .lines()
                .position(|l| {
                    let l = l.trim_start().trim_start_matches('"');
                    l.starts_with(key)
                })
                .map_or(1, |i| i + 1)
        };
        let single =
            |map: HashMap<String, String>| -> Result<HashMap<String, String>, ReadingError> {
                for (key, value) in &map {
                    let token = super::words::tokens(key);
                    if token.len() != 1 || token[0] != *key || key.chars().count() < MIN_KEY {
                        return Err(fail(
                            line_of(key),
                            format!(
                                "{key:?} is not one lower-case word of {MIN_KEY} letters or more"
                            ),
                        ));
                    }
                    if super::words::tokens(value).is_empty() {
                        return Err(fail(line_of(key), format!("{key:?} reads as nothing")));
                    }
                }
                Ok(map)
            };
        let words = single(parsed.words)?;
        let stems = single(parsed.stems)?;
        let mut phrases = Vec::new();
        for (key, value) in parsed.phrases {
            let run: Vec<String> = key
                .to_lowercase()
                .split_whitespace()
                .map(|w| w.replace(['\'', '’', '-'], ""))
                .collect();
            if run.len() < 2 {
                return Err(fail(
                    line_of(&key),
                    format!(
                        "the phrase {key:?} needs two words or more (one word goes under [words])"
                    ),
                ));
            }
            if super::words::tokens(&value).is_empty() {
                return Err(fail(line_of(&key), format!("{key:?} reads as nothing")));
            }
            phrases.push((run, value));
        }
        phrases.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Ok(Self {
            words,
            stems,
            phrases,
        })
    }

    /// How many words, stems and phrases it maps.
    pub fn len(&self) -> usize {
        self.words.len() + self.stems.len() + self.phrases.len()
    }

    /// Whether it maps nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `text` as the scenarios read it.
    pub fn read(&self, text: &str) -> String {
        let spans = word_spans(text);
        let lower: Vec<String> = spans
            .iter()
            .map(|&(a, b)| text[a..b].to_lowercase().replace(['\'', '’'], ""))
            .collect();
        let mut out = String::with_capacity(text.len() + 16);
        let mut at = 0; // bytes of `text` written
        let mut i = 0;
        while i < spans.len() {
            let (start, end) = spans[i];
            let (taken, reads) = self.reading_at(&lower, i);
            if let Some(reads) = reads {
                out.push_str(&text[at..start]);
                out.push_str(&reads);
                at = spans[i + taken - 1].1;
            } else {
                out.push_str(&text[at..end]);
                at = end;
            }
            i += taken;
        }
        out.push_str(&text[at..]);
        out
    }

    /// What the words from `i` read as: how many it takes and their reading (none when they stay).
    fn reading_at(&self, lower: &[String], i: usize) -> (usize, Option<String>) {
        for (run, reads) in &self.phrases {
            let here = lower[i..].iter().map(|w| w.replace('-', ""));
            if lower.len() - i >= run.len() && here.zip(run).all(|(a, b)| a == *b) {
                return (run.len(), Some(reads.clone()));
            }
        }
        let word = lower[i].replace('-', "");
        if let Some(reads) = self.word(&word) {
            return (1, Some(reads));
        }
        // A prefix written apart from its stem: `ame faint`, `ku withdraw`.
        if let Some(next) = lower.get(i + 1).map(|w| w.replace('-', "")) {
            let known = self.words.contains_key(&next) || self.stems.contains_key(&next);
            if known && is_prefix(&word) {
                if let Some(reads) = self.word(&format!("{word}{next}")) {
                    return (2, Some(reads));
                }
            }
        }
        (1, None)
    }

    /// One word's reading: a Sheng word itself, or a Sheng or English stem with its prefixes kept.
    fn word(&self, word: &str) -> Option<String> {
        if let Some(reads) = self.words.get(word) {
            return Some(reads.clone());
        }
        for (split, _) in word.char_indices().skip(1) {
            let (prefix, stem) = word.split_at(split);
            if stem.chars().count() < MIN_KEY {
                break;
            }
            if let Some(reads) = self.words.get(stem).or_else(|| self.stems.get(stem)) {
                if is_prefix(prefix) {
                    return Some(format!("{prefix}{reads}"));
                }
            }
        }
        None
    }
}

/// Whether `prefix` is a verb's subject, tense and object markers (or `ku-`), as the morphology reads them.
fn is_prefix(prefix: &str) -> bool {
    const PROBE: &str = "tuma";
    !prefix.is_empty()
        && analyze(&format!("{prefix}{PROBE}"))
            .iter()
            .skip(1)
            .any(|f| f.stem == PROBE)
}

/// The byte spans of a text's words: letters, digits, apostrophes and hyphens inside words.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start: Option<usize> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let inner = |c: char| c == '-' || c == '\'' || c == '’';
        let next_is_word = chars.get(k + 1).is_some_and(|&(_, n)| n.is_alphanumeric());
        let part = c.is_alphanumeric() || (inner(c) && start.is_some() && next_is_word);
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// The reading in use, shared by every scenario of a library and swapped when its file is reloaded.
pub type SharedReading = super::shared::Shared<Reading>;

impl super::shared::BuiltIn for Reading {
    fn built_in() -> Arc<Self> {
        Reading::built_in()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading() -> Reading {
        Reading::parse(
            "test",
            "[words]\nmsee = \"mtu\"\ndondoka = \"anguka\"\ndoh = \"pesa\"\n\
             [stems]\nbleed = \"tokwa damu\"\nbreathe = \"pumua\"\n\
             [phrases]\n\"not breathing\" = \"hapumui\"\n",
        )
        .unwrap()
    }

    #[test]
    fn sheng_words_and_english_stems_read_as_swahili_keeping_their_prefixes() {
        let r = reading();
        assert_eq!(r.read("Msee, buda amedondoka!"), "mtu, buda ameanguka!");
        assert_eq!(r.read("manzi ana-bleed sana"), "manzi anatokwa damu sana");
        assert_eq!(r.read("anableed"), "anatokwa damu");
        assert_eq!(r.read("hawezi ku-breathe"), "hawezi kupumua");
        assert_eq!(r.read("hajabreathe"), "hajapumua");
        assert_eq!(r.read("ame bleed tena"), "ametokwa damu tena");
        assert_eq!(r.read("he is not breathing."), "he is hapumui.");
        // An English word on its own stays English.
        assert_eq!(r.read("she is bleeding, bleed"), "she is bleeding, bleed");
        assert_eq!(r.read("doh"), "pesa");
        // Numbers, amounts and punctuation stay as written.
        assert_eq!(
            r.read("nitumie doh 1,500 kwa 0712-345678"),
            "nitumie pesa 1,500 kwa 0712-345678"
        );
        // A Swahili word that merely ends like a key is not a prefix and a stem.
        assert_eq!(r.read("kadondoka"), "kadondoka");
    }

    #[test]
    fn bad_entries_are_refused_with_their_line() {
        let error = Reading::parse("f", "[words]\nok = \"sawa\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        let error = Reading::parse(
            "f",
            "[words]\nfine = \"sawa\"\n[phrases]\nalone = \"peke\"\n",
        )
        .unwrap_err();
        assert_eq!(error.line, 4);
        assert!(Reading::parse("f", "[words]\nfine = 3\n").is_err());
        assert!(Reading::parse("f", "[wordz]\n").is_err());
    }
}
