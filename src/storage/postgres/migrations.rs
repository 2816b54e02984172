//! PostgreSQL's schema, version by version (kept in the `sauti_schema` table), applied under an advisory lock
//! so that replicas starting together migrate once; see [`crate::storage::migrations`] for the rules every
//! engine's migrations follow.

use super::{failed, prepared, PgStore};
use crate::storage::migrations::LATEST;
use crate::storage::StorageError;

/// Any fixed number, the same in every replica: the advisory lock taken while migrating.
const MIGRATION_LOCK: i64 = 0x5a07_1d0b;

/// PostgreSQL's migrations; entry `i` brings the database to version `i + 1`.
pub(in crate::storage) const STEPS: &[&str] = &["
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE key_revision (only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row), revision BIGINT NOT NULL);
INSERT INTO key_revision (revision) VALUES (0);
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    text TEXT NOT NULL,
    voice_id TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_unix BIGINT NOT NULL,
    seq BIGSERIAL,
    started_at TEXT,
    completed_at TEXT,
    completed_unix BIGINT,
    progress DOUBLE PRECISION NOT NULL DEFAULT 0,
    error TEXT,
    audio_seconds DOUBLE PRECISION,
    runs INTEGER NOT NULL DEFAULT 0,
    pronunciation TEXT,
    lease_owner TEXT,
    lease_until TIMESTAMPTZ
);
CREATE INDEX jobs_by_owner ON jobs (owner, status);
CREATE INDEX jobs_by_status ON jobs (status, created_unix, seq);
CREATE TABLE cloned_voices (
    voice_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    profile TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    consent TEXT
);
CREATE INDEX cloned_voices_by_owner ON cloned_voices (owner);
CREATE TABLE pronunciation_dictionaries (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    version_id TEXT NOT NULL,
    rules TEXT NOT NULL,
    created_unix BIGINT NOT NULL,
    seq BIGSERIAL
);
CREATE INDEX pronunciation_dictionaries_by_owner ON pronunciation_dictionaries (owner, created_unix, seq);
", "
CREATE TABLE agent_sessions (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    scenario TEXT NOT NULL,
    state TEXT NOT NULL,
    used_at TIMESTAMPTZ NOT NULL,
    lock_token TEXT,
    lock_until TIMESTAMPTZ
);
CREATE INDEX agent_sessions_by_owner ON agent_sessions (owner, used_at);
CREATE INDEX agent_sessions_by_use ON agent_sessions (used_at);
", "
CREATE TABLE key_secret (only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row), secret TEXT NOT NULL);
", "
CREATE TABLE key_limits (owner TEXT PRIMARY KEY, character_limit BIGINT, audio_seconds_limit DOUBLE PRECISION);
CREATE TABLE usage_totals (
    owner TEXT NOT NULL,
    period TEXT NOT NULL,
    kind TEXT NOT NULL,
    amount DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (owner, period, kind)
);
CREATE TABLE usage_daily (
    owner TEXT NOT NULL,
    day TEXT NOT NULL,
    kind TEXT NOT NULL,
    voice_id TEXT NOT NULL,
    amount DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (owner, day, kind, voice_id)
);
", "
CREATE TABLE call_records (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    scenario TEXT NOT NULL,
    started_unix BIGINT NOT NULL,
    outcome TEXT NOT NULL,
    search TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX call_records_by_owner ON call_records (owner, started_unix DESC, id DESC);
CREATE INDEX call_records_by_start ON call_records (started_unix);
CREATE TABLE webhooks (
    owner TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    failures BIGINT NOT NULL,
    last_error TEXT
);
CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    due_ms BIGINT NOT NULL,
    queued_ms BIGINT NOT NULL
);
CREATE INDEX webhook_events_by_due ON webhook_events (due_ms);
CREATE INDEX webhook_events_by_owner ON webhook_events (owner, queued_ms);
"];

const _: () = assert!(
    STEPS.len() as i64 == LATEST,
    "PostgreSQL needs exactly storage::migrations::LATEST migrations"
);

impl PgStore {
    /// Apply the migrations this database lacks, one replica at a time; the version it is now at.
    pub async fn migrate(&self) -> Result<i64, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute(
            &prepared(&tx, "SELECT pg_advisory_xact_lock($1)").await?,
            &[&MIGRATION_LOCK],
        )
        .await
        .map_err(failed)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS sauti_schema (
                version BIGINT PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await
        .map_err(failed)?;
        let found: i64 = tx
            .query_one(
                &prepared(&tx, "SELECT COALESCE(MAX(version), 0) FROM sauti_schema").await?,
                &[],
            )
            .await
            .map_err(failed)?
            .get(0);
        if found > LATEST {
            return Err(StorageError::TooNew {
                found,
                known: LATEST,
            });
        }
        for (index, step) in STEPS.iter().enumerate().skip(found as usize) {
            let version = index as i64 + 1;
            tx.batch_execute(step).await.map_err(failed)?;
            tx.execute(
                &prepared(&tx, "INSERT INTO sauti_schema (version) VALUES ($1)").await?,
                &[&version],
            )
            .await
            .map_err(failed)?;
            tracing::info!(version, "PostgreSQL schema migrated");
        }
        tx.commit().await.map_err(failed)?;
        Ok(LATEST)
    }
}
