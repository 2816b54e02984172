//! Job audio files: written to a temporary name and renamed into place, so a reader (or a restart after a
//! crash) only ever sees a complete file.

use std::path::{Path, PathBuf};

use super::StorageError;

/// The folder of job audio.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    dir: PathBuf,
    /// Bytes that must stay available before new work is accepted (`storage.min_free_bytes`).
    min_free: u64,
}

impl ArtifactStore {
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
        super::space::shortage(&self.dir, self.min_free)
    }

    fn path(&self, job_id: &str) -> PathBuf {
        self.dir.join(format!("{job_id}.wav"))
    }

    /// Write a job's WAV atomically: temp file, fsync, rename, fsync the folder.
    pub fn write(&self, job_id: &str, wav: &[u8]) -> Result<(), StorageError> {
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

    /// Open a job's WAV for reading (it stays readable to the holder even if retention removes it meanwhile).
    pub fn open_audio(&self, job_id: &str) -> Result<std::fs::File, StorageError> {
        Ok(std::fs::File::open(self.path(job_id))?)
    }

    /// Remove a job's WAV if present.
    pub fn remove(&self, job_id: &str) -> Result<(), StorageError> {
        match std::fs::remove_file(self.path(job_id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// Delete temp files left by a crash mid-write; returns how many.
    pub fn remove_orphans(&self) -> Result<usize, StorageError> {
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
