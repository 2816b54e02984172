//! Cloned voices in SQLite: each owner's, created within a cap.

use rusqlite::{params, Connection, TransactionBehavior};

use crate::storage::{ClonedVoiceRecord, StorageError};

/// Store a new voice unless its owner already has `max` of them; whether it was stored. The count and the insert
/// are one write transaction, taken before the count, so concurrent requests can never pass the cap together.
pub fn insert_within(
    c: &mut Connection,
    voice: &ClonedVoiceRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if count_of(&tx, &voice.owner)? >= max {
        return Ok(false);
    }
    insert(&tx, voice)?;
    tx.commit()?;
    Ok(true)
}

/// How many voices `owner` has.
pub fn count_of(c: &Connection, owner: &str) -> Result<usize, StorageError> {
    let n: i64 = c.query_row(
        "SELECT COUNT(*) FROM cloned_voices WHERE owner = ?1",
        params![owner],
        |r| r.get(0),
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Store a new voice.
pub fn insert(c: &Connection, voice: &ClonedVoiceRecord) -> Result<(), StorageError> {
    c.execute(
        "INSERT INTO cloned_voices (voice_id, owner, name, profile, created_at, source_sha256, consent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            voice.voice_id,
            voice.owner,
            voice.name,
            voice.profile,
            voice.created_at,
            voice.source_sha256,
            voice.consent
        ],
    )?;
    Ok(())
}

const COLUMNS: &str = "voice_id, owner, name, profile, created_at, source_sha256, consent";

fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClonedVoiceRecord> {
    Ok(ClonedVoiceRecord {
        voice_id: r.get(0)?,
        owner: r.get(1)?,
        name: r.get(2)?,
        profile: r.get(3)?,
        created_at: r.get(4)?,
        source_sha256: r.get(5)?,
        consent: r.get(6)?,
    })
}

/// Every stored voice, oldest first (loaded at start-up).
pub fn all(c: &Connection) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
    let mut statement = c.prepare(&format!(
        "SELECT {COLUMNS} FROM cloned_voices ORDER BY created_at, voice_id"
    ))?;
    let rows = statement.query_map([], decode)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `owner`'s voices, oldest first.
pub fn of_owner(c: &Connection, owner: &str) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
    let mut statement = c.prepare(&format!(
        "SELECT {COLUMNS} FROM cloned_voices WHERE owner = ?1 ORDER BY created_at, voice_id"
    ))?;
    let rows = statement.query_map([owner], decode)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `owner`'s voice by id.
pub fn get(
    c: &Connection,
    owner: &str,
    voice_id: &str,
) -> Result<Option<ClonedVoiceRecord>, StorageError> {
    use rusqlite::OptionalExtension;
    Ok(c.query_row(
        &format!("SELECT {COLUMNS} FROM cloned_voices WHERE owner = ?1 AND voice_id = ?2"),
        params![owner, voice_id],
        decode,
    )
    .optional()?)
}

/// Delete `owner`'s voice; whether it existed.
pub fn delete(c: &Connection, owner: &str, voice_id: &str) -> Result<bool, StorageError> {
    let removed = c.execute(
        "DELETE FROM cloned_voices WHERE owner = ?1 AND voice_id = ?2",
        params![owner, voice_id],
    )?;
    Ok(removed > 0)
}
