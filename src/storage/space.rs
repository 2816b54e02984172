//! Disk space of the data directory: a full disk is a fault to report (readiness, 507 for new work, failed jobs
//! with a clear reason), not something to queue work into.

use std::path::Path;

use super::StorageError;

/// Bytes available to this process on the filesystem of `dir`; `None` when it cannot be read.
pub fn available(dir: &Path) -> Option<u64> {
    fs4::available_space(dir).ok()
}

/// Why new work that writes to disk is refused now, if it is: the data directory's filesystem has less than
/// `min_free` bytes available.
pub fn shortage(dir: &Path, min_free: u64) -> Option<String> {
    let free = available(dir)?;
    (free < min_free).then(|| {
        format!(
            "the data directory's disk is full: {} MB available, at least {} MB needed (storage.min_free_bytes)",
            free >> 20,
            min_free.div_ceil(1 << 20)
        )
    })
}

/// Whether a storage error means the disk (or the database) is full.
pub fn is_full(error: &StorageError) -> bool {
    match error {
        StorageError::Io(io) => {
            io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(28)
        }
        StorageError::Database(rusqlite::Error::SqliteFailure(failure, _)) => {
            failure.code == rusqlite::ErrorCode::DiskFull
        }
        _ => false,
    }
}
