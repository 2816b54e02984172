//! The safety rules as data (`scenarios/language/safety.toml`, embedded; a copy in the scenarios folder replaces
//! it and is reloaded with the scenarios): the signs, the past-and-over rule, the default replies, the secret
//! vocabulary and the dose and diagnosis patterns. Everything is compiled when the file is loaded, and a file
//! that does not compile is refused with the line at fault.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::lexicon::{CategoryFile, Lexicon, ResolvedFile};
use super::secrets::{SecretRules, SecretsFile};

/// The built-in rules.
pub const BUILT_IN: &str = include_str!("../../../scenarios/language/safety.toml");
/// Where a scenarios folder keeps its own copy.
pub const FILE: &str = "language/safety.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    classes: BTreeMap<String, Vec<String>>,
    categories: Vec<CategoryFile>,
    resolved: ResolvedFile,
    replies: Replies,
    secrets: SecretsFile,
    medical: MedicalFile,
}

/// What the agent says when a scenario sets no reply of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replies {
    /// For an emergency (its category's advice follows).
    pub emergency: String,
    /// For suicidal thoughts or self-harm.
    pub crisis: String,
    /// To a caller who offers a secret.
    pub secret_warning: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MedicalFile {
    doses: Vec<Spanned<String>>,
    diagnoses: Vec<Spanned<String>>,
}

/// The compiled safety rules.
#[derive(Debug)]
pub struct SafetyRules {
    /// The signs of emergencies and crises, and the past-and-over rule.
    pub lexicon: Lexicon,
    /// The default replies.
    pub replies: Replies,
    /// How secrets are named, offered and asked for.
    pub secrets: SecretRules,
    /// Replies that name a dose or a diagnosis.
    pub medical: Vec<Regex>,
    /// Which compilation this is: scenarios compile their own signs against one, and again after a reload.
    pub generation: u64,
}

/// Why a rules file was refused, with the line at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RulesError {
    /// The file.
    pub file: String,
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Where a piece of the source is: its text's line.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl Source<'_> {
    /// A problem at the byte `offset`.
    pub fn fail(&self, offset: usize, message: impl Into<String>) -> RulesError {
        RulesError {
            file: self.file.to_string(),
            line: self.text[..offset.min(self.text.len())]
                .matches('\n')
                .count()
                + 1,
            message: message.into(),
        }
    }

    /// Compile a regular expression written at `entry` (case ignored).
    pub fn regex(&self, entry: &Spanned<String>) -> Result<Regex, RulesError> {
        Regex::new(&format!("(?i){}", entry.get_ref())).map_err(|e| {
            self.fail(
                entry.span().start,
                format!("{:?} does not compile: {e}", entry.get_ref()),
            )
        })
    }
}

/// Entries of regular expressions joined as one alternative group, each checked on its own first (so a broken
/// one is named with its line).
pub fn alternatives(source: Source, entries: &[Spanned<String>]) -> Result<String, RulesError> {
    let mut parts = Vec::with_capacity(entries.len());
    for entry in entries {
        source.regex(entry)?;
        parts.push(format!("(?:{})", entry.get_ref()));
    }
    Ok(format!("(?:{})", parts.join("|")))
}

impl SafetyRules {
    /// The built-in rules.
    pub fn built_in() -> Arc<Self> {
        static BUILT: OnceLock<Arc<SafetyRules>> = OnceLock::new();
        Arc::clone(BUILT.get_or_init(|| {
            Arc::new(
                Self::parse("(embedded) language/safety.toml", BUILT_IN)
                    .unwrap_or_else(|e| panic!("the built-in safety rules are invalid: {e}")),
            )
        }))
    }

    /// Compile rules text.
    pub fn parse(file: &str, text: &str) -> Result<Self, RulesError> {
        static GENERATION: AtomicU64 = AtomicU64::new(1);
        let source = Source { file, text };
        let parsed: RulesFile = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            source.fail(at, super::super::scenario::syntax_problem(text, &e))
        })?;
        let lexicon = Lexicon::compile(source, parsed.classes, parsed.categories, parsed.resolved)?;
        let secrets = SecretRules::compile(source, parsed.secrets)?;
        let medical = parsed
            .medical
            .doses
            .iter()
            .chain(&parsed.medical.diagnoses)
            .map(|entry| source.regex(entry))
            .collect::<Result<_, _>>()?;
        for (name, reply) in [
            ("emergency", &parsed.replies.emergency),
            ("crisis", &parsed.replies.crisis),
            ("secret_warning", &parsed.replies.secret_warning),
        ] {
            if reply.trim().is_empty() {
                let at = text.find(&format!("{name} =")).unwrap_or(0);
                return Err(source.fail(at, format!("the {name} reply is empty")));
            }
        }
        Ok(Self {
            lexicon,
            replies: parsed.replies,
            secrets,
            medical,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// How many signs, secret names and patterns it holds (for the reload log).
    pub fn len(&self) -> usize {
        self.lexicon.len() + self.secrets.len() + self.medical.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a reply names a dose or a diagnosis.
    pub fn medical_advice(&self, reply: &str) -> bool {
        self.medical.iter().any(|p| p.is_match(reply))
    }
}

/// The rules in use, shared by every scenario of a library and swapped when the file is reloaded.
pub type SharedSafety = super::super::shared::Shared<SafetyRules>;

impl super::super::shared::BuiltIn for SafetyRules {
    fn built_in() -> Arc<Self> {
        SafetyRules::built_in()
    }
}
