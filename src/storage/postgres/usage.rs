//! What keys used, and their limits, in PostgreSQL. A charge locks its key's total for the month and kind
//! (`SELECT … FOR UPDATE`, the row made first if it is the month's first use), so charges of one key from every
//! replica are counted one after the other: the limit is checked against the total as it stands.

use super::{failed, prepared, PgStore};
use crate::storage::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};
use crate::storage::StorageError;

pub(super) async fn charge(store: &PgStore, charge: &Charge) -> Result<Charged, StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    let kind = charge.kind.as_str();
    tx.execute(
        &prepared(
            &tx,
            "INSERT INTO usage_totals (owner, period, kind, amount) VALUES ($1, $2, $3, 0)
             ON CONFLICT (owner, period, kind) DO NOTHING",
        )
        .await?,
        &[&charge.owner, &charge.period, &kind],
    )
    .await
    .map_err(failed)?;
    let total: f64 = tx
        .query_one(
            &prepared(
                &tx,
                "SELECT amount FROM usage_totals WHERE owner = $1 AND period = $2 AND kind = $3
                 FOR UPDATE",
            )
            .await?,
            &[&charge.owner, &charge.period, &kind],
        )
        .await
        .map_err(failed)?
        .get(0);
    let limit = match charge.kind.limit_column() {
        Some(column) => {
            let sql = format!("SELECT {column}::DOUBLE PRECISION FROM key_limits WHERE owner = $1");
            tx.query_opt(&prepared(&tx, &sql).await?, &[&charge.owner])
                .await
                .map_err(failed)?
                .and_then(|row| row.get::<_, Option<f64>>(0))
        }
        None => None,
    };
    if let Some(limit) = limit {
        if charge.amount > 0.0 && total + charge.amount > limit {
            // Nothing written but the month's empty total, which is harmless; the lock goes with the rollback.
            tx.rollback().await.map_err(failed)?;
            return Ok(Charged::OverLimit { total, limit });
        }
    }
    tx.execute(
        &prepared(
            &tx,
            "UPDATE usage_totals SET amount = amount + $4 WHERE owner = $1 AND period = $2 AND kind = $3",
        )
        .await?,
        &[&charge.owner, &charge.period, &kind, &charge.amount],
    )
    .await
    .map_err(failed)?;
    tx.execute(
        &prepared(
            &tx,
            "INSERT INTO usage_daily (owner, day, kind, voice_id, amount) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (owner, day, kind, voice_id)
             DO UPDATE SET amount = usage_daily.amount + EXCLUDED.amount",
        )
        .await?,
        &[
            &charge.owner,
            &charge.day,
            &kind,
            &charge.voice_id,
            &charge.amount,
        ],
    )
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(Charged::Counted {
        total: total + charge.amount,
        limit,
    })
}

pub(super) async fn totals(
    store: &PgStore,
    owner: &str,
    period: &str,
) -> Result<Vec<(UsageKind, f64)>, StorageError> {
    let rows = store
        .rows(
            "SELECT kind, amount FROM usage_totals WHERE owner = $1 AND period = $2",
            &[&owner, &period],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|row| Some((UsageKind::named(row.get(0))?, row.get(1))))
        .collect())
}

pub(super) async fn daily(
    store: &PgStore,
    owner: &str,
    from: &str,
    to: &str,
) -> Result<Vec<UsageRow>, StorageError> {
    let rows = store
        .rows(
            "SELECT day, kind, voice_id, amount FROM usage_daily
             WHERE owner = $1 AND day >= $2 AND day <= $3 ORDER BY day, kind, voice_id",
            &[&owner, &from, &to],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|row| {
            Some(UsageRow {
                day: row.get(0),
                kind: UsageKind::named(row.get(1))?,
                voice_id: row.get(2),
                amount: row.get(3),
            })
        })
        .collect())
}

pub(super) async fn limits(store: &PgStore, owner: &str) -> Result<KeyLimits, StorageError> {
    let rows = store
        .rows(
            "SELECT character_limit, audio_seconds_limit FROM key_limits WHERE owner = $1",
            &[&owner],
        )
        .await?;
    Ok(rows
        .first()
        .map(|row| KeyLimits {
            characters: row.get(0),
            audio_seconds: row.get(1),
        })
        .unwrap_or_default())
}

pub(super) async fn set_limits(
    store: &PgStore,
    id: &str,
    limits: &KeyLimits,
) -> Result<bool, StorageError> {
    let changed = store
        .execute(
            "INSERT INTO key_limits (owner, character_limit, audio_seconds_limit)
             SELECT id, $2, $3 FROM api_keys WHERE id = $1
             ON CONFLICT (owner) DO UPDATE SET character_limit = EXCLUDED.character_limit,
                 audio_seconds_limit = EXCLUDED.audio_seconds_limit",
            &[&id, &limits.characters, &limits.audio_seconds],
        )
        .await?;
    Ok(changed > 0)
}
