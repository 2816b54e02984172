//! API keys in SQLite: their hashes, the store's key secret, and a revision counted with every change.

use rusqlite::{params, Connection, OptionalExtension};

use crate::storage::keys::OWNED;
use crate::storage::{hash_key, key_id, now_rfc3339, KeyRecord, KeySecret, StorageError};

/// The store's key secret, made (and kept) the first time it is asked for; after that only read (a start on a
/// full disk writes nothing).
pub fn secret(c: &Connection) -> Result<KeySecret, StorageError> {
    let read = |c: &Connection| -> Result<Option<String>, StorageError> {
        Ok(
            c.query_row("SELECT secret FROM key_secret", [], |r| r.get(0))
                .optional()?,
        )
    };
    if let Some(stored) = read(c)? {
        return KeySecret::from_hex(&stored);
    }
    c.execute(
        "INSERT OR IGNORE INTO key_secret (only_row, secret) VALUES (1, ?1)",
        params![KeySecret::random().to_hex()],
    )?;
    let stored = read(c)?.ok_or_else(|| StorageError::Corrupt("key_secret has no row".into()))?;
    KeySecret::from_hex(&stored)
}

/// Hand everything kept under each `(old, new)` key id to the new id, keys included; how many rows moved.
pub fn adopt(c: &mut Connection, moves: &[(String, String)]) -> Result<usize, StorageError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut moved = 0;
    for (old, new) in moves.iter().filter(|(old, new)| old != new) {
        for table in OWNED {
            moved += tx.execute(
                &format!("UPDATE {table} SET owner = ?2 WHERE owner = ?1"),
                params![old, new],
            )?;
        }
        let renamed = tx.execute(
            "UPDATE api_keys SET id = ?2 WHERE id = ?1",
            params![old, new],
        )?;
        if renamed > 0 {
            changed(&tx)?;
        }
        moved += renamed;
    }
    tx.commit()?;
    Ok(moved)
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    Ok(KeyRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        hash: r.get(2)?,
        created_at: r.get(3)?,
        revoked_at: r.get(4)?,
    })
}

/// Store a new key's hash; returns its record.
pub fn insert(c: &Connection, name: &str, key: &str) -> Result<KeyRecord, StorageError> {
    let hash = hash_key(key);
    let record = KeyRecord {
        id: key_id(&secret(c)?, &hash),
        name: name.to_string(),
        hash,
        created_at: now_rfc3339(),
        revoked_at: None,
    };
    let tx = c.unchecked_transaction()?;
    tx.execute(
        "INSERT INTO api_keys (id, name, hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![record.id, record.name, record.hash, record.created_at],
    )?;
    changed(&tx)?;
    tx.commit()?;
    Ok(record)
}

/// Every key, revoked ones included, oldest first.
pub fn list(c: &Connection) -> Result<Vec<KeyRecord>, StorageError> {
    let mut statement = c.prepare(
        "SELECT id, name, hash, created_at, revoked_at FROM api_keys ORDER BY created_at, id",
    )?;
    let rows = statement
        .query_map([], row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Revoke a key by id; returns whether an active key was revoked.
pub fn revoke(c: &Connection, id: &str) -> Result<bool, StorageError> {
    let tx = c.unchecked_transaction()?;
    let revoked = tx.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![id, now_rfc3339()],
    )?;
    if revoked > 0 {
        changed(&tx)?;
    }
    tx.commit()?;
    Ok(revoked > 0)
}

/// Whether any key (revoked or not) was ever stored.
pub fn any(c: &Connection) -> Result<bool, StorageError> {
    Ok(c.query_row("SELECT id FROM api_keys LIMIT 1", [], |r| {
        r.get::<_, String>(0)
    })
    .optional()?
    .is_some())
}

/// Count a change to the keys, in the transaction that makes it.
fn changed(c: &Connection) -> Result<(), StorageError> {
    c.execute("UPDATE key_revision SET revision = revision + 1", [])?;
    Ok(())
}

/// A number that changes whenever the keys change, from this process or another (such as `sauti keys`); one
/// row read.
pub fn data_version(c: &Connection) -> Result<i64, StorageError> {
    Ok(c.query_row("SELECT revision FROM key_revision", [], |r| r.get(0))?)
}
