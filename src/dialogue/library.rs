//! The scenarios in use: loaded from a directory at start, embedded copies when the directory lacks a file,
//! and reloaded when a file changes. An edit that does not pass the checks is refused: the last good version
//! stays in use and the problem is logged with its file and line. The language files (`language/reading.toml`
//! and `language/safety.toml`, [`super::language`]) are loaded and reloaded the same way, shared by every
//! scenario; new safety rules are also refused when a scenario in use does not compile against them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use super::language::{load_file, Language, LanguageFile};
use super::reading::Reading;
use super::safety::{SafetyRules, SharedSafety};
use super::scenario::{self, Scenario, ScenarioError};
use super::shared::Shared;

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
    /// The language files every scenario uses, and the version of each file in use (none: the built-in one).
    language: Language,
    stamps: Arc<RwLock<BTreeMap<&'static str, Option<SystemTime>>>>,
}

impl ScenarioLibrary {
    /// Load the embedded scenarios, then every `*.toml` in `dir` (when given) over them. A file that fails its
    /// checks at start is an error: the operator sees it before serving.
    pub fn load(dir: Option<&Path>) -> Result<Self, ScenarioError> {
        let language = Language::of_folder(dir)?;
        let stamp = |file: &str| {
            dir.map(|d| d.join(file))
                .filter(|p| p.exists())
                .map(|p| modified(&p))
        };
        let stamps = BTreeMap::from([
            (Reading::FILE, stamp(Reading::FILE)),
            (SafetyRules::FILE, stamp(SafetyRules::FILE)),
        ]);
        let mut entries = BTreeMap::new();
        for (id, source) in EMBEDDED {
            let scenario = scenario::parse_in(
                &format!("(embedded) {id}.toml"),
                source,
                Some(id),
                &language,
            )?;
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
                let scenario = scenario::load_in(&path, &language)?;
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
            language,
            stamps: Arc::new(RwLock::new(stamps)),
        })
    }

    /// The reading of Sheng and English words in use.
    pub fn reading(&self) -> Arc<Reading> {
        self.language.reading.current()
    }

    /// The safety rules in use, shared: a holder sees every reload.
    pub fn safety(&self) -> SharedSafety {
        self.language.safety.clone()
    }

    /// Reload a language file if it changed (back to the built-in one if it was removed). A copy that does not
    /// load, or that `fits` refuses, is refused once, and the one in use stays.
    fn reload_language<T: LanguageFile>(
        &self,
        dir: &Path,
        cell: &Shared<T>,
        fits: impl Fn(&T) -> Result<(), String>,
    ) -> Option<ScenarioError> {
        let path = dir.join(T::FILE);
        let stamp = path.exists().then(|| modified(&path));
        let mut stamps = self.stamps.write().unwrap_or_else(|p| p.into_inner());
        let refused = self.refused.read().unwrap_or_else(|p| p.into_inner());
        let current = stamps.get(T::FILE).copied().flatten();
        if current == stamp || stamp.is_some_and(|s| refused.get(&path) == Some(&s)) {
            return None;
        }
        drop(refused);
        let Some(stamp) = stamp else {
            cell.replace(T::built_in());
            stamps.insert(T::FILE, None);
            tracing::info!(
                file = T::FILE,
                "the scenarios folder has no copy; the built-in {} are in use",
                T::WHAT
            );
            return None;
        };
        let loaded = load_file::<T>(&path).and_then(|loaded| {
            fits(&loaded)
                .map(|()| loaded)
                .map_err(|message| ScenarioError {
                    file: path.display().to_string(),
                    line: 1,
                    message,
                })
        });
        match loaded {
            Ok(loaded) => {
                tracing::info!(file = %path.display(), entries = loaded.entries(), "{} reloaded", T::WHAT);
                cell.replace(Arc::new(loaded));
                stamps.insert(T::FILE, Some(stamp));
                None
            }
            Err(error) => {
                tracing::error!(
                    file = error.file,
                    line = error.line,
                    problem = error.message,
                    "{} edit refused; the ones in use stay",
                    T::WHAT
                );
                let mut refused = self.refused.write().unwrap_or_else(|p| p.into_inner());
                refused.insert(path, stamp);
                Some(error)
            }
        }
    }

    /// Whether every scenario in use compiles its own signs against `rules`.
    fn scenarios_fit(&self, rules: &SafetyRules) -> Result<(), String> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        for (id, entry) in entries.iter() {
            if let Err((field, problem)) = entry.scenario.guardrails.compile(rules) {
                return Err(format!(
                    "the scenario {id:?} does not work with these rules: guardrails: {field}: {problem}"
                ));
            }
        }
        Ok(())
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
        let mut problems: Vec<ScenarioError> = Vec::new();
        problems.extend(self.reload_language(dir, &self.language.reading, |_| Ok(())));
        problems.extend(self.reload_language(dir, &self.language.safety, |rules| {
            self.scenarios_fit(rules)
        }));
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
            match scenario::load_in(&path, &self.language) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write_later(path: &Path, text: &str) {
        // Modification times may be whole seconds: wait for the next one.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_reading_file_loads_reloads_and_refuses_a_broken_edit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("language")).unwrap();
        let file = dir.path().join(super::super::reading::FILE);
        std::fs::write(&file, "[words]\nmsela = \"mtu\"\n").unwrap();
        let library = ScenarioLibrary::load(Some(dir.path())).unwrap();
        let general = library.get("general").unwrap();
        assert_eq!(general.reading.current().read("msela"), "mtu");

        write_later(&file, "[words]\nmsela = \"mtu\"\nx = \"y\"\n");
        let problems = library.reload_changed();
        assert_eq!((problems.len(), problems[0].line), (1, 3), "{problems:?}");
        assert_eq!(general.reading.current().read("msela"), "mtu");
        assert!(
            library.reload_changed().is_empty(),
            "a refused edit is reported once"
        );

        write_later(&file, "[words]\nmsela = \"rafiki\"\n");
        assert!(library.reload_changed().is_empty());
        assert_eq!(general.reading.current().read("msela"), "rafiki");
        let banking = library.get("banking").unwrap();
        assert_eq!(banking.reading.current().read("msela"), "rafiki");

        std::fs::remove_file(&file).unwrap();
        assert!(library.reload_changed().is_empty());
        assert_eq!(general.reading.current().read("msela"), "msela");
        assert_eq!(general.reading.current().read("doh"), "pesa");

        std::fs::write(&file, "[words]\nzz = \"sawa\"\n").unwrap();
        let error = ScenarioLibrary::load(Some(dir.path())).unwrap_err();
        assert_eq!(error.line, 2);
    }
}
