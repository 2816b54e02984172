//! The PostgreSQL store, for several replicas sharing one database: a pool of connections, the schema brought
//! up to date under an advisory lock (so replicas starting together migrate once), and the same records and
//! rules as the SQLite store.

mod calls;
mod jobs;
mod keys;
pub(super) mod migrations;
mod records;
mod sessions;
mod usage;
mod watch;
mod webhooks;

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::sessions::{SessionClaim, SessionLimits, SessionRecord};
use super::store::Store;
use super::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};
use super::{ClonedVoiceRecord, DictionaryRecord, JobRecord, KeyRecord, KeySecret, StorageError};

/// Connections kept per replica.
const POOL_SIZE: usize = 16;
/// How long a call waits for a connection (or to make one) before the store counts as unavailable.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

/// Whether `url` names PostgreSQL.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// A pool of connections to one PostgreSQL database; cheap to clone.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// Where the pool connects, for the connection that listens for queued jobs.
    config: tokio_postgres::Config,
    /// This replica's name on the jobs it runs (their lease).
    replica: String,
    /// How long a running job stays this replica's without a sign of life.
    lease_seconds: f64,
}

/// A PostgreSQL error as the store reports it: the server's own message when it sent one.
pub(super) fn failed(error: impl Into<PgFailure>) -> StorageError {
    StorageError::Postgres(error.into().0)
}

/// `sql` prepared once per connection and kept, so each later use is one round trip.
pub(super) async fn prepared<C: deadpool_postgres::GenericClient + Sync>(
    client: &C,
    sql: &str,
) -> Result<tokio_postgres::Statement, StorageError> {
    client.prepare_cached(sql).await.map_err(failed)
}

/// The text of a failure from the driver or the pool.
pub(super) struct PgFailure(String);

impl From<tokio_postgres::Error> for PgFailure {
    fn from(error: tokio_postgres::Error) -> Self {
        match error.as_db_error() {
            Some(db) => Self(format!("{} ({})", db.message(), db.code().code())),
            None => Self(error.to_string()),
        }
    }
}

impl From<deadpool_postgres::PoolError> for PgFailure {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => error.into(),
            other => Self(other.to_string()),
        }
    }
}

impl PgStore {
    /// Connect to `url` and bring its schema to this sauti's version. A job this replica runs stays its own
    /// for `lease` after each sign of life.
    pub async fn connect(url: &str, lease: Duration) -> Result<Self, StorageError> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e: tokio_postgres::Error| {
                StorageError::Postgres(format!("storage.url: {e}"))
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_WAIT);
        }
        config.application_name("sauti");
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_WAIT))
            .create_timeout(Some(CONNECT_WAIT))
            .recycle_timeout(Some(CONNECT_WAIT))
            .build()
            .map_err(|e| StorageError::Postgres(e.to_string()))?;
        let store = Self {
            pool,
            config,
            replica: format!("replica_{}", uuid::Uuid::new_v4().simple()),
            lease_seconds: lease.as_secs_f64(),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// A connection from the pool.
    pub(super) async fn client(&self) -> Result<deadpool_postgres::Object, StorageError> {
        self.pool.get().await.map_err(failed)
    }

    /// Run one statement on a pooled connection; how many rows it changed.
    pub(super) async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, StorageError> {
        let client = self.client().await?;
        let statement = prepared(&client, sql).await?;
        client.execute(&statement, params).await.map_err(failed)
    }

    /// Run one query on a pooled connection; its rows.
    pub(super) async fn rows(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, StorageError> {
        let client = self.client().await?;
        let statement = prepared(&client, sql).await?;
        client.query(&statement, params).await.map_err(failed)
    }
}

#[async_trait]
impl Store for PgStore {
    fn engine(&self) -> &'static str {
        "postgres"
    }

    fn shared(&self) -> bool {
        true
    }

    fn lease(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.lease_seconds))
    }

    async fn ping(&self) -> Result<(), StorageError> {
        let sql = "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')";
        self.rows(sql, &[]).await.map(drop)
    }

    async fn close(&self) {
        self.pool.close();
    }

    async fn insert_key(&self, name: &str, key: &str) -> Result<KeyRecord, StorageError> {
        keys::insert(self, name, key).await
    }

    async fn keys(&self) -> Result<Vec<KeyRecord>, StorageError> {
        keys::list(self).await
    }

    async fn revoke_key(&self, id: &str) -> Result<bool, StorageError> {
        keys::revoke(self, id).await
    }

    async fn key_secret(&self) -> Result<KeySecret, StorageError> {
        keys::secret(self).await
    }

    async fn adopt_key_ids(&self, moves: &[(String, String)]) -> Result<usize, StorageError> {
        keys::adopt(self, moves).await
    }

    async fn any_key(&self) -> Result<bool, StorageError> {
        let rows = self.rows("SELECT id FROM api_keys LIMIT 1", &[]).await?;
        Ok(!rows.is_empty())
    }

    async fn keys_version(&self) -> Result<i64, StorageError> {
        let rows = self.rows("SELECT revision FROM key_revision", &[]).await?;
        rows.first()
            .map(|r| r.get(0))
            .ok_or_else(|| StorageError::Corrupt("key_revision has no row".into()))
    }

    async fn charge(&self, charge: &Charge) -> Result<Charged, StorageError> {
        usage::charge(self, charge).await
    }

    async fn usage_totals(
        &self,
        owner: &str,
        period: &str,
    ) -> Result<Vec<(UsageKind, f64)>, StorageError> {
        usage::totals(self, owner, period).await
    }

    async fn usage(
        &self,
        owner: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageRow>, StorageError> {
        usage::daily(self, owner, from, to).await
    }

    async fn key_limits(&self, owner: &str) -> Result<KeyLimits, StorageError> {
        usage::limits(self, owner).await
    }

    async fn set_key_limits(&self, id: &str, limits: &KeyLimits) -> Result<bool, StorageError> {
        usage::set_limits(self, id, limits).await
    }

    async fn insert_job_within(&self, job: &JobRecord, max: usize) -> Result<bool, StorageError> {
        jobs::insert_within(self, job, max).await
    }

    async fn job(&self, id: &str) -> Result<Option<JobRecord>, StorageError> {
        jobs::get(self, id).await
    }

    async fn start_job(&self, id: &str) -> Result<Option<JobRecord>, StorageError> {
        jobs::start(self, id).await
    }

    async fn claim_job(&self) -> Result<Option<JobRecord>, StorageError> {
        jobs::claim(self).await
    }

    async fn renew_job(&self, id: &str) -> Result<bool, StorageError> {
        jobs::renew(self, id).await
    }

    async fn release_jobs(&self) -> Result<usize, StorageError> {
        jobs::release(self).await
    }

    fn job_listener(
        &self,
        wake: crate::storage::store::JobsWaker,
    ) -> Option<crate::storage::store::JobListener> {
        Some(Box::pin(watch::listen_forever(self.config.clone(), wake)))
    }

    async fn job_progress(&self, id: &str, progress: f64) -> Result<(), StorageError> {
        jobs::progress(self, id, progress).await
    }

    async fn job_succeeded(&self, id: &str, audio_seconds: f64) -> Result<bool, StorageError> {
        jobs::succeeded(self, id, audio_seconds).await
    }

    async fn job_failed(&self, id: &str, error: &str) -> Result<bool, StorageError> {
        jobs::failed_with(self, id, error).await
    }

    async fn requeue_running(&self) -> Result<usize, StorageError> {
        jobs::requeue_running(self).await
    }

    async fn queued_jobs(&self) -> Result<Vec<String>, StorageError> {
        jobs::queued(self).await
    }

    async fn delete_expired_jobs(&self, before_unix: i64) -> Result<Vec<String>, StorageError> {
        jobs::delete_expired(self, before_unix).await
    }

    async fn insert_voice_within(
        &self,
        voice: &ClonedVoiceRecord,
        max: usize,
    ) -> Result<bool, StorageError> {
        records::insert_voice_within(self, voice, max).await
    }

    async fn voices(&self) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
        records::voices(self).await
    }

    async fn voices_of(&self, owner: &str) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
        records::voices_of(self, owner).await
    }

    async fn voice(
        &self,
        owner: &str,
        voice_id: &str,
    ) -> Result<Option<ClonedVoiceRecord>, StorageError> {
        records::voice(self, owner, voice_id).await
    }

    async fn delete_voice(&self, owner: &str, voice_id: &str) -> Result<bool, StorageError> {
        records::delete_voice(self, owner, voice_id).await
    }

    async fn insert_dictionary_within(
        &self,
        dictionary: &DictionaryRecord,
        max: usize,
    ) -> Result<bool, StorageError> {
        records::insert_dictionary_within(self, dictionary, max).await
    }

    async fn dictionary(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<DictionaryRecord>, StorageError> {
        records::dictionary(self, owner, id).await
    }

    async fn dictionaries(
        &self,
        owner: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<DictionaryRecord>, StorageError> {
        records::dictionaries(self, owner, offset, limit).await
    }

    async fn delete_dictionary(&self, owner: &str, id: &str) -> Result<bool, StorageError> {
        records::delete_dictionary(self, owner, id).await
    }

    async fn insert_session(
        &self,
        session: &SessionRecord,
        limits: &SessionLimits,
    ) -> Result<(), StorageError> {
        sessions::insert(self, session, limits).await
    }

    async fn session_scenario(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
    ) -> Result<Option<String>, StorageError> {
        sessions::scenario(self, owner, id, idle).await
    }

    async fn claim_session(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
        token: &str,
        hold: Duration,
    ) -> Result<SessionClaim, StorageError> {
        sessions::claim(self, owner, id, idle, token, hold).await
    }

    async fn release_session(
        &self,
        id: &str,
        token: &str,
        state: Option<&str>,
    ) -> Result<bool, StorageError> {
        sessions::release(self, id, token, state).await
    }
}
