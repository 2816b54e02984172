//! Agent conversations in SQLite: each turn takes its session under a lock with an expiry and writes it back;
//! idle sessions go, and each owner and the store hold a bounded number.

use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::storage::{SessionClaim, SessionLimits, SessionRecord, StorageError};

fn now_ms() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

fn ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 4)
}

/// Keep a new session, unlocked, first making room for it under `limits`.
pub fn insert(
    c: &mut Connection,
    session: &SessionRecord,
    limits: &SessionLimits,
) -> Result<(), StorageError> {
    let now = now_ms();
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "DELETE FROM agent_sessions WHERE used_ms < ?1",
        [now - ms(limits.idle)],
    )?;
    let own: i64 = tx.query_row(
        "SELECT COUNT(*) FROM agent_sessions WHERE owner = ?1",
        [&session.owner],
        |r| r.get(0),
    )?;
    let all: i64 = tx.query_row("SELECT COUNT(*) FROM agent_sessions", [], |r| r.get(0))?;
    let victim = if own >= limits.per_owner as i64 {
        Some("WHERE owner = ?1")
    } else if all >= limits.capacity as i64 {
        Some("WHERE ?1 IS NOT NULL")
    } else {
        None
    };
    if let Some(filter) = victim {
        tx.execute(
            &format!(
                "DELETE FROM agent_sessions WHERE id =
                 (SELECT id FROM agent_sessions {filter} ORDER BY used_ms LIMIT 1)"
            ),
            [&session.owner],
        )?;
    }
    tx.execute(
        "INSERT INTO agent_sessions (id, owner, scenario, state, used_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            session.id,
            session.owner,
            session.scenario,
            session.state,
            now
        ],
    )?;
    tx.commit()?;
    Ok(())
}

/// The scenario of `owner`'s live session `id`.
pub fn scenario(
    c: &Connection,
    owner: &str,
    id: &str,
    idle: Duration,
) -> Result<Option<String>, StorageError> {
    Ok(c.query_row(
        "SELECT scenario FROM agent_sessions WHERE id = ?1 AND owner = ?2 AND used_ms >= ?3",
        params![id, owner, now_ms() - ms(idle)],
        |r| r.get(0),
    )
    .optional()?)
}

/// Take `owner`'s live session `id` for a turn under `token`, for at most `hold`.
pub fn claim(
    c: &mut Connection,
    owner: &str,
    id: &str,
    idle: Duration,
    token: &str,
    hold: Duration,
) -> Result<SessionClaim, StorageError> {
    let now = now_ms();
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: Option<(String, String, Option<i64>)> = tx
        .query_row(
            "SELECT scenario, state, lock_until_ms FROM agent_sessions
             WHERE id = ?1 AND owner = ?2 AND used_ms >= ?3",
            params![id, owner, now - ms(idle)],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((scenario, state, lock_until)) = found else {
        return Ok(SessionClaim::Missing);
    };
    if lock_until.is_some_and(|until| until > now) {
        return Ok(SessionClaim::Busy);
    }
    tx.execute(
        "UPDATE agent_sessions SET lock_token = ?2, lock_until_ms = ?3, used_ms = ?4 WHERE id = ?1",
        params![id, token, now + ms(hold), now],
    )?;
    tx.commit()?;
    Ok(SessionClaim::Taken(SessionRecord {
        id: id.to_string(),
        owner: owner.to_string(),
        scenario,
        state,
    }))
}

/// Write back the session `token` holds (`state`, or as it was when `None`) and let it go; whether `token`
/// still held it.
pub fn release(
    c: &Connection,
    id: &str,
    token: &str,
    state: Option<&str>,
) -> Result<bool, StorageError> {
    let changed = c.execute(
        "UPDATE agent_sessions SET state = COALESCE(?3, state), lock_token = NULL, lock_until_ms = NULL,
         used_ms = ?4 WHERE id = ?1 AND lock_token = ?2",
        params![id, token, state, now_ms()],
    )?;
    Ok(changed > 0)
}
