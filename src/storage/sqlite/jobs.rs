//! The jobs table in SQLite: the lifecycle queued → running → succeeded | failed, written before it is acted on.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::storage::jobs::{
    decode, encode, entered, quarantined, Row, COLUMNS, MAX_INTERRUPTED_STARTS, QUARANTINED,
};
use crate::storage::{now_rfc3339, unix_now, JobRecord, JobStatus, StorageError};
use crate::tts::VoiceSettings;

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let record = JobRecord {
        id: r.get(0)?,
        owner: r.get(1)?,
        status: JobStatus::Queued,
        text: r.get(3)?,
        voice_id: r.get(4)?,
        settings: VoiceSettings::default(),
        created_at: r.get(6)?,
        completed_at: r.get(7)?,
        progress: r.get(8)?,
        error: r.get(9)?,
        audio_seconds: r.get(10)?,
        pronunciation: Vec::new(),
    };
    Ok((record, r.get(2)?, r.get(5)?, r.get(11)?))
}

/// Store a new job.
pub fn insert(c: &Connection, job: &JobRecord) -> Result<(), StorageError> {
    let (settings, pronunciation) = encode(job)?;
    c.execute(
        "INSERT INTO jobs (id, owner, status, text, voice_id, settings, created_at, created_unix, pronunciation)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            job.id,
            job.owner,
            job.status.as_str(),
            job.text,
            job.voice_id,
            settings,
            job.created_at,
            unix_now(),
            pronunciation
        ],
    )?;
    entered(job.status.as_str());
    Ok(())
}

/// Store a new job unless its owner already has `max` queued or running; whether it was stored. The count and the
/// insert are one write transaction, taken before the count, so concurrent requests can never pass the limit
/// together.
pub fn insert_within(
    c: &mut Connection,
    job: &JobRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if count_unfinished(&tx, &job.owner)? >= max {
        return Ok(false);
    }
    insert(&tx, job)?;
    tx.commit()?;
    Ok(true)
}

/// A job by id.
pub fn get(c: &Connection, id: &str) -> Result<Option<JobRecord>, StorageError> {
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1");
    c.query_row(&sql, params![id], row)
        .optional()?
        .map(decode)
        .transpose()
}

/// Queued or running jobs of one key.
pub fn count_unfinished(c: &Connection, owner: &str) -> Result<usize, StorageError> {
    let n: i64 = c.query_row(
        "SELECT COUNT(*) FROM jobs WHERE owner = ?1 AND status IN ('queued', 'running')",
        params![owner],
        |r| r.get(0),
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// queued → running; false if the job was not queued (so it never runs twice at once).
pub fn mark_running(c: &Connection, id: &str) -> Result<bool, StorageError> {
    let changed = c.execute(
        "UPDATE jobs SET status = 'running', started_at = ?2, runs = runs + 1, progress = 0
         WHERE id = ?1 AND status = 'queued'",
        params![id, now_rfc3339()],
    )?;
    if changed == 1 {
        entered("running");
    }
    Ok(changed == 1)
}

/// The oldest queued job, now running; `None` when none is queued.
pub fn claim(c: &mut Connection) -> Result<Option<JobRecord>, StorageError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let oldest: Option<String> = tx
        .query_row(
            "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_unix, rowid LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let Some(id) = oldest else {
        return Ok(None);
    };
    let job = match mark_running(&tx, &id)? {
        true => get(&tx, &id)?,
        false => None,
    };
    tx.commit()?;
    Ok(job)
}

/// Record progress of a running job.
pub fn set_progress(c: &Connection, id: &str, progress: f64) -> Result<(), StorageError> {
    c.execute(
        "UPDATE jobs SET progress = ?2 WHERE id = ?1 AND status = 'running'",
        params![id, progress],
    )?;
    Ok(())
}

/// running → succeeded (the audio file is already in place).
pub fn mark_succeeded(c: &Connection, id: &str, audio_seconds: f64) -> Result<bool, StorageError> {
    let changed = c.execute(
        "UPDATE jobs SET status = 'succeeded', progress = 1, completed_at = ?2, completed_unix = ?3, audio_seconds = ?4
         WHERE id = ?1 AND status = 'running'",
        params![id, now_rfc3339(), unix_now(), audio_seconds],
    )?;
    if changed == 1 {
        entered("succeeded");
    }
    Ok(changed == 1)
}

/// running → failed with a reason.
pub fn mark_failed(c: &Connection, id: &str, error: &str) -> Result<bool, StorageError> {
    let changed = c.execute(
        "UPDATE jobs SET status = 'failed', completed_at = ?2, completed_unix = ?3, error = ?4
         WHERE id = ?1 AND status = 'running'",
        params![id, now_rfc3339(), unix_now(), error],
    )?;
    if changed == 1 {
        entered("failed");
    }
    Ok(changed == 1)
}

/// After a crash: jobs left running go back to the queue, except those that were already started
/// [`MAX_INTERRUPTED_STARTS`] times without finishing, which fail with [`QUARANTINED`]. Returns how many were
/// queued again.
pub fn requeue_running(c: &mut Connection) -> Result<usize, StorageError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let failed = {
        let mut statement = tx.prepare(
            "UPDATE jobs SET status = 'failed', completed_at = ?1, completed_unix = ?2, error = ?3
             WHERE status = 'running' AND runs >= ?4 RETURNING id",
        )?;
        let ids = statement
            .query_map(
                params![
                    now_rfc3339(),
                    unix_now(),
                    QUARANTINED,
                    MAX_INTERRUPTED_STARTS
                ],
                |r| r.get(0),
            )?
            .collect::<Result<Vec<String>, _>>()?;
        ids
    };
    let requeued = tx.execute(
        "UPDATE jobs SET status = 'queued', progress = 0 WHERE status = 'running'",
        [],
    )?;
    tx.commit()?;
    quarantined(&failed);
    Ok(requeued)
}

/// At a clean stop: jobs left running go back to the queue, and the start they were given is taken back (the
/// process stopped because it was asked to, not because of them). Returns how many.
pub fn release(c: &Connection) -> Result<usize, StorageError> {
    Ok(c.execute(
        "UPDATE jobs SET status = 'queued', progress = 0, runs = MAX(runs - 1, 0) WHERE status = 'running'",
        [],
    )?)
}

/// Ids of queued jobs, oldest first.
pub fn queued(c: &Connection) -> Result<Vec<String>, StorageError> {
    let mut statement =
        c.prepare("SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_unix, rowid")?;
    let ids = statement
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

/// Delete finished jobs completed before `before_unix`; returns their ids (for removing their audio).
pub fn delete_expired(c: &Connection, before_unix: i64) -> Result<Vec<String>, StorageError> {
    let mut statement = c.prepare(
        "DELETE FROM jobs WHERE status IN ('succeeded', 'failed') AND completed_unix < ?1 RETURNING id",
    )?;
    let ids = statement
        .query_map(params![before_unix], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}
