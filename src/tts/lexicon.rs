//! The pronunciation lexicon (`config/lexicon.toml`): respellings for the normaliser and exact phonemes for
//! the G2P. The file shipped in the repository is compiled in; operators may load their own.

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
            let is_acronym = word.chars().any(|c| c.is_alphabetic())
                && word
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .all(char::is_uppercase);
            if is_acronym {
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
        self.spell_exact.len() + self.spell_folded.len() + self.phonemes.len()
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
