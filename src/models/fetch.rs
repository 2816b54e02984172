//! `sauti models fetch`: download a catalog model's files, resuming where a cut connection (or an earlier run)
//! stopped, verify sizes and sha256, and install the folder atomically.
//!
//! Files are downloaded into `<dir>/.fetch-<name>/` as `<path>.part`; a retry asks for the rest with an HTTP
//! `Range` request. A verified file loses its `.part`; when every file is in, a manifest
//! (`.sauti-install.json`: sizes and sha256 of what was installed) is written and the staging folder is renamed
//! to `<dir>/<name>` in one step, so a model folder is either complete or absent.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::catalog::{CatalogFile, CatalogModel};

/// The manifest written into an installed model folder.
pub const MANIFEST: &str = ".sauti-install.json";

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The models folder (`models.dir`).
    pub dir: PathBuf,
    /// Draw progress bars.
    pub progress: bool,
    /// Attempts per file after a failed or cut transfer.
    pub retries: u32,
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The server refused or the transfer kept failing.
    #[error("{url}: {problem}")]
    Http {
        /// The file's URL.
        url: String,
        /// What went wrong.
        problem: String,
    },
    /// The bytes received are not the published file.
    #[error("{path}: sha256 is {actual}, the catalog says {expected}; the file was not installed")]
    Checksum {
        /// The file inside the model.
        path: String,
        /// From the catalog.
        expected: String,
        /// Of the bytes received.
        actual: String,
    },
    /// The size received is not the published one.
    #[error("{path}: {actual} bytes, the catalog says {expected}; the file was not installed")]
    Size {
        /// The file inside the model.
        path: String,
        /// From the catalog.
        expected: u64,
        /// Received.
        actual: u64,
    },
    /// A file the catalog lists is not in the folder being imported.
    #[error("{path}: missing from {folder} (expected at {expected})")]
    Missing {
        /// The file inside the model.
        path: String,
        /// The folder being imported.
        folder: PathBuf,
        /// Where it was looked for.
        expected: PathBuf,
    },
    /// What was given to import is not a model folder.
    #[error("{path}: {problem}")]
    NotAFolder {
        /// What was given.
        path: PathBuf,
        /// Why it cannot be imported.
        problem: String,
    },
    /// An archive that should hold a model file does not, or is broken.
    #[error("{path}: {problem}")]
    Archive {
        /// The archive.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The disk refused.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One installed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstalledFile {
    /// Path inside the model folder.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Hex sha256.
    pub sha256: String,
}

/// What `fetch` installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    /// The catalog name.
    pub name: String,
    /// The files.
    pub files: Vec<InstalledFile>,
}

/// The manifest of an installed model, if it is installed.
pub fn installed(model: &CatalogModel, dir: &Path) -> Option<Installed> {
    let text = std::fs::read_to_string(dir.join(&model.dir).join(MANIFEST)).ok()?;
    serde_json::from_str(&text).ok()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Download, verify and install one model; a model already installed is left as it is.
pub async fn fetch(model: &CatalogModel, options: &FetchOptions) -> Result<Installed, FetchError> {
    if let Some(done) = installed(model, &options.dir) {
        return Ok(done);
    }
    let staging = options.dir.join(format!(".fetch-{}", model.dir));
    std::fs::create_dir_all(&staging).map_err(io(&staging))?;
    let client = crate::dialogue::actions::http_client(None);
    let mut files = Vec::new();
    for file in &model.files {
        let done = staging.join(&file.path);
        if !done.is_file() {
            download(&client, file, &done, options).await?;
        }
        files.push(verify(file, &done)?);
    }
    install(model, &staging, files, &options.dir)
}

/// Write the manifest into a complete staging folder and rename it to `<dir>/<model.dir>` in one step.
pub(crate) fn install(
    model: &CatalogModel,
    staging: &Path,
    files: Vec<InstalledFile>,
    dir: &Path,
) -> Result<Installed, FetchError> {
    let manifest = Installed {
        name: model.name.clone(),
        files,
    };
    let manifest_path = staging.join(MANIFEST);
    let json = serde_json::to_string_pretty(&manifest).map_err(|e| FetchError::Io {
        path: manifest_path.clone(),
        source: std::io::Error::other(e),
    })?;
    std::fs::write(&manifest_path, json).map_err(io(&manifest_path))?;
    let target = dir.join(&model.dir);
    if target.exists() {
        // A folder without a manifest: an earlier, hand-made or broken install; replaced whole.
        std::fs::remove_dir_all(&target).map_err(io(&target))?;
    }
    std::fs::rename(staging, &target).map_err(io(&target))?;
    Ok(manifest)
}

/// Fetch one file to `done`, resuming its `.part`, retrying cut transfers, and verifying it.
async fn download(
    client: &reqwest::Client,
    file: &CatalogFile,
    done: &Path,
    options: &FetchOptions,
) -> Result<(), FetchError> {
    let part = PathBuf::from(format!("{}.part", done.display()));
    if let Some(parent) = part.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    // A member of an archive: the archive is downloaded (and checked) first, then the member taken out of it.
    let received = match &file.member {
        Some(_) => PathBuf::from(format!("{}.archive.part", done.display())),
        None => part.clone(),
    };
    let bar = progress_bar(&file.path, options.progress);
    let mut attempt = 0;
    loop {
        match transfer(client, file, &received, &bar).await {
            Ok(()) => break,
            Err(Transfer::Fatal(error)) => return Err(error),
            Err(Transfer::Retry(problem)) if attempt < options.retries => {
                attempt += 1;
                bar.println(format!(
                    "{}: {problem}; resuming (attempt {attempt})",
                    file.path
                ));
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
            }
            Err(Transfer::Retry(problem)) => {
                return Err(FetchError::Http {
                    url: file.url.clone(),
                    problem: format!("{problem} (gave up after {} attempts)", attempt + 1),
                })
            }
        }
    }
    bar.finish_and_clear();
    if let Some(member) = &file.member {
        let unpacked = verify_archive(file, &received)
            .and_then(|()| super::archive::extract(&received, member, &part));
        let _ = std::fs::remove_file(&received);
        unpacked?;
    }
    if let Err(error) = verify(file, &part) {
        let _ = std::fs::remove_file(&part);
        return Err(error);
    }
    std::fs::rename(&part, done).map_err(io(done))
}

/// Check the bytes at `path` against the catalog's size and sha256 for `file` (each where the catalog gives
/// one); returns what was found.
pub(crate) fn verify(file: &CatalogFile, path: &Path) -> Result<InstalledFile, FetchError> {
    let (size, sha256) = digest(path)?;
    if let Some(expected) = file.size.filter(|&s| s != size) {
        return Err(FetchError::Size {
            path: file.path.clone(),
            expected,
            actual: size,
        });
    }
    if let Some(expected) = file
        .sha256
        .as_ref()
        .filter(|h| !h.eq_ignore_ascii_case(&sha256))
    {
        return Err(FetchError::Checksum {
            path: file.path.clone(),
            expected: expected.clone(),
            actual: sha256,
        });
    }
    Ok(InstalledFile {
        path: file.path.clone(),
        size,
        sha256,
    })
}

/// Check a downloaded archive against the catalog's `archive_sha256`, where it gives one.
fn verify_archive(file: &CatalogFile, path: &Path) -> Result<(), FetchError> {
    let Some(expected) = &file.archive_sha256 else {
        return Ok(());
    };
    let (_, actual) = digest(path)?;
    if expected.eq_ignore_ascii_case(&actual) {
        return Ok(());
    }
    Err(FetchError::Checksum {
        path: file.url.clone(),
        expected: expected.clone(),
        actual,
    })
}

enum Transfer {
    /// Worth another attempt (cut connection, server error).
    Retry(String),
    /// Not worth retrying.
    Fatal(FetchError),
}

/// One request: the rest of the file after what `part` holds.
async fn transfer(
    client: &reqwest::Client,
    file: &CatalogFile,
    part: &Path,
    bar: &ProgressBar,
) -> Result<(), Transfer> {
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    let mut request = client.get(&file.url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| Transfer::Retry(e.to_string()))?;
    let status = response.status();
    let append = match status {
        StatusCode::PARTIAL_CONTENT => {
            let range = response
                .headers()
                .get(reqwest::header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            range.starts_with(&format!("bytes {have}-"))
        }
        StatusCode::RANGE_NOT_SATISFIABLE if have > 0 => return Ok(()),
        s if s.is_success() => false,
        s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
            return Err(Transfer::Retry(format!("HTTP {s}")))
        }
        s => {
            return Err(Transfer::Fatal(FetchError::Http {
                url: file.url.clone(),
                problem: format!("HTTP {s}"),
            }))
        }
    };
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(part)
        .map_err(|e| Transfer::Fatal(io(part)(e)))?;
    let start = if append { have } else { 0 };
    if let Some(length) = response.content_length() {
        bar.set_length(start + length);
    }
    bar.set_position(start);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Transfer::Retry(format!("connection cut: {e}")))?
    {
        out.write_all(&chunk)
            .map_err(|e| Transfer::Fatal(io(part)(e)))?;
        bar.inc(chunk.len() as u64);
    }
    out.sync_all().map_err(|e| Transfer::Fatal(io(part)(e)))?;
    let got = std::fs::metadata(part).map_or(0, |m| m.len());
    match (response.content_length(), file.size) {
        (Some(length), _) if got < start + length => {
            Err(Transfer::Retry("transfer ended early".into()))
        }
        (_, Some(size)) if file.member.is_none() && got < size => {
            Err(Transfer::Retry("transfer ended early".into()))
        }
        _ => Ok(()),
    }
}

fn progress_bar(label: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:32!} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

/// Size and hex sha256 of a file.
fn digest(path: &Path) -> Result<(u64, String), FetchError> {
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((size, hex))
}
