//! Pronunciation rules as callers write them (ElevenLabs' pronunciation dictionaries): aliases that respell a
//! word or phrase, and phoneme rules in IPA that give a word's exact sound. Rules come as JSON, as a W3C PLS
//! file ([`pls`]) or as a lexicon TOML file ([`file`]); each is checked before it is kept, and is laid over a
//! [`Lexicon`] in order, later rules overriding earlier ones.
//!
//! Rules are bounded so that a dictionary cannot turn a short text into hours of audio: a reading (an alias or
//! a transcription) may be at most [`READING_RATIO`] times as long as what it replaces, or
//! [`READING_FLOOR_CHARS`] characters whatever it replaces (never more than [`MAX_READING_CHARS`]); and a
//! text read with rules is measured after them ([`expand`]) against the same limit as the text itself.

pub mod expand;
pub mod file;
pub mod ipa;
mod lines;
pub mod pls;

use serde::{Deserialize, Serialize};

use super::lexicon::Lexicon;

/// Most rules one dictionary holds.
pub const MAX_RULES: usize = 1_000;
/// Longest `string_to_replace`, in characters.
pub const MAX_STRING_CHARS: usize = 100;
/// Longest alias or phoneme transcription, in characters.
pub const MAX_READING_CHARS: usize = 500;
/// Largest dictionary file (PLS, JSON or TOML), in bytes.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// How many times longer than the string it replaces a reading (alias or transcription) may be.
pub const READING_RATIO: usize = 8;
/// A reading of at most this many characters is allowed whatever it replaces (a one-letter acronym may read
/// as a name).
pub const READING_FLOOR_CHARS: usize = 64;

/// The longest reading, in characters, a rule replacing `string_to_replace` may have: [`READING_RATIO`] times
/// its length, at least [`READING_FLOOR_CHARS`] and at most [`MAX_READING_CHARS`].
pub fn max_reading_chars(string_to_replace: &str) -> usize {
    (READING_RATIO * string_to_replace.trim().chars().count())
        .clamp(READING_FLOOR_CHARS, MAX_READING_CHARS)
}

/// One rule, in the shape of ElevenLabs' `add-from-rules`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Rule {
    /// Read `string_to_replace` (a word or a phrase) as `alias`, written in Swahili spelling.
    Alias {
        /// The word or phrase as it appears in text. Matched as whole words, in any case unless it is written
        /// all in capitals (an acronym) or `case_sensitive` says otherwise.
        #[schema(
            example = "M-Pesa",
            min_length = 1,
            max_length = 100,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[A-Za-z0-9][^\u0000-\u001f\u007f-\u009f]*$"
        )]
        string_to_replace: String,
        /// How to read it, in Swahili spelling.
        #[schema(
            example = "em pesa",
            min_length = 1,
            max_length = 500,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*\S[^\u0000-\u001f\u007f-\u009f]*$"
        )]
        alias: String,
        /// Match only as written (`true`) or in any case (`false`); omitted: only acronyms match as written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_sensitive: Option<bool>,
        /// Rules always match whole words: `true` or left out (`false` is refused).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(schema_with = only_true)]
        word_boundaries: Option<bool>,
    },
    /// Say the word `string_to_replace` with exactly these phonemes.
    Phoneme {
        /// One word (letters, apostrophes and hyphens), matched in any case.
        #[schema(
            example = "Nairobi",
            min_length = 1,
            max_length = 100,
            pattern = r"^\s*[A-Za-z][A-Za-z'-]*\s*$"
        )]
        string_to_replace: String,
        /// The transcription in IPA; stress and length marks and syllable dots are ignored.
        #[schema(
            example = "nai.ˈrɔ.bi",
            min_length = 1,
            max_length = 500,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*\S[^\u0000-\u001f\u007f-\u009f]*$"
        )]
        phoneme: String,
        /// `ipa` (the only alphabet accepted).
        #[schema(example = "ipa", pattern = r"^\s*[iI][pP][aA]\s*$")]
        alphabet: String,
    },
}

/// The schema of `word_boundaries`: whole-word matching is the only kind there is.
fn only_true() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Boolean, Type::Null]))
        .enum_values(Some([
            serde_json::Value::Bool(true),
            serde_json::Value::Null,
        ]))
        .description(Some("Rules always match whole words: `true` or left out."))
        .build()
}

impl Rule {
    /// The text the rule replaces.
    pub fn string_to_replace(&self) -> &str {
        match self {
            Rule::Alias {
                string_to_replace, ..
            }
            | Rule::Phoneme {
                string_to_replace, ..
            } => string_to_replace,
        }
    }

    /// An alias rule with the default matching.
    pub fn alias(string_to_replace: &str, alias: &str) -> Self {
        Rule::Alias {
            string_to_replace: string_to_replace.to_string(),
            alias: alias.to_string(),
            case_sensitive: None,
            word_boundaries: None,
        }
    }

    /// An IPA phoneme rule.
    pub fn phoneme(string_to_replace: &str, phoneme: &str) -> Self {
        Rule::Phoneme {
            string_to_replace: string_to_replace.to_string(),
            phoneme: phoneme.to_string(),
            alphabet: "ipa".into(),
        }
    }
}

/// Why rules were refused; every variant names what is at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    /// One rule is invalid: `at` names it (`rule 3 ("Nairobi")`, or `line 12` of a file).
    #[error("{at}: {problem}")]
    Invalid {
        /// Which rule or line.
        at: String,
        /// What is wrong with it.
        problem: String,
    },
    /// More rules than a dictionary may hold.
    #[error("the dictionary has {count} rules; at most {MAX_RULES} are allowed")]
    TooMany {
        /// How many were sent.
        count: usize,
    },
    /// No rules at all.
    #[error("the dictionary has no rules")]
    Empty,
    /// The file could not be read as its format (the message names the line).
    #[error("{0}")]
    Syntax(String),
}

/// A rule made ready for the lexicon.
enum Entry {
    Alias {
        key: String,
        reading: String,
        case_sensitive: Option<bool>,
    },
    Phonemes {
        key: String,
        word: String,
        phonemes: Vec<super::g2p::Phoneme>,
    },
}

fn check_text(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!("`{what}` is empty"));
    }
    if text.chars().count() > max {
        return Err(format!("`{what}` is longer than {max} characters"));
    }
    if text.chars().any(char::is_control) {
        return Err(format!("`{what}` contains a control character"));
    }
    Ok(())
}

/// A reading no longer than [`max_reading_chars`] of what it replaces.
fn check_ratio(what: &str, key: &str, reading: &str) -> Result<(), String> {
    let (length, max) = (reading.trim().chars().count(), max_reading_chars(key));
    if length > max {
        return Err(format!(
            "`{what}` has {length} characters for {key:?} ({}): a reading may be at most {max} characters \
             ({READING_RATIO} times the length of what it replaces, and {READING_FLOOR_CHARS} whatever it replaces)",
            key.chars().count()
        ));
    }
    Ok(())
}

/// Check one rule and make it ready for the lexicon; the error says what is wrong (without saying where).
fn compile(rule: &Rule) -> Result<Entry, String> {
    check_text(
        "string_to_replace",
        rule.string_to_replace(),
        MAX_STRING_CHARS,
    )?;
    let key = rule.string_to_replace().trim();
    if !key.chars().any(char::is_alphanumeric) {
        return Err("`string_to_replace` has no letter or digit".into());
    }
    match rule {
        Rule::Alias {
            alias,
            case_sensitive,
            word_boundaries,
            ..
        } => {
            check_text("alias", alias, MAX_READING_CHARS)?;
            check_ratio("alias", key, alias)?;
            if *word_boundaries == Some(false) {
                return Err(
                    "`word_boundaries: false` is not supported: rules match whole words".into(),
                );
            }
            Ok(Entry::Alias {
                key: key.to_string(),
                reading: alias.trim().to_string(),
                case_sensitive: *case_sensitive,
            })
        }
        Rule::Phoneme {
            phoneme, alphabet, ..
        } => {
            if !alphabet.trim().eq_ignore_ascii_case("ipa") {
                return Err(format!(
                    "alphabet {alphabet:?} is not supported: write the phonemes in IPA (alphabet \"ipa\")"
                ));
            }
            check_text("phoneme", phoneme, MAX_READING_CHARS)?;
            check_ratio("phoneme", key, phoneme)?;
            let word: String = key.to_lowercase().chars().filter(|&c| c != '-').collect();
            let one_word = word.trim_matches('\'').chars().next().is_some()
                && word.chars().all(|c| c.is_alphabetic() || c == '\'');
            if !one_word {
                return Err(format!(
                    "a phoneme rule applies to one word of letters; use an alias rule for {key:?}"
                ));
            }
            let phonemes = ipa::parse(phoneme).map_err(|e| e.to_string())?;
            Ok(Entry::Phonemes {
                key: key.to_string(),
                word,
                phonemes,
            })
        }
    }
}

/// Check one rule; `Err` holds what is wrong with it.
pub fn check_rule(rule: &Rule) -> Result<(), String> {
    compile(rule).map(|_| ())
}

/// Check a dictionary's rules: their count and each rule (the first bad one is named by its position).
pub fn check(rules: &[Rule]) -> Result<(), RuleError> {
    if rules.is_empty() {
        return Err(RuleError::Empty);
    }
    if rules.len() > MAX_RULES {
        return Err(RuleError::TooMany { count: rules.len() });
    }
    apply(&mut Lexicon::default(), rules)
}

/// Lay `rules` over `lexicon` in order (later rules override earlier ones and the lexicon's own entries).
pub fn apply(lexicon: &mut Lexicon, rules: &[Rule]) -> Result<(), RuleError> {
    for (index, rule) in rules.iter().enumerate() {
        let entry = compile(rule).map_err(|problem| RuleError::Invalid {
            at: format!("rule {} ({:?})", index + 1, rule.string_to_replace()),
            problem,
        })?;
        match entry {
            Entry::Alias {
                key,
                reading,
                case_sensitive,
            } => lexicon.add_alias(&key, &reading, case_sensitive),
            Entry::Phonemes {
                key,
                word,
                phonemes,
            } => lexicon.add_phonemes(&key, &word, phonemes),
        }
    }
    Ok(())
}

/// `base` with `rules` laid over it.
pub fn layered(base: &Lexicon, rules: &[Rule]) -> Result<Lexicon, RuleError> {
    let mut lexicon = base.clone();
    apply(&mut lexicon, rules)?;
    Ok(lexicon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::g2p;

    fn phonemes_of(lexicon: &Lexicon, text: &str) -> String {
        g2p::transcribe(&lexicon.normalize(text), lexicon).to_string()
    }

    #[test]
    fn aliases_and_phonemes_change_the_reading() {
        let lexicon = layered(
            Lexicon::embedded(),
            &[
                Rule::alias("Sheng", "sheng'i"),
                Rule::alias("Benki Kuu ya Tanzania", "beoti"),
                Rule::phoneme("Nairobi", "nai.ˈrɔ.bi"),
                Rule::phoneme("WhatsApp", "wɔtsap"),
            ],
        )
        .unwrap();
        assert_eq!(lexicon.normalize("Sheng ni lugha"), "sheng'i ni lugha");
        assert_eq!(
            lexicon.normalize("Nenda BENKI kuu ya tanzania leo."),
            "Nenda beoti leo."
        );
        assert!(phonemes_of(&lexicon, "Nairobi").contains("na.i.ˈrɔ.bi"));
        // A later phoneme rule overrides the built-in respelling of WhatsApp ("wotsapu").
        assert!(phonemes_of(&lexicon, "WhatsApp").contains("tsap ‖"));
        assert!(!phonemes_of(Lexicon::embedded(), "WhatsApp").contains("tsap ‖"));
    }

    #[test]
    fn later_rules_override_earlier_ones() {
        let lexicon = layered(
            Lexicon::embedded(),
            &[Rule::alias("mpesa", "mpesa ya kwanza")],
        )
        .unwrap();
        // The built-in "MPESA" (capitals, matched as written) is overridden by a rule in any case.
        assert_eq!(lexicon.normalize("MPESA"), "mpesa ya kwanza");
        let again = layered(&lexicon, &[Rule::alias("mpesa", "pesa")]).unwrap();
        assert_eq!(again.normalize("Mpesa"), "pesa");
    }

    #[test]
    fn bad_rules_are_named_with_their_problem() {
        let err = check(&[
            Rule::alias("Sheng", "sheng'i"),
            Rule::phoneme("Nairobi", "naiʁobi"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("rule 2 (\"Nairobi\")") && err.contains("\"ʁ\""),
            "{err}"
        );
        let multi = check(&[Rule::phoneme("two words", "tu")])
            .unwrap_err()
            .to_string();
        assert!(multi.contains("one word"), "{multi}");
        let cmu = Rule::Phoneme {
            string_to_replace: "tomato".into(),
            phoneme: "T AH0 M EY1 T OW2".into(),
            alphabet: "cmu-arpabet".into(),
        };
        assert!(check(&[cmu]).unwrap_err().to_string().contains("IPA"));
        assert_eq!(check(&[]), Err(RuleError::Empty));
        let many = vec![Rule::alias("a", "b"); MAX_RULES + 1];
        assert_eq!(
            check(&many),
            Err(RuleError::TooMany {
                count: MAX_RULES + 1
            })
        );
        let long = "a".repeat(MAX_STRING_CHARS + 1);
        assert!(check(&[Rule::alias(&long, "b")]).is_err());
    }

    #[test]
    fn a_reading_much_longer_than_what_it_replaces_is_refused() {
        // 8 times what is replaced, and 64 characters whatever is replaced.
        assert_eq!(max_reading_chars("a"), 64);
        assert_eq!(max_reading_chars("Benki Kuu ya Tanzania"), 168);
        assert_eq!(max_reading_chars(&"a".repeat(100)), MAX_READING_CHARS);
        assert!(check(&[Rule::alias("a", &"b".repeat(64))]).is_ok());
        let err = check(&[
            Rule::alias("TZ", "tanzania"),
            Rule::alias("a", &"b".repeat(65)),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("rule 2 (\"a\")") && err.contains("at most 64 characters"),
            "{err}"
        );
        assert!(check(&[Rule::phoneme("Nairobi", &"nairɔbi".repeat(9))]).is_ok());
        let longer = Rule::phoneme("Nairobi", &"nairɔbi".repeat(10));
        let err = check(&[longer]).unwrap_err().to_string();
        assert!(
            err.contains("`phoneme` has 70 characters") && err.contains("at most 64"),
            "{err}"
        );
    }
}
