//! The language files of a scenarios folder, shared by its scenarios: the reading of Sheng and English words
//! (`language/reading.toml`) and the safety rules (`language/safety.toml`). Each is built in; a copy in the folder
//! replaces it, is loaded with the scenarios and reloaded when it changes, and a copy that does not load is refused
//! with its line while the one in use stays.

use std::path::Path;
use std::sync::Arc;

use super::reading::{self, Reading, SharedReading};
use super::safety::rules::{self, SafetyRules};
use super::safety::SharedSafety;
use super::scenario::{Scenario, ScenarioError};
use super::shared::{BuiltIn, Shared};

/// A language file: where a folder keeps it, and how it is compiled.
pub trait LanguageFile: BuiltIn + Send + Sync + 'static {
    /// Its path in a scenarios folder.
    const FILE: &'static str;
    /// What it is, for the logs.
    const WHAT: &'static str;

    /// Compile its text; a refusal names the line.
    fn compile(file: &str, source: &str) -> Result<Self, ScenarioError>;

    /// How many entries it holds, for the logs.
    fn entries(&self) -> usize;
}

impl LanguageFile for Reading {
    const FILE: &'static str = reading::FILE;
    const WHAT: &'static str = "reading";

    fn compile(file: &str, source: &str) -> Result<Self, ScenarioError> {
        Reading::parse(file, source).map_err(|e| ScenarioError {
            file: e.file,
            line: e.line,
            message: e.message,
        })
    }

    fn entries(&self) -> usize {
        self.len()
    }
}

impl LanguageFile for SafetyRules {
    const FILE: &'static str = rules::FILE;
    const WHAT: &'static str = "safety rules";

    fn compile(file: &str, source: &str) -> Result<Self, ScenarioError> {
        SafetyRules::parse(file, source).map_err(|e| ScenarioError {
            file: e.file,
            line: e.line,
            message: e.message,
        })
    }

    fn entries(&self) -> usize {
        self.len()
    }
}

/// A file of the scenarios folder as text, with its name for messages.
pub fn read(path: &Path) -> Result<(String, String), ScenarioError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(source) => Ok((file, source)),
        Err(e) => Err(ScenarioError {
            file,
            line: 1,
            message: format!("cannot read: {e}"),
        }),
    }
}

/// A language file read from `path`, or why it was refused.
pub fn load_file<T: LanguageFile>(path: &Path) -> Result<T, ScenarioError> {
    let (file, source) = read(path)?;
    T::compile(&file, &source)
}

/// The folder's copy of a language file if it has one, else the built-in one.
fn of_folder<T: LanguageFile>(dir: Option<&Path>) -> Result<Shared<T>, ScenarioError> {
    match dir.map(|d| d.join(T::FILE)).filter(|p| p.exists()) {
        Some(path) => Ok(Shared::new(Arc::new(load_file(&path)?))),
        None => Ok(Shared::default()),
    }
}

/// The language files every scenario of a folder uses.
#[derive(Debug, Clone, Default)]
pub struct Language {
    /// How callers' words are read.
    pub reading: SharedReading,
    /// The safety rules.
    pub safety: SharedSafety,
}

impl Language {
    /// The files of a scenarios folder (the built-in ones for those it lacks, or without a folder).
    pub fn of_folder(dir: Option<&Path>) -> Result<Self, ScenarioError> {
        Ok(Self {
            reading: of_folder(dir)?,
            safety: of_folder(dir)?,
        })
    }

    /// Give `scenario` these files.
    pub fn give(&self, scenario: &mut Scenario) {
        scenario.reading = self.reading.clone();
        scenario.safety = self.safety.clone();
    }
}
