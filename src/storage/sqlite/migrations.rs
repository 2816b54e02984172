//! SQLite's schema, version by version (kept in `PRAGMA user_version`); see [`crate::storage::migrations`] for
//! the rules every engine's migrations follow.

use rusqlite::Connection;

use crate::storage::migrations::LATEST;
use crate::storage::StorageError;

/// The jobs table as the first release made it (before pronunciation dictionaries).
pub(super) const FIRST_JOBS_TABLE: &str = "
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

/// SQLite version 1: every table as of the first versioned release. Written to also bring a database made
/// before versions existed up to it (tables that exist are kept; the jobs' pronunciation column is added).
fn sqlite_v1(c: &Connection) -> Result<(), StorageError> {
    c.execute_batch(FIRST_JOBS_TABLE)?;
    c.execute_batch(
        "
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS cloned_voices (
    voice_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    profile TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    consent TEXT
);
CREATE INDEX IF NOT EXISTS cloned_voices_by_owner ON cloned_voices (owner);
CREATE TABLE IF NOT EXISTS pronunciation_dictionaries (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    version_id TEXT NOT NULL,
    rules TEXT NOT NULL,
    created_unix INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS pronunciation_dictionaries_by_owner
    ON pronunciation_dictionaries (owner, created_unix);
CREATE TABLE IF NOT EXISTS key_revision (only_row INTEGER PRIMARY KEY CHECK (only_row = 1), revision INTEGER NOT NULL);
INSERT OR IGNORE INTO key_revision (only_row, revision) VALUES (1, 0);
",
    )?;
    let has_pronunciation: bool = c.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'pronunciation'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !has_pronunciation {
        c.execute_batch("ALTER TABLE jobs ADD COLUMN pronunciation TEXT;")?;
    }
    Ok(())
}

/// SQLite version 2: agent conversations, kept so that they outlive a restart of the process.
fn sqlite_v2(c: &Connection) -> Result<(), StorageError> {
    c.execute_batch(
        "
CREATE TABLE agent_sessions (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    scenario TEXT NOT NULL,
    state TEXT NOT NULL,
    used_ms INTEGER NOT NULL,
    lock_token TEXT,
    lock_until_ms INTEGER
);
CREATE INDEX agent_sessions_by_owner ON agent_sessions (owner, used_ms);
CREATE INDEX agent_sessions_by_use ON agent_sessions (used_ms);
",
    )?;
    Ok(())
}

/// SQLite version 3: the secret key ids are derived under (its one row is written when first needed).
fn sqlite_v3(c: &Connection) -> Result<(), StorageError> {
    c.execute_batch(
        "CREATE TABLE key_secret (only_row INTEGER PRIMARY KEY CHECK (only_row = 1), secret TEXT NOT NULL);",
    )?;
    Ok(())
}

/// SQLite version 4: what each key used (a total per month and kind, a breakdown per day and voice) and its
/// monthly limits.
fn sqlite_v4(c: &Connection) -> Result<(), StorageError> {
    c.execute_batch(
        "
CREATE TABLE key_limits (owner TEXT PRIMARY KEY, character_limit INTEGER, audio_seconds_limit REAL);
CREATE TABLE usage_totals (
    owner TEXT NOT NULL,
    period TEXT NOT NULL,
    kind TEXT NOT NULL,
    amount REAL NOT NULL,
    PRIMARY KEY (owner, period, kind)
);
CREATE TABLE usage_daily (
    owner TEXT NOT NULL,
    day TEXT NOT NULL,
    kind TEXT NOT NULL,
    voice_id TEXT NOT NULL,
    amount REAL NOT NULL,
    PRIMARY KEY (owner, day, kind, voice_id)
);
",
    )?;
    Ok(())
}

/// SQLite version 5: call records (an agent conversation's transcript, outcome and transfers), and post-call
/// webhooks with their queue of events.
fn sqlite_v5(c: &Connection) -> Result<(), StorageError> {
    c.execute_batch(
        "
CREATE TABLE call_records (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    scenario TEXT NOT NULL,
    started_unix INTEGER NOT NULL,
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
    enabled INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    last_error TEXT
);
CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    due_ms INTEGER NOT NULL,
    queued_ms INTEGER NOT NULL
);
CREATE INDEX webhook_events_by_due ON webhook_events (due_ms);
CREATE INDEX webhook_events_by_owner ON webhook_events (owner, queued_ms);
",
    )?;
    Ok(())
}

type SqliteMigration = fn(&Connection) -> Result<(), StorageError>;

/// SQLite's migrations; entry `i` brings the database to version `i + 1`.
pub(in crate::storage) const STEPS: &[SqliteMigration] =
    &[sqlite_v1, sqlite_v2, sqlite_v3, sqlite_v4, sqlite_v5];

const _: () = assert!(
    STEPS.len() as i64 == LATEST,
    "SQLite needs exactly storage::migrations::LATEST migrations"
);

/// Bring a SQLite database to [`LATEST`], each step in a transaction of its own with its version.
pub(super) fn migrate(c: &mut Connection) -> Result<i64, StorageError> {
    let found: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > LATEST {
        return Err(StorageError::TooNew {
            found,
            known: LATEST,
        });
    }
    for (index, step) in STEPS.iter().enumerate().skip(found as usize) {
        let version = index as i64 + 1;
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        step(&tx)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::info!(version, "SQLite schema migrated");
    }
    Ok(LATEST)
}
