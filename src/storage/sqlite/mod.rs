//! The SQLite store: one file in the data directory, each call on a blocking thread. [`Database`] holds the
//! connection and implements [`Store`] here; the SQL for each kind of record lies in the files beside this one,
//! as plain functions on a [`Connection`], and the schema in `migrations.rs`.

mod calls;
mod dictionaries;
mod jobs;
mod keys;
pub(super) mod migrations;
mod sessions;
mod usage;
mod voices;
mod webhooks;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

use super::store::Store;
use super::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};
use super::{
    ClonedVoiceRecord, DictionaryRecord, JobRecord, KeyRecord, KeySecret, SessionClaim,
    SessionLimits, SessionRecord, StorageError,
};

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
        migrations::migrate(&mut connection)?;
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

#[async_trait]
impl Store for Database {
    fn engine(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> Result<(), StorageError> {
        self.check().await
    }

    async fn close(&self) {
        let _ = self
            .run(|c| Ok(c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?))
            .await;
    }

    async fn insert_key(&self, name: &str, key: &str) -> Result<KeyRecord, StorageError> {
        let (name, key) = (name.to_string(), key.to_string());
        self.run(move |c| keys::insert(c, &name, &key)).await
    }

    async fn keys(&self) -> Result<Vec<KeyRecord>, StorageError> {
        self.run(|c| keys::list(c)).await
    }

    async fn revoke_key(&self, id: &str) -> Result<bool, StorageError> {
        let id = id.to_string();
        self.run(move |c| keys::revoke(c, &id)).await
    }

    async fn any_key(&self) -> Result<bool, StorageError> {
        self.run(|c| keys::any(c)).await
    }

    async fn key_secret(&self) -> Result<KeySecret, StorageError> {
        self.run(|c| keys::secret(c)).await
    }

    async fn adopt_key_ids(&self, moves: &[(String, String)]) -> Result<usize, StorageError> {
        let moves = moves.to_vec();
        self.run(move |c| keys::adopt(c, &moves)).await
    }

    async fn keys_version(&self) -> Result<i64, StorageError> {
        self.run(|c| keys::data_version(c)).await
    }

    async fn charge(&self, charge: &Charge) -> Result<Charged, StorageError> {
        let charge = charge.clone();
        self.run(move |c| usage::charge(c, &charge)).await
    }

    async fn usage_totals(
        &self,
        owner: &str,
        period: &str,
    ) -> Result<Vec<(UsageKind, f64)>, StorageError> {
        let (owner, period) = (owner.to_string(), period.to_string());
        self.run(move |c| usage::totals(c, &owner, &period)).await
    }

    async fn usage(
        &self,
        owner: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageRow>, StorageError> {
        let (owner, from, to) = (owner.to_string(), from.to_string(), to.to_string());
        self.run(move |c| usage::daily(c, &owner, &from, &to)).await
    }

    async fn key_limits(&self, owner: &str) -> Result<KeyLimits, StorageError> {
        let owner = owner.to_string();
        self.run(move |c| usage::limits(c, &owner)).await
    }

    async fn set_key_limits(&self, id: &str, limits: &KeyLimits) -> Result<bool, StorageError> {
        let (id, limits) = (id.to_string(), *limits);
        self.run(move |c| usage::set_limits(c, &id, &limits)).await
    }

    async fn insert_job_within(&self, job: &JobRecord, max: usize) -> Result<bool, StorageError> {
        let job = job.clone();
        self.run(move |c| jobs::insert_within(c, &job, max)).await
    }

    async fn job(&self, id: &str) -> Result<Option<JobRecord>, StorageError> {
        let id = id.to_string();
        self.run(move |c| jobs::get(c, &id)).await
    }

    async fn start_job(&self, id: &str) -> Result<Option<JobRecord>, StorageError> {
        let id = id.to_string();
        self.run(move |c| match jobs::mark_running(c, &id)? {
            true => jobs::get(c, &id),
            false => Ok(None),
        })
        .await
    }

    async fn claim_job(&self) -> Result<Option<JobRecord>, StorageError> {
        self.run(jobs::claim).await
    }

    async fn renew_job(&self, id: &str) -> Result<bool, StorageError> {
        // One process owns every job here: a running job stays its own until it ends or the process stops.
        Ok(self
            .job(id)
            .await?
            .is_some_and(|job| job.status == super::JobStatus::Running))
    }

    async fn release_jobs(&self) -> Result<usize, StorageError> {
        self.run(|c| jobs::release(c)).await
    }

    async fn job_progress(&self, id: &str, progress: f64) -> Result<(), StorageError> {
        let id = id.to_string();
        self.run(move |c| jobs::set_progress(c, &id, progress))
            .await
    }

    async fn job_succeeded(&self, id: &str, audio_seconds: f64) -> Result<bool, StorageError> {
        let id = id.to_string();
        self.run(move |c| jobs::mark_succeeded(c, &id, audio_seconds))
            .await
    }

    async fn job_failed(&self, id: &str, error: &str) -> Result<bool, StorageError> {
        let (id, error) = (id.to_string(), error.to_string());
        self.run(move |c| jobs::mark_failed(c, &id, &error)).await
    }

    async fn requeue_running(&self) -> Result<usize, StorageError> {
        self.run(jobs::requeue_running).await
    }

    async fn queued_jobs(&self) -> Result<Vec<String>, StorageError> {
        self.run(|c| jobs::queued(c)).await
    }

    async fn delete_expired_jobs(&self, before_unix: i64) -> Result<Vec<String>, StorageError> {
        self.run(move |c| jobs::delete_expired(c, before_unix))
            .await
    }

    async fn insert_voice_within(
        &self,
        voice: &ClonedVoiceRecord,
        max: usize,
    ) -> Result<bool, StorageError> {
        let voice = voice.clone();
        self.run(move |c| voices::insert_within(c, &voice, max))
            .await
    }

    async fn voices(&self) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
        self.run(|c| voices::all(c)).await
    }

    async fn voices_of(&self, owner: &str) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
        let owner = owner.to_string();
        self.run(move |c| voices::of_owner(c, &owner)).await
    }

    async fn voice(
        &self,
        owner: &str,
        voice_id: &str,
    ) -> Result<Option<ClonedVoiceRecord>, StorageError> {
        let (owner, voice_id) = (owner.to_string(), voice_id.to_string());
        self.run(move |c| voices::get(c, &owner, &voice_id)).await
    }

    async fn delete_voice(&self, owner: &str, voice_id: &str) -> Result<bool, StorageError> {
        let (owner, voice_id) = (owner.to_string(), voice_id.to_string());
        self.run(move |c| voices::delete(c, &owner, &voice_id))
            .await
    }

    async fn insert_dictionary_within(
        &self,
        dictionary: &DictionaryRecord,
        max: usize,
    ) -> Result<bool, StorageError> {
        let dictionary = dictionary.clone();
        self.run(move |c| dictionaries::insert_within(c, &dictionary, max))
            .await
    }

    async fn dictionary(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<DictionaryRecord>, StorageError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.run(move |c| dictionaries::get(c, &owner, &id)).await
    }

    async fn dictionaries(
        &self,
        owner: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<DictionaryRecord>, StorageError> {
        let owner = owner.to_string();
        self.run(move |c| dictionaries::list(c, &owner, offset, limit))
            .await
    }

    async fn delete_dictionary(&self, owner: &str, id: &str) -> Result<bool, StorageError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.run(move |c| dictionaries::delete(c, &owner, &id))
            .await
    }

    async fn insert_session(
        &self,
        session: &SessionRecord,
        limits: &SessionLimits,
    ) -> Result<(), StorageError> {
        let (session, limits) = (session.clone(), *limits);
        self.run(move |c| sessions::insert(c, &session, &limits))
            .await
    }

    async fn session_scenario(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
    ) -> Result<Option<String>, StorageError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.run(move |c| sessions::scenario(c, &owner, &id, idle))
            .await
    }

    async fn claim_session(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
        token: &str,
        hold: Duration,
    ) -> Result<SessionClaim, StorageError> {
        let (owner, id, token) = (owner.to_string(), id.to_string(), token.to_string());
        self.run(move |c| sessions::claim(c, &owner, &id, idle, &token, hold))
            .await
    }

    async fn release_session(
        &self,
        id: &str,
        token: &str,
        state: Option<&str>,
    ) -> Result<bool, StorageError> {
        let (id, token, state) = (id.to_string(), token.to_string(), state.map(str::to_string));
        self.run(move |c| sessions::release(c, &id, &token, state.as_deref()))
            .await
    }
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
