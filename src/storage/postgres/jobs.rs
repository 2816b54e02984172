//! Jobs in PostgreSQL. A running job carries a lease — the replica running it and until when — that the
//! replica renews as it makes progress: a job whose replica died is queued again once its lease lapses, and
//! only the lease holder can finish a job, so a job never completes twice.

use super::{failed, prepared, PgStore};
use crate::storage::jobs::{
    decode, encode, entered, quarantined, COLUMNS, MAX_INTERRUPTED_STARTS, QUARANTINED,
};
use crate::storage::{now_rfc3339, unix_now, JobRecord, StorageError};

/// The channel on which a queued job is announced to every replica.
pub(super) const CHANNEL: &str = "sauti_jobs";

fn row(r: &tokio_postgres::Row) -> Result<JobRecord, StorageError> {
    let record = JobRecord {
        id: r.get(0),
        owner: r.get(1),
        status: crate::storage::JobStatus::Queued,
        text: r.get(3),
        voice_id: r.get(4),
        settings: Default::default(),
        created_at: r.get(6),
        completed_at: r.get(7),
        progress: r.get(8),
        error: r.get(9),
        audio_seconds: r.get(10),
        pronunciation: Vec::new(),
    };
    decode((record, r.get(2), r.get(5), r.get(11)))
}

pub(super) async fn insert_within(
    store: &PgStore,
    job: &JobRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let (settings, pronunciation) = encode(job)?;
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    // One owner's creations are counted one at a time, whichever replica takes them.
    tx.execute(
        &prepared(&tx, "SELECT pg_advisory_xact_lock(hashtext($1))").await?,
        &[&job.owner],
    )
    .await
    .map_err(failed)?;
    let unfinished: i64 = tx
        .query_one(
            &prepared(
                &tx,
                "SELECT COUNT(*) FROM jobs WHERE owner = $1 AND status IN ('queued', 'running')",
            )
            .await?,
            &[&job.owner],
        )
        .await
        .map_err(failed)?
        .get(0);
    if unfinished >= i64::try_from(max).unwrap_or(i64::MAX) {
        return Ok(false);
    }
    tx.execute(
        &prepared(&tx, "INSERT INTO jobs (id, owner, status, text, voice_id, settings, created_at, created_unix, pronunciation)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)").await?,
        &[
            &job.id,
            &job.owner,
            &job.status.as_str(),
            &job.text,
            &job.voice_id,
            &settings,
            &job.created_at,
            &unix_now(),
            &pronunciation,
        ],
    )
    .await
    .map_err(failed)?;
    // Delivered to the listening replicas when the transaction commits.
    tx.execute(
        &prepared(&tx, "SELECT pg_notify($1, '')").await?,
        &[&CHANNEL],
    )
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    entered(job.status.as_str());
    Ok(true)
}

pub(super) async fn get(store: &PgStore, id: &str) -> Result<Option<JobRecord>, StorageError> {
    let client = store.client().await?;
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = $1");
    client
        .query_opt(&prepared(&client, &sql).await?, &[&id])
        .await
        .map_err(failed)?
        .as_ref()
        .map(row)
        .transpose()
}

pub(super) async fn start(store: &PgStore, id: &str) -> Result<Option<JobRecord>, StorageError> {
    let client = store.client().await?;
    let sql = format!(
        "UPDATE jobs SET status = 'running', started_at = $2, runs = runs + 1, progress = 0,
             lease_owner = $3, lease_until = now() + make_interval(secs => $4)
         WHERE id = $1 AND status = 'queued' RETURNING {COLUMNS}"
    );
    let started = client
        .query_opt(
            &prepared(&client, &sql).await?,
            &[&id, &now_rfc3339(), &store.replica, &store.lease_seconds],
        )
        .await
        .map_err(failed)?;
    if started.is_some() {
        entered("running");
    }
    started.as_ref().map(row).transpose()
}

/// The oldest queued job that no other replica is claiming at this moment, claimed under a lease.
pub(super) async fn claim(store: &PgStore) -> Result<Option<JobRecord>, StorageError> {
    let client = store.client().await?;
    let sql = format!(
        "UPDATE jobs SET status = 'running', started_at = $1, runs = runs + 1, progress = 0,
             lease_owner = $2, lease_until = now() + make_interval(secs => $3)
         WHERE id = (
             SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_unix, seq
             FOR UPDATE SKIP LOCKED LIMIT 1
         )
         RETURNING {COLUMNS}"
    );
    let claimed = client
        .query_opt(
            &prepared(&client, &sql).await?,
            &[&now_rfc3339(), &store.replica, &store.lease_seconds],
        )
        .await
        .map_err(failed)?;
    if claimed.is_some() {
        entered("running");
    }
    claimed.as_ref().map(row).transpose()
}

/// Extend this replica's lease on a running job; false when the lease is no longer this replica's.
pub(super) async fn renew(store: &PgStore, id: &str) -> Result<bool, StorageError> {
    let sql = "UPDATE jobs SET lease_until = now() + make_interval(secs => $3)
               WHERE id = $1 AND status = 'running' AND lease_owner = $2";
    let renewed = store
        .execute(sql, &[&id, &store.replica, &store.lease_seconds])
        .await?;
    Ok(renewed == 1)
}

/// This replica's running jobs back to the queue, announced to the others; the start they were given is taken
/// back (the replica stops because it was asked to, not because of them).
pub(super) async fn release(store: &PgStore) -> Result<usize, StorageError> {
    let sql = "WITH released AS (
                   UPDATE jobs SET status = 'queued', progress = 0, runs = GREATEST(runs - 1, 0),
                       lease_owner = NULL, lease_until = NULL
                   WHERE status = 'running' AND lease_owner = $1 RETURNING id
               )
               SELECT pg_notify($2, '') FROM released";
    let released = store.execute(sql, &[&store.replica, &CHANNEL]).await?;
    Ok(released as usize)
}

/// A running job's progress, which also renews its lease.
pub(super) async fn progress(store: &PgStore, id: &str, progress: f64) -> Result<(), StorageError> {
    let sql = "UPDATE jobs SET progress = $2, lease_until = now() + make_interval(secs => $4)
               WHERE id = $1 AND status = 'running' AND lease_owner = $3";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&id, &progress, &store.replica, &store.lease_seconds];
    store.execute(sql, &params).await?;
    Ok(())
}

/// running → succeeded, only while this replica holds the job's lease (fenced).
pub(super) async fn succeeded(
    store: &PgStore,
    id: &str,
    audio_seconds: f64,
) -> Result<bool, StorageError> {
    let sql = "UPDATE jobs SET status = 'succeeded', progress = 1, completed_at = $3, completed_unix = $4,
                   audio_seconds = $5, lease_owner = NULL, lease_until = NULL
               WHERE id = $1 AND status = 'running' AND lease_owner = $2";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] = [
        &id,
        &store.replica,
        &now_rfc3339(),
        &unix_now(),
        &audio_seconds,
    ];
    Ok(finished(store.execute(sql, &params).await?, "succeeded"))
}

/// running → failed, only while this replica holds the job's lease (fenced).
pub(super) async fn failed_with(
    store: &PgStore,
    id: &str,
    error: &str,
) -> Result<bool, StorageError> {
    let sql =
        "UPDATE jobs SET status = 'failed', completed_at = $3, completed_unix = $4, error = $5,
                   lease_owner = NULL, lease_until = NULL
               WHERE id = $1 AND status = 'running' AND lease_owner = $2";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
        [&id, &store.replica, &now_rfc3339(), &unix_now(), &error];
    Ok(finished(store.execute(sql, &params).await?, "failed"))
}

/// Whether a fenced transition to `state` happened (counted when it did).
fn finished(changed: u64, state: &'static str) -> bool {
    if changed == 1 {
        entered(state);
    }
    changed == 1
}

/// Running jobs whose lease has lapsed (their replica stopped or lost the database) go back to the queue,
/// announced to every replica; those already started [`MAX_INTERRUPTED_STARTS`] times fail instead.
pub(super) async fn requeue_running(store: &PgStore) -> Result<usize, StorageError> {
    let quarantine =
        "UPDATE jobs SET status = 'failed', completed_at = $1, completed_unix = $2, error = $3,
                          lease_owner = NULL, lease_until = NULL
                      WHERE status = 'running' AND lease_until < now() AND runs >= $4 RETURNING id";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [
        &now_rfc3339(),
        &unix_now(),
        &QUARANTINED,
        &MAX_INTERRUPTED_STARTS,
    ];
    let failed: Vec<String> = store
        .rows(quarantine, &params)
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    quarantined(&failed);
    let sql = "WITH lapsed AS (
                   UPDATE jobs SET status = 'queued', progress = 0, lease_owner = NULL, lease_until = NULL
                   WHERE status = 'running' AND lease_until < now() RETURNING id
               )
               SELECT pg_notify($1, '') FROM lapsed";
    Ok(store.execute(sql, &[&CHANNEL]).await? as usize)
}

pub(super) async fn queued(store: &PgStore) -> Result<Vec<String>, StorageError> {
    let sql = "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_unix, seq";
    Ok(store
        .rows(sql, &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Any fixed number, the same in every replica: the lock a retention sweep holds.
const RETENTION_LOCK: i64 = 0x5a07_de1e;

/// One replica sweeps at a time: while one holds the lock, the others' sweeps delete nothing and return at
/// once (the next sweep comes soon enough).
pub(super) async fn delete_expired(
    store: &PgStore,
    before_unix: i64,
) -> Result<Vec<String>, StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    let alone: bool = tx
        .query_one(
            &prepared(&tx, "SELECT pg_try_advisory_xact_lock($1)").await?,
            &[&RETENTION_LOCK],
        )
        .await
        .map_err(failed)?
        .get(0);
    if !alone {
        return Ok(Vec::new());
    }
    let sql = "DELETE FROM jobs WHERE status IN ('succeeded', 'failed') AND completed_unix < $1 RETURNING id";
    let rows = tx
        .query(&prepared(&tx, sql).await?, &[&before_unix])
        .await
        .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}
