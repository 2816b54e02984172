//! Agent conversations in PostgreSQL, on the database's clock so that every replica agrees on what is idle and
//! whose turn lock has lapsed.

use std::time::Duration;

use super::{failed, prepared, PgStore};
use crate::storage::sessions::{SessionClaim, SessionLimits, SessionRecord};
use crate::storage::StorageError;

/// Any fixed number, the same in every replica: the lock under which sessions are counted and made.
const INSERT_LOCK: i64 = 0x5a07_5e55;

pub(super) async fn insert(
    store: &PgStore,
    session: &SessionRecord,
    limits: &SessionLimits,
) -> Result<(), StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    tx.execute(
        &prepared(&tx, "SELECT pg_advisory_xact_lock($1)").await?,
        &[&INSERT_LOCK],
    )
    .await
    .map_err(failed)?;
    tx.execute(
        &prepared(
            &tx,
            "DELETE FROM agent_sessions WHERE used_at < now() - make_interval(secs => $1)",
        )
        .await?,
        &[&limits.idle.as_secs_f64()],
    )
    .await
    .map_err(failed)?;
    let counts = tx
        .query_one(
            &prepared(
                &tx,
                "SELECT COUNT(*) FILTER (WHERE owner = $1), COUNT(*) FROM agent_sessions",
            )
            .await?,
            &[&session.owner],
        )
        .await
        .map_err(failed)?;
    let (own, all): (i64, i64) = (counts.get(0), counts.get(1));
    let victim = if own >= limits.per_owner as i64 {
        Some(
            "DELETE FROM agent_sessions WHERE id =
              (SELECT id FROM agent_sessions WHERE owner = $1 ORDER BY used_at LIMIT 1)",
        )
    } else if all >= limits.capacity as i64 {
        Some(
            "DELETE FROM agent_sessions WHERE id =
              (SELECT id FROM agent_sessions WHERE $1::text IS NOT NULL ORDER BY used_at LIMIT 1)",
        )
    } else {
        None
    };
    if let Some(sql) = victim {
        tx.execute(&prepared(&tx, sql).await?, &[&session.owner])
            .await
            .map_err(failed)?;
    }
    tx.execute(
        &prepared(&tx, "INSERT INTO agent_sessions (id, owner, scenario, state, used_at) VALUES ($1, $2, $3, $4, now())")
            .await?,
        &[&session.id, &session.owner, &session.scenario, &session.state],
    )
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)
}

pub(super) async fn scenario(
    store: &PgStore,
    owner: &str,
    id: &str,
    idle: Duration,
) -> Result<Option<String>, StorageError> {
    let rows = store
        .rows(
            "SELECT scenario FROM agent_sessions
             WHERE id = $1 AND owner = $2 AND used_at >= now() - make_interval(secs => $3)",
            &[&id, &owner, &idle.as_secs_f64()],
        )
        .await?;
    Ok(rows.first().map(|row| row.get(0)))
}

pub(super) async fn claim(
    store: &PgStore,
    owner: &str,
    id: &str,
    idle: Duration,
    token: &str,
    hold: Duration,
) -> Result<SessionClaim, StorageError> {
    // One statement: the row is taken when it is live, the caller's and not locked; otherwise the second
    // half tells a locked session from a missing one.
    let rows = store
        .rows(
            "WITH live AS (
                 SELECT id FROM agent_sessions
                 WHERE id = $1 AND owner = $2 AND used_at >= now() - make_interval(secs => $3)
             ), taken AS (
                 UPDATE agent_sessions SET lock_token = $4, lock_until = now() + make_interval(secs => $5),
                     used_at = now()
                 WHERE id IN (SELECT id FROM live) AND (lock_until IS NULL OR lock_until <= now())
                 RETURNING scenario, state
             )
             SELECT TRUE, scenario, state FROM taken
             UNION ALL SELECT FALSE, NULL, NULL FROM live WHERE NOT EXISTS (SELECT 1 FROM taken)",
            &[&id, &owner, &idle.as_secs_f64(), &token, &hold.as_secs_f64()],
        )
        .await?;
    Ok(match rows.first() {
        None => SessionClaim::Missing,
        Some(row) if row.get::<_, bool>(0) => SessionClaim::Taken(SessionRecord {
            id: id.to_string(),
            owner: owner.to_string(),
            scenario: row.get(1),
            state: row.get(2),
        }),
        Some(_) => SessionClaim::Busy,
    })
}

pub(super) async fn release(
    store: &PgStore,
    id: &str,
    token: &str,
    state: Option<&str>,
) -> Result<bool, StorageError> {
    let changed = store
        .execute(
            "UPDATE agent_sessions SET state = COALESCE($3, state), lock_token = NULL, lock_until = NULL,
                 used_at = now()
             WHERE id = $1 AND lock_token = $2",
            &[&id, &token, &state],
        )
        .await?;
    Ok(changed > 0)
}
