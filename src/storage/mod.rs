//! Persistence: jobs, API keys, cloned voices and pronunciation dictionaries behind [`Store`] — SQLite in the
//! data directory by default (every call on a blocking thread), PostgreSQL when `storage.url` names one — and
//! job audio files written atomically in the data directory.

pub mod blobs;
mod dictionaries;
mod jobs;
mod keys;
mod migrations;
pub mod postgres;
pub mod sessions;
pub mod space;
mod sqlite;
mod store;
mod voices;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

pub use blobs::{ArtifactStore, Blob, BlobStore};
pub use dictionaries::DictionaryRecord;
pub use jobs::{JobRecord, JobStatus};
pub use keys::{
    adopt_earlier_ids as adopt_earlier_key_ids, hash_key, key_id, legacy_key_id, KeyRecord,
    KeySecret,
};
pub use migrations::LATEST as SCHEMA_VERSION;
pub use sessions::{SessionClaim, SessionLimits, SessionRecord};
pub use store::{JobListener, JobsWaker, Storage, Store};
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
    /// The object store holding job audio refused or failed.
    #[error("object store: {0}")]
    Blobs(String),
    /// PostgreSQL refused, failed or could not be reached.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// The database was made by a newer sauti than this one.
    #[error("the database is at schema version {found}, newer than this sauti's {known}; run the newer version or restore a backup")]
    TooNew { found: i64, known: i64 },
}

/// The store `storage.url` names: PostgreSQL for `postgres://…`, otherwise SQLite in `storage.data_dir` (an
/// empty URL or `sqlite://`). Migrations run before it is handed out.
pub async fn open(settings: &crate::config::StorageSettings) -> Result<Storage, StorageError> {
    if postgres::is_postgres_url(&settings.url) {
        let lease = std::time::Duration::from_secs(settings.job_lease_seconds);
        return Ok(Arc::new(
            postgres::PgStore::connect(&settings.url, lease).await?,
        ));
    }
    Ok(Arc::new(Database::open(&settings.data_dir)?))
}

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Database {
    connection: Arc<Mutex<Connection>>,
    data_dir: PathBuf,
}

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
        let mut connection = connection;
        migrations::sqlite(&mut connection)?;
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
    async fn check(&self) -> Result<(), StorageError> {
        self.run(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')",
                [],
                |r| r.get::<_, i64>(0),
            )?;
            let newest: Option<i64> =
                c.query_row("SELECT MAX(rowid) FROM jobs", [], |r| r.get(0))?;
            if let Some(rowid) = newest {
                c.query_row("SELECT status FROM jobs WHERE rowid = ?1", [rowid], |r| {
                    r.get::<_, String>(0)
                })?;
            }
            Ok(())
        })
        .await
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

/// Key names, checked the same way wherever a key is made.
pub use keys::{
    check_display_name, check_name as check_key_name, MAX_NAME_CHARS as MAX_KEY_NAME_CHARS,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_of_an_earlier_version_gains_the_job_pronunciation_column() {
        let dir = tempfile::tempdir().unwrap();
        {
            // The jobs table as it was before pronunciation dictionaries, with a queued job in it.
            let old = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
            old.execute_batch(migrations::FIRST_JOBS_TABLE).unwrap();
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
            let old = jobs::get(c, "job_old")?.expect("kept");
            assert!(old.pronunciation.is_empty());
            let job = JobRecord::new("k", "Sheng", "zuri", Default::default())
                .with_pronunciation(rules.clone());
            jobs::insert(c, &job)?;
            assert_eq!(jobs::get(c, &job.id)?.unwrap().pronunciation, rules);
            Ok(())
        })
        .unwrap();
        drop(db);
        // Opening again finds the column there and leaves it.
        Database::open(dir.path()).unwrap();
    }
}
