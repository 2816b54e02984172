//! The signs of the safety rules, compiled: word classes, categories of emergencies and crises, and the
//! past-and-over rule (`[classes]`, `[[categories]]` and `[resolved]` of `scenarios/language/safety.toml`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use toml::Spanned;

use super::rules::{RulesError, Source};
use super::signs::{Sign, SignError};

/// Default span, in words, within which every word of a sign must appear.
pub const DEFAULT_WINDOW: usize = 6;
/// The span of the past-and-over rule's and of the `unless` signs: the whole turn.
pub const WHOLE_TURN: usize = usize::MAX / 2;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CategoryFile {
    id: Spanned<String>,
    #[serde(default)]
    crisis: bool,
    #[serde(default)]
    advice: Option<String>,
    signs: Vec<Spanned<String>>,
    #[serde(default)]
    unless: Vec<Spanned<String>>,
    #[serde(default)]
    window: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResolvedFile {
    past: Vec<Spanned<String>>,
    recovered: Vec<Spanned<String>>,
    asking: Vec<Spanned<String>>,
    current: Vec<Spanned<String>>,
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
    /// The span of its signs, in words.
    pub window: usize,
    /// Its signs.
    pub signs: Vec<Sign>,
    /// Signs that make a turn not this category ("kidogo tu").
    pub unless: Vec<Sign>,
}

/// The compiled signs.
#[derive(Debug)]
pub struct Lexicon {
    /// Word classes signs can name as `@NAME`.
    pub classes: BTreeMap<String, Vec<String>>,
    /// Categories, in the order they are tried (crisis first).
    pub categories: Vec<Category>,
    /// A turn tells of something past ...
    pub past: Vec<Sign>,
    /// ... and over ...
    pub recovered: Vec<Sign>,
    /// ... or asks just to know ...
    pub asking: Vec<Sign>,
    /// ... unless it says it is happening now.
    pub current: Vec<Sign>,
}

/// Compile signs written in the file, naming the line of one that does not compile.
fn compile_spanned(
    source: Source,
    texts: &[Spanned<String>],
    classes: &BTreeMap<String, Vec<String>>,
    window: usize,
) -> Result<Vec<Sign>, RulesError> {
    texts
        .iter()
        .map(|t| {
            Sign::compile(t.get_ref(), classes, window)
                .map_err(|e: SignError| source.fail(t.span().start, e.to_string()))
        })
        .collect()
}

impl Lexicon {
    pub(super) fn compile(
        source: Source,
        classes: BTreeMap<String, Vec<String>>,
        files: Vec<CategoryFile>,
        resolved: ResolvedFile,
    ) -> Result<Self, RulesError> {
        let mut categories = Vec::new();
        let mut seen = BTreeSet::new();
        for category in files {
            let at = category.id.span().start;
            let id = category.id.into_inner();
            if !seen.insert(id.clone()) || id == "scenario" || id.trim().is_empty() {
                return Err(source.fail(
                    at,
                    format!("the category id {id:?} is empty, reserved or used twice"),
                ));
            }
            if !category.crisis
                && category
                    .advice
                    .as_deref()
                    .is_none_or(|a| a.trim().is_empty())
            {
                return Err(source.fail(at, format!("the emergency category {id:?} has no advice")));
            }
            if category.signs.is_empty() {
                return Err(source.fail(at, format!("the category {id:?} has no signs")));
            }
            let window = category.window.unwrap_or(DEFAULT_WINDOW);
            categories.push(Category {
                signs: compile_spanned(source, &category.signs, &classes, window)?,
                unless: compile_spanned(source, &category.unless, &classes, WHOLE_TURN)?,
                id,
                crisis: category.crisis,
                advice: category.advice,
                window,
            });
        }
        categories.sort_by_key(|c| !c.crisis);
        let whole =
            |texts: &[Spanned<String>]| compile_spanned(source, texts, &classes, WHOLE_TURN);
        Ok(Self {
            past: whole(&resolved.past)?,
            recovered: whole(&resolved.recovered)?,
            asking: whole(&resolved.asking)?,
            current: whole(&resolved.current)?,
            classes,
            categories,
        })
    }

    /// A category by id.
    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }

    /// Compile a scenario's own signs against these classes.
    pub fn compile_signs(&self, texts: &[String], window: usize) -> Result<Vec<Sign>, SignError> {
        texts
            .iter()
            .map(|t| Sign::compile(t, &self.classes, window))
            .collect()
    }

    /// How many signs it holds.
    pub fn len(&self) -> usize {
        self.categories
            .iter()
            .map(|c| c.signs.len() + c.unless.len())
            .sum::<usize>()
            + self.past.len()
            + self.recovered.len()
            + self.asking.len()
            + self.current.len()
    }

    /// Whether it holds no sign.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The categories as a Markdown table, for `scenarios/FORMAT.md` (kept equal to the data by a test).
    pub fn categories_table(&self) -> String {
        let code = |text: &str| format!("`{}`", text.replace('|', "\\|"));
        let mut out = String::from(
            "| category | kind | signs | exceptions | span | for example |\n|---|---|---|---|---|---|\n",
        );
        for c in &self.categories {
            let kind = if c.crisis { "crisis" } else { "emergency" };
            let short = c.signs.iter().filter(|s| s.text.len() <= 40);
            let examples: Vec<String> = short.take(3).map(|s| code(&s.text)).collect();
            out.push_str(&format!(
                "| `{}` | {kind} | {} | {} | {} | {} |\n",
                c.id,
                c.signs.len(),
                c.unless.len(),
                c.window,
                examples.join(", ")
            ));
        }
        out
    }

    /// The word classes as a Markdown table, for `scenarios/FORMAT.md`.
    pub fn classes_table(&self) -> String {
        let mut out = String::from("| class | entries | for example |\n|---|---|---|\n");
        for (name, words) in &self.classes {
            let examples: Vec<String> = words.iter().take(6).map(|w| format!("`{w}`")).collect();
            out.push_str(&format!(
                "| `@{name}` | {} | {} |\n",
                words.len(),
                examples.join(", ")
            ));
        }
        out
    }
}
