//! Dictionary files, in any of the three formats, told apart by extension or else by content: JSON rules
//! (`{"rules": [...]}` as `add-from-rules` takes them, or a bare array), a W3C PLS lexicon (XML), or a lexicon
//! TOML file with `[spell]` and `[phonemes]` tables (the format of `config/lexicon.toml`).

use std::path::Path;

use super::{check_rule, pls, Rule, RuleError, MAX_FILE_BYTES, MAX_RULES};
use crate::tts::lexicon::Lexicon;

/// The formats a dictionary file may be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Rules as JSON.
    Json,
    /// A W3C PLS lexicon.
    Pls,
    /// A lexicon TOML file.
    Toml,
}

/// The format of a file named `name` holding `text`: by extension, else by its first character.
pub fn detect(name: &str, text: &str) -> Format {
    let extension = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("pls" | "xml") => Format::Pls,
        Some("json") => Format::Json,
        Some("toml") => Format::Toml,
        _ => {
            let text = text.trim_start_matches('\u{feff}').trim_start();
            // `[{` or `[]` opens a JSON array; `[spell]` a TOML table.
            let array = text
                .strip_prefix('[')
                .is_some_and(|rest| rest.trim_start().starts_with(['{', ']']));
            match text.chars().next() {
                Some('<') => Format::Pls,
                Some('{') => Format::Json,
                _ if array => Format::Json,
                _ => Format::Toml,
            }
        }
    }
}

/// The body of a JSON rules file in its object form (other members, such as `name`, are ignored).
#[derive(serde::Deserialize)]
struct JsonRules {
    rules: Vec<Rule>,
}

/// Read the rules of a file named `name` (each rule checked; the first bad one is named by its line or position).
pub fn read_rules(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let rules = match detect(name, text) {
        Format::Pls => return pls::parse(text),
        Format::Json => {
            let text = text.trim_start_matches('\u{feff}').trim_start();
            let parsed = if text.starts_with('[') {
                serde_json::from_str::<Vec<Rule>>(text)
            } else {
                serde_json::from_str::<JsonRules>(text).map(|body| body.rules)
            };
            parsed.map_err(|e| RuleError::Syntax(format!("the JSON is not valid rules: {e}")))?
        }
        Format::Toml => Lexicon::toml_rules(text).map_err(|e| RuleError::Syntax(e.to_string()))?,
    };
    if rules.len() > MAX_RULES {
        return Err(RuleError::TooMany { count: rules.len() });
    }
    for (index, rule) in rules.iter().enumerate() {
        check_rule(rule).map_err(|problem| RuleError::Invalid {
            at: format!("rule {} ({:?})", index + 1, rule.string_to_replace()),
            problem,
        })?;
    }
    Ok(rules)
}

/// Why a dictionary file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Larger than a dictionary file may be.
    #[error("{path} is larger than {} MB", MAX_FILE_BYTES / (1024 * 1024))]
    TooLarge {
        /// The file.
        path: String,
    },
    /// Its rules are not valid.
    #[error("{path}: {source}")]
    Rules {
        /// The file.
        path: String,
        /// What is wrong, with the line or rule.
        source: RuleError,
    },
}

/// Load the rules of a dictionary file (JSON, PLS or TOML).
pub fn load(path: &Path) -> Result<Vec<Rule>, LoadError> {
    let shown = path.display().to_string();
    let size = std::fs::metadata(path)
        .map_err(|source| LoadError::Read {
            path: shown.clone(),
            source,
        })?
        .len();
    if size > MAX_FILE_BYTES as u64 {
        return Err(LoadError::TooLarge { path: shown });
    }
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: shown.clone(),
        source,
    })?;
    read_rules(&shown, &text).map_err(|source| LoadError::Rules {
        path: shown,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_formats_are_told_apart_and_read() {
        let json =
            r#"{"rules": [{"type": "alias", "string_to_replace": "Sheng", "alias": "shengi"}]}"#;
        assert_eq!(detect("x", json), Format::Json);
        assert_eq!(
            read_rules("x", json).unwrap(),
            vec![Rule::alias("Sheng", "shengi")]
        );
        let array = r#"[{"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "nairɔbi", "alphabet": "ipa"}]"#;
        assert_eq!(read_rules("rules.json", array).unwrap().len(), 1);
        let toml = "[spell]\n\"Sheng\" = \"shengi\"\n[phonemes]\n\"Nairobi\" = \"n a i r ɔ b i\"\n";
        assert_eq!(detect("lexicon.toml", toml), Format::Toml);
        assert_eq!(read_rules("x", toml).unwrap().len(), 2);
        assert_eq!(
            detect("x", "  <?xml version=\"1.0\"?><lexicon/>"),
            Format::Pls
        );
    }

    #[test]
    fn problems_are_named() {
        let bad = r#"{"rules": [
            {"type": "alias", "string_to_replace": "Sheng", "alias": "shengi"},
            {"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "naiQ", "alphabet": "ipa"}]}"#;
        let err = read_rules("x.json", bad).unwrap_err().to_string();
        assert!(
            err.contains("rule 2 (\"Nairobi\")") && err.contains("\"Q\""),
            "{err}"
        );
        let broken = "{\"rules\": [\n{\"type\": \"aliass\"}]}";
        let err = read_rules("x.json", broken).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        let toml = "[spell]\n\"Sheng\" = \n";
        assert!(read_rules("x.toml", toml)
            .unwrap_err()
            .to_string()
            .contains("line 2"));
    }
}
