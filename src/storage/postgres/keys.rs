//! API keys in PostgreSQL: their hashes, the key secret every replica derives key ids under, and the hand-over
//! of data kept under the ids of earlier releases.

use super::{failed, prepared, PgStore};
use crate::storage::keys::OWNED;
use crate::storage::{hash_key, key_id, now_rfc3339, KeyRecord, KeySecret, StorageError};

/// Tell every replica that the keys changed (in the transaction that changes them).
async fn bump_key_revision(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StorageError> {
    tx.execute(
        &prepared(tx, "UPDATE key_revision SET revision = revision + 1").await?,
        &[],
    )
    .await
    .map_err(failed)?;
    Ok(())
}

pub(super) async fn insert(
    store: &PgStore,
    name: &str,
    key: &str,
) -> Result<KeyRecord, StorageError> {
    let hash = hash_key(key);
    let record = KeyRecord {
        id: key_id(&secret(store).await?, &hash),
        name: name.to_string(),
        hash,
        created_at: now_rfc3339(),
        revoked_at: None,
    };
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    tx.execute(
        &prepared(
            &tx,
            "INSERT INTO api_keys (id, name, hash, created_at) VALUES ($1, $2, $3, $4)",
        )
        .await?,
        &[&record.id, &record.name, &record.hash, &record.created_at],
    )
    .await
    .map_err(failed)?;
    bump_key_revision(&tx).await?;
    tx.commit().await.map_err(failed)?;
    Ok(record)
}

pub(super) async fn list(store: &PgStore) -> Result<Vec<KeyRecord>, StorageError> {
    let sql = "SELECT id, name, hash, created_at, revoked_at FROM api_keys ORDER BY created_at, id";
    let rows = store.rows(sql, &[]).await?;
    Ok(rows
        .iter()
        .map(|r| KeyRecord {
            id: r.get(0),
            name: r.get(1),
            hash: r.get(2),
            created_at: r.get(3),
            revoked_at: r.get(4),
        })
        .collect())
}

pub(super) async fn revoke(store: &PgStore, id: &str) -> Result<bool, StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    let changed = tx
        .execute(
            &prepared(
                &tx,
                "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
            )
            .await?,
            &[&id, &now_rfc3339()],
        )
        .await
        .map_err(failed)?;
    if changed > 0 {
        bump_key_revision(&tx).await?;
    }
    tx.commit().await.map_err(failed)?;
    Ok(changed > 0)
}

/// The key secret, made by whichever replica asks first; every replica then reads that one.
pub(super) async fn secret(store: &PgStore) -> Result<KeySecret, StorageError> {
    let read = "SELECT secret FROM key_secret";
    if let Some(row) = store.rows(read, &[]).await?.first() {
        return KeySecret::from_hex(&row.get::<_, String>(0));
    }
    let made = KeySecret::random().to_hex();
    store
        .execute(
            "INSERT INTO key_secret (secret) VALUES ($1) ON CONFLICT DO NOTHING",
            &[&made],
        )
        .await?;
    let rows = store.rows(read, &[]).await?;
    let stored: String = rows
        .first()
        .map(|r| r.get(0))
        .ok_or_else(|| StorageError::Corrupt("key_secret has no row".into()))?;
    KeySecret::from_hex(&stored)
}

pub(super) async fn adopt(
    store: &PgStore,
    moves: &[(String, String)],
) -> Result<usize, StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    let mut moved = 0;
    for (old, new) in moves.iter().filter(|(old, new)| old != new) {
        for table in OWNED {
            let sql = format!("UPDATE {table} SET owner = $2 WHERE owner = $1");
            moved += tx
                .execute(&prepared(&tx, &sql).await?, &[old, new])
                .await
                .map_err(failed)?;
        }
        let renamed = tx
            .execute(
                &prepared(&tx, "UPDATE api_keys SET id = $2 WHERE id = $1").await?,
                &[old, new],
            )
            .await
            .map_err(failed)?;
        if renamed > 0 {
            bump_key_revision(&tx).await?;
        }
        moved += renamed;
    }
    tx.commit().await.map_err(failed)?;
    Ok(moved as usize)
}
