//! Model files published inside an archive: a Python wheel (a zip) on PyPI carries some models (Silero VAD in
//! `silero-vad`, Smart Turn in `pipecat-ai`). A catalog file with a `member` is that member of the archive at its
//! URL; `sauti models import` also takes such an archive itself in place of a folder.

use std::io::Read;
use std::path::Path;

use super::fetch::FetchError;

/// The most bytes one member may unpack to (a model file; far above any in the catalog).
const MAX_MEMBER_BYTES: u64 = 4 << 30;

type Zip = zip::ZipArchive<std::fs::File>;

/// The zip archive at `archive`, and how to say what is wrong with it.
fn open(archive: &Path) -> Result<(Zip, impl Fn(String) -> FetchError + '_), FetchError> {
    let problem = move |problem: String| FetchError::Archive {
        path: archive.to_path_buf(),
        problem,
    };
    let file = std::fs::File::open(archive).map_err(|source| FetchError::Io {
        path: archive.to_path_buf(),
        source,
    })?;
    let zip = zip::ZipArchive::new(file).map_err(|e| problem(format!("not a zip archive: {e}")))?;
    Ok((zip, problem))
}

/// Copy `member` of the zip archive at `archive` to `to`.
pub fn extract(archive: &Path, member: &str, to: &Path) -> Result<(), FetchError> {
    let (mut zip, problem) = open(archive)?;
    let mut entry = zip
        .by_name(member)
        .map_err(|_| problem(format!("has no {member}")))?;
    if entry.size() > MAX_MEMBER_BYTES {
        return Err(problem(format!(
            "{member} unpacks to {} bytes",
            entry.size()
        )));
    }
    let mut out = std::fs::File::create(to).map_err(|source| FetchError::Io {
        path: to.to_path_buf(),
        source,
    })?;
    let copied = std::io::copy(&mut (&mut entry).take(MAX_MEMBER_BYTES), &mut out)
        .map_err(|e| problem(format!("{member}: {e}")))?;
    if copied != entry.size() {
        return Err(problem(format!(
            "{member}: {copied} bytes unpacked, the archive says {}",
            entry.size()
        )));
    }
    out.sync_all().map_err(|source| FetchError::Io {
        path: to.to_path_buf(),
        source,
    })
}

/// The member of the archive at `archive` that holds the catalog file `path` (its `member` when given):
/// that name if the archive has it, otherwise the one member whose name ends in `/path` (the same file
/// shipped in another package's wheel).
pub fn find(archive: &Path, member: Option<&str>, path: &str) -> Result<String, FetchError> {
    let (zip, problem) = open(archive)?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|name| name.ok().map(|n| n.into_owned()))
        .collect();
    let wanted = member.unwrap_or(path);
    if names.iter().any(|n| n == wanted) {
        return Ok(wanted.to_string());
    }
    let suffix = format!("/{path}");
    let mut matching = names.iter().filter(|n| n.ends_with(&suffix));
    match (matching.next(), matching.next()) {
        (Some(one), None) => Ok(one.to_string()),
        (Some(_), Some(_)) => Err(problem(format!("holds several files named {path}"))),
        (None, _) => Err(problem(format!("holds no {path}"))),
    }
}

/// Whether `path` is a zip archive (it starts with a zip header).
pub fn is_archive(path: &Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *b"PK\x03\x04")
}
