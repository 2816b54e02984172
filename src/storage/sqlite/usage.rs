//! What keys used, and their limits, in SQLite: a charge is one immediate transaction, so it reads the total
//! and the limit and adds to them with no other write between.

use rusqlite::{params, Connection, OptionalExtension};

use crate::storage::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};
use crate::storage::StorageError;

/// Count `charge` unless it takes the month's total past the key's limit.
pub fn charge(c: &mut Connection, charge: &Charge) -> Result<Charged, StorageError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let kind = charge.kind.as_str();
    let total: f64 = tx
        .query_row(
            "SELECT amount FROM usage_totals WHERE owner = ?1 AND period = ?2 AND kind = ?3",
            params![charge.owner, charge.period, kind],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0.0);
    let limit = match charge.kind.limit_column() {
        Some(column) => tx
            .query_row(
                &format!("SELECT {column} FROM key_limits WHERE owner = ?1"),
                params![charge.owner],
                |r| r.get::<_, Option<f64>>(0),
            )
            .optional()?
            .flatten(),
        None => None,
    };
    if let Some(limit) = limit {
        if charge.amount > 0.0 && total + charge.amount > limit {
            return Ok(Charged::OverLimit { total, limit });
        }
    }
    tx.execute(
        "INSERT INTO usage_totals (owner, period, kind, amount) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (owner, period, kind) DO UPDATE SET amount = amount + excluded.amount",
        params![charge.owner, charge.period, kind, charge.amount],
    )?;
    tx.execute(
        "INSERT INTO usage_daily (owner, day, kind, voice_id, amount) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (owner, day, kind, voice_id) DO UPDATE SET amount = amount + excluded.amount",
        params![
            charge.owner,
            charge.day,
            kind,
            charge.voice_id,
            charge.amount
        ],
    )?;
    tx.commit()?;
    Ok(Charged::Counted {
        total: total + charge.amount,
        limit,
    })
}

/// The month's total of each kind `owner` used.
pub fn totals(
    c: &Connection,
    owner: &str,
    period: &str,
) -> Result<Vec<(UsageKind, f64)>, StorageError> {
    let mut statement =
        c.prepare_cached("SELECT kind, amount FROM usage_totals WHERE owner = ?1 AND period = ?2")?;
    let rows = statement.query_map(params![owner, period], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
    })?;
    let mut totals = Vec::new();
    for row in rows {
        let (kind, amount) = row?;
        if let Some(kind) = UsageKind::named(&kind) {
            totals.push((kind, amount));
        }
    }
    Ok(totals)
}

/// `owner`'s use per day, kind and voice between two days (inclusive), oldest first.
pub fn daily(
    c: &Connection,
    owner: &str,
    from: &str,
    to: &str,
) -> Result<Vec<UsageRow>, StorageError> {
    let mut statement = c.prepare_cached(
        "SELECT day, kind, voice_id, amount FROM usage_daily
         WHERE owner = ?1 AND day >= ?2 AND day <= ?3 ORDER BY day, kind, voice_id",
    )?;
    let rows = statement.query_map(params![owner, from, to], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, f64>(3)?,
        ))
    })?;
    let mut usage = Vec::new();
    for row in rows {
        let (day, kind, voice_id, amount) = row?;
        if let Some(kind) = UsageKind::named(&kind) {
            usage.push(UsageRow {
                day,
                kind,
                voice_id,
                amount,
            });
        }
    }
    Ok(usage)
}

/// `owner`'s limits (none set: unlimited).
pub fn limits(c: &Connection, owner: &str) -> Result<KeyLimits, StorageError> {
    Ok(c.query_row(
        "SELECT character_limit, audio_seconds_limit FROM key_limits WHERE owner = ?1",
        params![owner],
        |r| {
            Ok(KeyLimits {
                characters: r.get(0)?,
                audio_seconds: r.get(1)?,
            })
        },
    )
    .optional()?
    .unwrap_or_default())
}

/// Set a stored key's limits; whether the key exists.
pub fn set_limits(c: &mut Connection, id: &str, limits: &KeyLimits) -> Result<bool, StorageError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let known: bool = tx
        .query_row("SELECT 1 FROM api_keys WHERE id = ?1", params![id], |_| {
            Ok(())
        })
        .optional()?
        .is_some();
    if known {
        tx.execute(
            "INSERT INTO key_limits (owner, character_limit, audio_seconds_limit) VALUES (?1, ?2, ?3)
             ON CONFLICT (owner) DO UPDATE SET character_limit = excluded.character_limit,
                 audio_seconds_limit = excluded.audio_seconds_limit",
            params![id, limits.characters, limits.audio_seconds],
        )?;
    }
    tx.commit()?;
    Ok(known)
}
