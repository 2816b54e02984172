//! Job audio files in the data directory: written to a temporary name, synced and renamed into place, so a
//! reader (or a restart after a crash) only ever sees a complete file.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use super::{Blob, BlobStore};
use crate::storage::StorageError;

/// The folder of job audio.
#[derive(Debug, Clone)]
pub struct LocalBlobs {
    dir: PathBuf,
    /// Bytes that must stay available before new work is accepted (`storage.min_free_bytes`).
    min_free: u64,
}

impl LocalBlobs {
    /// The store under `data_dir/jobs`, created if missing.
    pub fn open(data_dir: &Path) -> Result<Self, StorageError> {
        let dir = data_dir.join("jobs");
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir, min_free: 0 })
    }

    /// Refuse new work while fewer than `bytes` are available on the disk.
    pub fn with_min_free(mut self, bytes: u64) -> Self {
        self.min_free = bytes;
        self
    }

    /// Why new work is refused now: the disk holds less than the configured minimum.
    pub fn shortage(&self) -> Option<String> {
        crate::storage::space::shortage(&self.dir, self.min_free)
    }

    fn path(&self, job_id: &str) -> PathBuf {
        self.dir.join(format!("{job_id}.wav"))
    }

    /// Write a job's WAV atomically: temp file, fsync, rename, fsync the folder.
    fn write(&self, job_id: &str, wav: &[u8]) -> Result<(), StorageError> {
        use std::io::Write;
        let tmp = self.dir.join(format!("{job_id}.wav.tmp"));
        let written = std::fs::File::create(&tmp).and_then(|mut file| {
            file.write_all(wav)?;
            file.sync_all()?;
            std::fs::rename(&tmp, self.path(job_id))
        });
        if let Err(error) = written {
            // A full disk leaves no half-written file behind.
            let _ = std::fs::remove_file(&tmp);
            return Err(error.into());
        }
        if let Ok(dir) = std::fs::File::open(&self.dir) {
            // Persist the rename itself; not every filesystem supports syncing a directory.
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Remove a job's WAV if present.
    fn remove_file(&self, job_id: &str) -> Result<(), StorageError> {
        match std::fs::remove_file(self.path(job_id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// Delete temp files left by a crash mid-write; returns how many.
    fn remove_temporaries(&self) -> Result<usize, StorageError> {
        let mut removed = 0;
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "tmp") {
                std::fs::remove_file(&path)?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// Run `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StorageError::Task(e.to_string()))?
}

#[async_trait]
impl BlobStore for LocalBlobs {
    fn engine(&self) -> &'static str {
        "local"
    }

    fn shortage(&self) -> Option<String> {
        LocalBlobs::shortage(self)
    }

    async fn publish(&self, job_id: &str, wav: bytes::Bytes) -> Result<(), StorageError> {
        let (blobs, id) = (self.clone(), job_id.to_string());
        blocking(move || blobs.write(&id, &wav)).await
    }

    /// The file stays readable to the holder even if retention removes it meanwhile.
    async fn open(&self, job_id: &str) -> Result<Blob, StorageError> {
        let path = self.path(job_id);
        blocking(move || Blob::file(std::fs::File::open(path)?)).await
    }

    async fn remove(&self, job_id: &str) -> Result<(), StorageError> {
        let (blobs, id) = (self.clone(), job_id.to_string());
        blocking(move || blobs.remove_file(&id)).await
    }

    async fn remove_orphans(&self) -> Result<usize, StorageError> {
        let blobs = self.clone();
        blocking(move || blobs.remove_temporaries()).await
    }
}
