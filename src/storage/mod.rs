//! Persistence: jobs, API keys, cloned voices and pronunciation dictionaries behind [`Store`] — SQLite in the
//! data directory by default (every call on a blocking thread), PostgreSQL when `storage.url` names one — and
//! job audio files written atomically in the data directory.
//!
//! Layout: the files here are engine-neutral — the [`Store`] trait (`store.rs`), the records it deals in and
//! their stored text form (`jobs.rs`, `keys.rs`, `voices.rs`, `dictionaries.rs`, [`sessions`]), the schema
//! version (`migrations.rs`) — and each engine has its folder beside them, [`sqlite`] and [`postgres`], with
//! the SQL for every kind of record and its own migrations. [`blobs`] keeps job audio (disk or S3), [`space`]
//! watches free disk, and [`conversations`] holds the dialogue's conversation stores (in memory, or in the
//! [`Store`]).

pub mod blobs;
pub mod calls;
pub mod conversations;
mod dictionaries;
mod jobs;
mod keys;
mod migrations;
pub mod postgres;
pub mod sessions;
pub mod space;
pub mod sqlite;
mod store;
pub mod usage;
mod voices;
pub mod webhooks;

use std::sync::Arc;

pub use blobs::{ArtifactStore, Blob, BlobStore};
pub use calls::{CallFilter, CallRow, CallStore};
pub use dictionaries::DictionaryRecord;
pub use jobs::{JobRecord, JobStatus};
pub use keys::{
    adopt_earlier_ids as adopt_earlier_key_ids, hash_key, key_id, legacy_key_id, KeyRecord,
    KeySecret,
};
pub use migrations::LATEST as SCHEMA_VERSION;
pub use sessions::{SessionClaim, SessionLimits, SessionRecord};
pub use sqlite::{Database, DATABASE_FILE};
pub use store::{JobListener, JobsWaker, Storage, Store};
pub use voices::ClonedVoiceRecord;
pub use webhooks::{EventRow, WebhookRow, WebhookStore};

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

/// The current time as an RFC 3339 UTC timestamp with second precision, e.g. `2026-11-22T19:53:16Z`.
pub fn now_rfc3339() -> String {
    format_timestamp(time::OffsetDateTime::now_utc())
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

pub fn format_timestamp(t: time::OffsetDateTime) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    t.format(&format).unwrap_or_default()
}

/// Key names, checked the same way wherever a key is made.
pub use keys::{
    check_display_name, check_name as check_key_name, MAX_NAME_CHARS as MAX_KEY_NAME_CHARS,
};
