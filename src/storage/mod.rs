//! Persistence: one SQLite database in the data directory (jobs, API keys, cloned voices, pronunciation
//! dictionaries) and job audio files written atomically beside it. Every database call runs on a blocking
//! thread.

mod artifacts;
mod dictionaries;
mod jobs;
mod keys;
pub mod space;
mod voices;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

pub use artifacts::ArtifactStore;
pub use dictionaries::DictionaryRecord;
pub use jobs::{JobRecord, JobStatus};
pub use keys::{hash_key, key_id, KeyRecord};
pub use voices::ClonedVoiceRecord;

/// Storage failures; the HTTP layer reports them as 503 (the service cannot do its job right now).
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database refused or failed.
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// A file could not be written, read or removed.
    #[error("file error: {0}")]
    Io(#[from] std::io::Error),
    /// A blocking task was cancelled or panicked.
    #[error("storage task failed: {0}")]
    Task(String),
    /// A stored value could not be decoded.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
}

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Database {
    connection: Arc<Mutex<Connection>>,
    data_dir: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    text TEXT NOT NULL,
    voice_id TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_unix INTEGER NOT NULL,
    started_at TEXT,
    completed_at TEXT,
    completed_unix INTEGER,
    progress REAL NOT NULL DEFAULT 0,
    error TEXT,
    audio_seconds REAL,
    runs INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (owner, status);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, created_unix);
";

/// The database's file name inside the data directory.
pub const DATABASE_FILE: &str = "sauti.db";

impl Database {
    /// Open (creating if needed) `sauti.db` in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self, StorageError> {
        std::fs::create_dir_all(data_dir)?;
        let connection = Connection::open(data_dir.join(DATABASE_FILE))?;
        Self::prepare(connection, data_dir)
    }

    /// Open `sauti.db` in `data_dir` only if it exists; never creates a database.
    pub fn open_existing(data_dir: &Path) -> Result<Self, StorageError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let connection = Connection::open_with_flags(data_dir.join(DATABASE_FILE), flags)?;
        Self::prepare(connection, data_dir)
    }

    fn prepare(connection: Connection, data_dir: &Path) -> Result<Self, StorageError> {
        // WAL keeps every committed transaction across a process crash; NORMAL sync is enough for that.
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.execute_batch(SCHEMA)?;
        connection.execute_batch(voices::SCHEMA)?;
        connection.execute_batch(dictionaries::SCHEMA)?;
        jobs::migrate(&connection)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            data_dir: data_dir.to_path_buf(),
        })
    }

    /// The data directory this database lives in.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Run `f` with the connection on a blocking thread.
    pub async fn run<T, F>(&self, f: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StorageError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut guard = connection
                .lock()
                .map_err(|_| StorageError::Task("database lock poisoned".into()))?;
            f(&mut guard)
        })
        .await
        .map_err(|e| StorageError::Task(e.to_string()))?
    }

    /// Run `f` with the connection on the current thread (start-up and CLI use).
    pub fn run_blocking<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let mut guard = self
            .connection
            .lock()
            .map_err(|_| StorageError::Task("database lock poisoned".into()))?;
        f(&mut guard)
    }

    /// Whether the database answers and its jobs table can be read (readiness probe). Cheap: it reads the
    /// index entries of unfinished jobs and one path down the jobs table, never the whole file; a damaged
    /// database file whose jobs pages cannot be read fails it.
    pub async fn ping(&self) -> bool {
        let checked = self
            .run(|c| {
                let unfinished: i64 = c.query_row(
                    "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')",
                    [],
                    |r| r.get(0),
                )?;
                let newest: Option<i64> =
                    c.query_row("SELECT MAX(rowid) FROM jobs", [], |r| r.get(0))?;
                if let Some(rowid) = newest {
                    c.query_row("SELECT status FROM jobs WHERE rowid = ?1", [rowid], |r| {
                        r.get::<_, String>(0)
                    })?;
                }
                Ok(unfinished)
            })
            .await;
        match checked {
            Ok(_) => true,
            Err(error) => {
                tracing::error!(%error, "readiness: the database check failed");
                false
            }
        }
    }
}

/// The current time as an RFC 3339 UTC timestamp with second precision, e.g. `2026-11-22T19:53:16Z`.
pub fn now_rfc3339() -> String {
    format_timestamp(time::OffsetDateTime::now_utc())
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn format_timestamp(t: time::OffsetDateTime) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    t.format(&format).unwrap_or_default()
}

/// Job table operations, for the jobs actor.
pub mod job_queries {
    pub use super::jobs::{
        count_unfinished, delete_expired, get, insert, insert_within, mark_failed, mark_running,
        mark_succeeded, queued, requeue_running, set_progress,
    };
}

/// Cloned-voice table operations, for the clone actor.
pub mod voice_queries {
    pub use super::voices::{all, count_of, delete, insert, insert_within};
}

/// Pronunciation dictionary table operations, for [`crate::dictionaries`].
pub mod dictionary_queries {
    pub use super::dictionaries::{count_of, delete, get, insert_within, list};
}

/// Key table operations, for start-up and `sauti keys`.
pub mod key_queries {
    pub use super::keys::{any, check_name, data_version, insert, list, revoke, MAX_NAME_CHARS};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_of_an_earlier_version_gains_the_job_pronunciation_column() {
        let dir = tempfile::tempdir().unwrap();
        {
            // The jobs table as it was before pronunciation dictionaries, with a queued job in it.
            let old = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
            old.execute_batch(SCHEMA).unwrap();
            old.execute(
                "INSERT INTO jobs (id, owner, status, text, voice_id, settings, created_at, created_unix)
                 VALUES ('job_old', 'k', 'queued', 'Habari', 'zuri', '{}', '2026-01-01T00:00:00Z', 1)",
                [],
            )
            .unwrap();
        }
        let db = Database::open(dir.path()).unwrap();
        let rules = vec![crate::tts::pronunciation::Rule::alias("Sheng", "shengi")];
        db.run_blocking(|c| {
            let old = job_queries::get(c, "job_old")?.expect("kept");
            assert!(old.pronunciation.is_empty());
            let job = JobRecord::new("k", "Sheng", "zuri", Default::default())
                .with_pronunciation(rules.clone());
            job_queries::insert(c, &job)?;
            assert_eq!(job_queries::get(c, &job.id)?.unwrap().pronunciation, rules);
            Ok(())
        })
        .unwrap();
        drop(db);
        // Opening again finds the column there and leaves it.
        Database::open(dir.path()).unwrap();
    }
}
