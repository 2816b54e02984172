//! The scenarios in use: loaded from a directory at start, embedded copies when the directory lacks a file,
//! and reloaded when a file changes. An edit that does not pass the checks is refused: the last good version
//! stays in use and the problem is logged with its file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use super::scenario::{self, Scenario, ScenarioError};

/// The scenarios shipped in the binary, used when the directory has no file of that name.
pub const EMBEDDED: [(&str, &str); 3] = [
    ("general", include_str!("../../scenarios/general.toml")),
    ("banking", include_str!("../../scenarios/banking.toml")),
    ("health", include_str!("../../scenarios/health.toml")),
];

/// The scenario every request without one uses.
pub const DEFAULT_SCENARIO: &str = "general";

#[derive(Debug)]
struct Entry {
    scenario: Arc<Scenario>,
    /// The file and its modification time, for a scenario read from disk.
    source: Option<(PathBuf, SystemTime)>,
}

/// The scenarios by id, shared and reloadable.
#[derive(Debug, Clone)]
pub struct ScenarioLibrary {
    dir: Option<PathBuf>,
    entries: Arc<RwLock<BTreeMap<String, Entry>>>,
    /// Files whose current version was refused, so each broken edit is reported once.
    refused: Arc<RwLock<BTreeMap<PathBuf, SystemTime>>>,
}

impl ScenarioLibrary {
    /// Load the embedded scenarios, then every `*.toml` in `dir` (when given) over them. A file that fails its
    /// checks at start is an error: the operator sees it before serving.
    pub fn load(dir: Option<&Path>) -> Result<Self, ScenarioError> {
        let mut entries = BTreeMap::new();
        for (id, source) in EMBEDDED {
            let scenario = scenario::parse(&format!("(embedded) {id}.toml"), source, Some(id))?;
            entries.insert(
                id.to_string(),
                Entry {
                    scenario: Arc::new(scenario),
                    source: None,
                },
            );
        }
        if let Some(dir) = dir {
            for path in toml_files(dir) {
                let scenario = scenario::load(&path)?;
                let modified = modified(&path);
                entries.insert(
                    scenario.id.clone(),
                    Entry {
                        scenario: Arc::new(scenario),
                        source: Some((path, modified)),
                    },
                );
            }
        }
        Ok(Self {
            dir: dir.map(Path::to_path_buf),
            entries: Arc::new(RwLock::new(entries)),
            refused: Arc::default(),
        })
    }

    /// A scenario by id.
    pub fn get(&self, id: &str) -> Option<Arc<Scenario>> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries.get(id).map(|e| Arc::clone(&e.scenario))
    }

    /// The ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries.keys().cloned().collect()
    }

    /// Reload every file whose modification time changed; refused edits are logged and returned.
    pub fn reload_changed(&self) -> Vec<ScenarioError> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let mut problems = Vec::new();
        for path in toml_files(dir) {
            let stamp = modified(&path);
            let unchanged = {
                let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
                let refused = self.refused.read().unwrap_or_else(|p| p.into_inner());
                refused.get(&path) == Some(&stamp)
                    || entries.values().any(|e| {
                        e.source
                            .as_ref()
                            .is_some_and(|(p, m)| p == &path && *m == stamp)
                    })
            };
            if unchanged {
                continue;
            }
            match scenario::load(&path) {
                Ok(scenario) => {
                    tracing::info!(scenario = scenario.id, file = %path.display(), "scenario reloaded");
                    let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
                    entries.insert(
                        scenario.id.clone(),
                        Entry {
                            scenario: Arc::new(scenario),
                            source: Some((path, stamp)),
                        },
                    );
                }
                Err(error) => {
                    tracing::error!(
                        file = error.file,
                        line = error.line,
                        problem = error.message,
                        "scenario edit refused; the last good version stays in use"
                    );
                    let mut refused = self.refused.write().unwrap_or_else(|p| p.into_inner());
                    refused.insert(path.clone(), stamp);
                    problems.push(error);
                }
            }
        }
        problems
    }
}

/// The `.toml` files of a folder, sorted (none when it cannot be read).
pub fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}
