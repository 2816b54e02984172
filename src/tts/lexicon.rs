//! The pronunciation lexicon (`config/lexicon.toml`): respellings for the normaliser and exact phonemes for
//! the G2P. The file shipped in the repository is compiled in; operators may load their own.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::g2p::{Phoneme, PHONEME_SYMBOLS};

/// The lexicon compiled into the binary from `config/lexicon.toml`.
const EMBEDDED: &str = include_str!("../../config/lexicon.toml");

/// Problems with a lexicon file, reported with the entry at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LexiconError {
    /// The file is not valid TOML of the expected shape.
    #[error("lexicon is not valid: {0}")]
    Syntax(String),
    /// A `[phonemes]` entry uses a symbol outside the documented set.
    #[error("lexicon entry {word:?}: unknown phoneme {symbol:?}")]
    UnknownPhoneme {
        /// The entry's key.
        word: String,
        /// The offending symbol.
        symbol: String,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    #[serde(default)]
    spell: HashMap<String, String>,
    #[serde(default)]
    phonemes: HashMap<String, String>,
}

/// Word → reading tables.
#[derive(Debug, Default, Clone)]
pub struct Lexicon {
    /// Acronym keys (all capitals), matched exactly.
    spell_exact: HashMap<String, String>,
    /// Other keys, lowercased, matched in any case.
    spell_folded: HashMap<String, String>,
    /// Lowercased word → phonemes.
    phonemes: HashMap<String, Vec<Phoneme>>,
    /// Keys that are not one word for the normaliser (several words, or punctuation inside), longest first.
    phrases: Vec<Phrase>,
    /// Words given phonemes by a rule laid over the lexicon → those phonemes in Swahili spelling, for voices
    /// that read letters (the shipped `[phonemes]` entries are left to such voices' own reading).
    letters: HashMap<String, String>,
}

/// A respelling of a phrase, replaced in the raw text before the normaliser runs.
#[derive(Debug, Clone)]
struct Phrase {
    /// The key, runs of white space made one space.
    key: String,
    /// Whether it matches only as written.
    exact: bool,
    reading: String,
}

impl Phrase {
    /// The byte length of the match at the start of `text`, if the phrase is there.
    fn matches(&self, text: &str) -> Option<usize> {
        let mut rest = text.chars().peekable();
        let mut used = 0;
        for k in self.key.chars() {
            let c = rest.next()?;
            used += c.len_utf8();
            if k == ' ' {
                if !c.is_whitespace() {
                    return None;
                }
                while let Some(&w) = rest.peek().filter(|w| w.is_whitespace()) {
                    used += w.len_utf8();
                    rest.next();
                }
            } else if c != k && (self.exact || !c.to_lowercase().eq(k.to_lowercase())) {
                return None;
            }
        }
        Some(used)
    }
}

/// Whether a key is written all in capitals (an acronym), which is matched only as written.
fn is_acronym(key: &str) -> bool {
    key.chars().any(|c| c.is_alphabetic())
        && key
            .chars()
            .filter(|c| c.is_alphabetic())
            .all(char::is_uppercase)
}

/// Whether the normaliser sees `key` as one word (what its lexicon step looks up).
fn is_one_token(key: &str) -> bool {
    re!(r"^\p{L}[\p{L}\p{N}]*(?:-\p{L}[\p{L}\p{N}]*)*$").is_match(key)
}

impl Lexicon {
    /// The lexicon shipped with sauti.
    pub fn embedded() -> &'static Lexicon {
        static LEXICON: OnceLock<Lexicon> = OnceLock::new();
        // The embedded file is checked by the test suite, so it always parses.
        LEXICON.get_or_init(|| Lexicon::from_toml(EMBEDDED).unwrap_or_default())
    }

    /// Parse a lexicon file.
    pub fn from_toml(text: &str) -> Result<Self, LexiconError> {
        let file: LexiconFile =
            toml::from_str(text).map_err(|e| LexiconError::Syntax(e.to_string()))?;
        let mut lexicon = Lexicon::default();
        for (word, reading) in file.spell {
            if is_acronym(&word) {
                lexicon.spell_exact.insert(word, reading);
            } else {
                lexicon.spell_folded.insert(word.to_lowercase(), reading);
            }
        }
        for (word, symbols) in file.phonemes {
            let phonemes = symbols
                .split_whitespace()
                .map(|s| {
                    Phoneme::from_symbol(s).ok_or_else(|| LexiconError::UnknownPhoneme {
                        word: word.clone(),
                        symbol: s.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            lexicon.phonemes.insert(word.to_lowercase(), phonemes);
        }
        Ok(lexicon)
    }

    /// The `[spell]` and `[phonemes]` tables of a lexicon file as rules, without checking them (for laying a
    /// TOML file over another lexicon).
    pub fn toml_rules(text: &str) -> Result<Vec<crate::tts::pronunciation::Rule>, LexiconError> {
        use crate::tts::pronunciation::Rule;
        let file: LexiconFile =
            toml::from_str(text).map_err(|e| LexiconError::Syntax(e.to_string()))?;
        let mut spell: Vec<_> = file.spell.into_iter().collect();
        let mut phonemes: Vec<_> = file.phonemes.into_iter().collect();
        spell.sort();
        phonemes.sort();
        let mut rules: Vec<Rule> = spell.iter().map(|(k, v)| Rule::alias(k, v)).collect();
        rules.extend(phonemes.iter().map(|(k, v)| Rule::phoneme(k, v)));
        Ok(rules)
    }

    /// Read `key` (a word or a phrase) as `reading`, over any earlier entry for it. Matched as written when
    /// `case_sensitive`, in any case when not; by default only acronyms (all capitals) match as written.
    pub fn add_alias(&mut self, key: &str, reading: &str, case_sensitive: Option<bool>) {
        let key = key.split_whitespace().collect::<Vec<_>>().join(" ");
        let exact = case_sensitive.unwrap_or_else(|| is_acronym(&key));
        if is_one_token(&key) {
            if exact {
                self.spell_exact.insert(key, reading.to_string());
            } else {
                let folded = key.to_lowercase();
                // A rule for any case overrides earlier ones for particular cases.
                self.spell_exact.retain(|k, _| k.to_lowercase() != folded);
                self.spell_folded.insert(folded, reading.to_string());
            }
            return;
        }
        let folded = key.to_lowercase();
        self.phrases
            .retain(|p| !(p.key == key || (!exact && p.key.to_lowercase() == folded)));
        let at = self
            .phrases
            .iter()
            .position(|p| p.key.chars().count() < key.chars().count())
            .unwrap_or(self.phrases.len());
        self.phrases.insert(
            at,
            Phrase {
                key,
                exact,
                reading: reading.to_string(),
            },
        );
    }

    /// Say `key` with exactly `phonemes`, over any earlier entry for it; `word` is the key as the G2P sees it
    /// (lowercase letters and apostrophes). The key is first respelled as that word, so that no earlier
    /// respelling and no normaliser rule (acronyms, say) changes it before the G2P looks it up.
    pub fn add_phonemes(&mut self, key: &str, word: &str, phonemes: Vec<Phoneme>) {
        self.add_alias(key, word, Some(false));
        self.letters.insert(
            word.to_string(),
            super::pronunciation::ipa::spell(&phonemes),
        );
        self.phonemes.insert(word.to_string(), phonemes);
    }

    /// Replace the phrases this lexicon knows in raw text (whole words only), before the normaliser runs.
    pub fn respell_phrases<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.phrases.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut previous: Option<char> = None;
        let mut at = 0;
        let mut changed = false;
        while let Some(c) = text[at..].chars().next() {
            let boundary_before = previous.is_none_or(|p| !p.is_alphanumeric());
            let found = self.phrases.iter().find_map(|phrase| {
                let starts_word = phrase.key.starts_with(char::is_alphanumeric);
                if starts_word && !boundary_before {
                    return None;
                }
                let length = phrase.matches(&text[at..])?;
                let next = text[at + length..].chars().next();
                let ends_word = phrase.key.ends_with(char::is_alphanumeric);
                if ends_word && next.is_some_and(char::is_alphanumeric) {
                    return None;
                }
                Some((length, phrase))
            });
            match found {
                Some((length, phrase)) => {
                    out.push_str(&phrase.reading);
                    previous = text[at..at + length].chars().next_back();
                    at += length;
                    changed = true;
                }
                None => {
                    out.push(c);
                    previous = Some(c);
                    at += c.len_utf8();
                }
            }
        }
        if changed {
            Cow::Owned(out)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// The length in characters of `text` once this lexicon's respellings are made: its phrases, then its words
    /// (a word a phoneme rule covers counts as its Swahili spelling, the length of what is said). What the
    /// normaliser's own rules make of numbers and abbreviations afterwards is not counted. Builds nothing
    /// longer than the text with its phrases respelled.
    pub fn respelled_chars(&self, text: &str) -> usize {
        let phrased = self.respell_phrases(text);
        let (mut count, mut last) = (0, 0);
        for word in re!(r"\p{L}[\p{L}\p{N}]*(?:-\p{L}[\p{L}\p{N}]*)*").find_iter(&phrased) {
            count += phrased[last..word.start()].chars().count();
            let spelled = self.spelling(word.as_str()).unwrap_or(word.as_str());
            let letters = self
                .letters
                .get(&spelled.to_lowercase())
                .map_or(0, |l| l.chars().count());
            count += spelled.chars().count().max(letters);
            last = word.end();
        }
        count + phrased[last..].chars().count()
    }

    /// Written Swahili → the words a voice says, with this lexicon.
    pub fn normalize(&self, text: &str) -> String {
        crate::tts::normalize::normalize_with(text, self)
    }

    /// Normalised words with every word a phoneme rule laid over this lexicon covers written in Swahili
    /// spelling (from its phonemes), for voices that read letters rather than phonemes.
    pub fn spell_phoneme_words<'a>(&self, words: &'a str) -> Cow<'a, str> {
        if self.letters.is_empty() {
            return Cow::Borrowed(words);
        }
        re!(r"[\p{L}']+").replace_all(words, |c: &regex::Captures| {
            let word = c[0].to_lowercase();
            match self.letters.get(word.trim_matches('\'')) {
                Some(spelling) => spelling.clone(),
                None => c[0].to_string(),
            }
        })
    }

    /// How to spell `word` for the voice, if the lexicon says.
    pub fn spelling(&self, word: &str) -> Option<&str> {
        self.spell_exact
            .get(word)
            .or_else(|| self.spell_folded.get(&word.to_lowercase()))
            .map(String::as_str)
    }

    /// Exact phonemes for `word`, if the lexicon gives them.
    pub fn phonemes(&self, word: &str) -> Option<&[Phoneme]> {
        self.phonemes.get(&word.to_lowercase()).map(Vec::as_slice)
    }

    /// Number of entries, for start-up logs.
    pub fn len(&self) -> usize {
        self.spell_exact.len() + self.spell_folded.len() + self.phonemes.len() + self.phrases.len()
    }

    /// Whether the lexicon has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The symbols a `[phonemes]` entry may use, for error messages and docs.
pub fn phoneme_symbols() -> &'static [&'static str] {
    PHONEME_SYMBOLS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lexicon_parses_and_answers() {
        let parsed = Lexicon::from_toml(EMBEDDED).expect("config/lexicon.toml is valid");
        assert!(parsed.len() > 20);
        let lexicon = Lexicon::embedded();
        assert_eq!(lexicon.spelling("M-Pesa"), Some("em pesa"));
        assert_eq!(lexicon.spelling("TANESCO"), Some("tanesko"));
        assert_eq!(lexicon.spelling("Email"), Some("imeli"));
        assert_eq!(
            lexicon.spelling("Tanesco"),
            None,
            "acronym keys match exactly"
        );
        assert!(lexicon.phonemes("Kompyuta").is_some());
    }

    #[test]
    fn phrases_match_whole_words_in_any_case_or_as_written() {
        let mut lexicon = Lexicon::default();
        lexicon.add_alias("Benki  Kuu", "bi kei", None);
        lexicon.add_alias("C++", "si plasi plasi", None);
        lexicon.add_alias("AT&T", "ei ti en ti", None);
        assert_eq!(lexicon.respell_phrases("Ya benki\nkuu."), "Ya bi kei.");
        assert_eq!(lexicon.respell_phrases("benki kuuu"), "benki kuuu");
        assert_eq!(lexicon.respell_phrases("Abenki kuu"), "Abenki kuu");
        assert_eq!(
            lexicon.respell_phrases("Najua C++, AT&T"),
            "Najua si plasi plasi, ei ti en ti"
        );
        assert_eq!(
            lexicon.respell_phrases("at&t"),
            "at&t",
            "capitals match as written"
        );
        assert!(matches!(
            lexicon.respell_phrases("hakuna"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn letter_reading_voices_get_phoneme_rules_in_swahili_spelling() {
        let mut lexicon = Lexicon::embedded().clone();
        // The shipped [phonemes] entries are left alone ("benki" stays as written) …
        assert_eq!(
            lexicon.spell_phoneme_words("benki ya nairobi"),
            "benki ya nairobi"
        );
        // … a rule laid over the lexicon is spelled out.
        lexicon.add_phonemes(
            "Nairobi",
            "nairobi",
            crate::tts::pronunciation::ipa::parse("ˈnɛ.rɔ.bi").unwrap(),
        );
        assert_eq!(
            lexicon.spell_phoneme_words("benki ya nairobi"),
            "benki ya nerobi"
        );
    }

    #[test]
    fn bad_entries_are_named() {
        let err = Lexicon::from_toml("[phonemes]\nneno = \"n ɛ Q\"\n").expect_err("bad symbol");
        assert_eq!(
            err,
            LexiconError::UnknownPhoneme {
                word: "neno".into(),
                symbol: "Q".into()
            }
        );
        assert!(matches!(
            Lexicon::from_toml("[spel]\n"),
            Err(LexiconError::Syntax(_))
        ));
    }
}
