//! Cloned voices and pronunciation dictionaries in PostgreSQL: each owner's records, created within a cap
//! that concurrent requests on any replica cannot pass together.

use super::{failed, prepared, PgStore};
use crate::storage::dictionaries::{decode, COLUMNS};
use crate::storage::{ClonedVoiceRecord, DictionaryRecord, StorageError};

/// Count `owner`'s rows of `table` under a lock held until the transaction ends; whether there are fewer
/// than `max`.
async fn room_for(
    tx: &deadpool_postgres::Transaction<'_>,
    table: &str,
    owner: &str,
    max: usize,
) -> Result<bool, StorageError> {
    tx.execute(
        &prepared(
            tx,
            "SELECT pg_advisory_xact_lock(hashtext($1 || ':' || $2))",
        )
        .await?,
        &[&table, &owner],
    )
    .await
    .map_err(failed)?;
    let count: i64 = tx
        .query_one(
            &prepared(
                tx,
                &format!("SELECT COUNT(*) FROM {table} WHERE owner = $1"),
            )
            .await?,
            &[&owner],
        )
        .await
        .map_err(failed)?
        .get(0);
    Ok(count < i64::try_from(max).unwrap_or(i64::MAX))
}

pub(super) async fn insert_voice_within(
    store: &PgStore,
    voice: &ClonedVoiceRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    if !room_for(&tx, "cloned_voices", &voice.owner, max).await? {
        return Ok(false);
    }
    tx.execute(
        &prepared(&tx, "INSERT INTO cloned_voices (voice_id, owner, name, profile, created_at, source_sha256, consent)
         VALUES ($1, $2, $3, $4, $5, $6, $7)").await?,
        &[
            &voice.voice_id,
            &voice.owner,
            &voice.name,
            &voice.profile,
            &voice.created_at,
            &voice.source_sha256,
            &voice.consent,
        ],
    )
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(true)
}

pub(super) async fn voice(
    store: &PgStore,
    owner: &str,
    voice_id: &str,
) -> Result<Option<ClonedVoiceRecord>, StorageError> {
    let sql =
        format!("SELECT {VOICE_COLUMNS} FROM cloned_voices WHERE owner = $1 AND voice_id = $2");
    let rows = store.rows(&sql, &[&owner, &voice_id]).await?;
    Ok(rows.first().map(voice_row))
}

const VOICE_COLUMNS: &str = "voice_id, owner, name, profile, created_at, source_sha256, consent";

fn voice_row(r: &tokio_postgres::Row) -> ClonedVoiceRecord {
    ClonedVoiceRecord {
        voice_id: r.get(0),
        owner: r.get(1),
        name: r.get(2),
        profile: r.get(3),
        created_at: r.get(4),
        source_sha256: r.get(5),
        consent: r.get(6),
    }
}

pub(super) async fn voices(store: &PgStore) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
    let sql = format!("SELECT {VOICE_COLUMNS} FROM cloned_voices ORDER BY created_at, voice_id");
    Ok(store.rows(&sql, &[]).await?.iter().map(voice_row).collect())
}

pub(super) async fn voices_of(
    store: &PgStore,
    owner: &str,
) -> Result<Vec<ClonedVoiceRecord>, StorageError> {
    let sql = format!(
        "SELECT {VOICE_COLUMNS} FROM cloned_voices WHERE owner = $1 ORDER BY created_at, voice_id"
    );
    Ok(store
        .rows(&sql, &[&owner])
        .await?
        .iter()
        .map(voice_row)
        .collect())
}

pub(super) async fn delete_voice(
    store: &PgStore,
    owner: &str,
    voice_id: &str,
) -> Result<bool, StorageError> {
    let sql = "DELETE FROM cloned_voices WHERE owner = $1 AND voice_id = $2";
    Ok(store.execute(sql, &[&owner, &voice_id]).await? > 0)
}

fn dictionary_row(r: &tokio_postgres::Row) -> Result<DictionaryRecord, StorageError> {
    let record = DictionaryRecord {
        id: r.get(0),
        owner: r.get(1),
        name: r.get(2),
        description: r.get(3),
        version_id: r.get(4),
        rules: Vec::new(),
        created_unix: r.get(6),
    };
    decode((record, r.get(5)))
}

pub(super) async fn insert_dictionary_within(
    store: &PgStore,
    dictionary: &DictionaryRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let rules = serde_json::to_string(&dictionary.rules)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(failed)?;
    if !room_for(&tx, "pronunciation_dictionaries", &dictionary.owner, max).await? {
        return Ok(false);
    }
    tx.execute(
        &prepared(&tx, "INSERT INTO pronunciation_dictionaries (id, owner, name, description, version_id, rules, created_unix)
         VALUES ($1, $2, $3, $4, $5, $6, $7)").await?,
        &[
            &dictionary.id,
            &dictionary.owner,
            &dictionary.name,
            &dictionary.description,
            &dictionary.version_id,
            &rules,
            &dictionary.created_unix,
        ],
    )
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(true)
}

pub(super) async fn dictionary(
    store: &PgStore,
    owner: &str,
    id: &str,
) -> Result<Option<DictionaryRecord>, StorageError> {
    let client = store.client().await?;
    let sql =
        format!("SELECT {COLUMNS} FROM pronunciation_dictionaries WHERE owner = $1 AND id = $2");
    client
        .query_opt(&prepared(&client, &sql).await?, &[&owner, &id])
        .await
        .map_err(failed)?
        .as_ref()
        .map(dictionary_row)
        .transpose()
}

pub(super) async fn dictionaries(
    store: &PgStore,
    owner: &str,
    offset: usize,
    limit: usize,
) -> Result<Vec<DictionaryRecord>, StorageError> {
    let client = store.client().await?;
    let sql = format!(
        "SELECT {COLUMNS} FROM pronunciation_dictionaries WHERE owner = $1
         ORDER BY created_unix DESC, seq DESC LIMIT $2 OFFSET $3"
    );
    let (limit, offset) = (
        i64::try_from(limit).unwrap_or(i64::MAX),
        i64::try_from(offset).unwrap_or(0),
    );
    let rows = client
        .query(&prepared(&client, &sql).await?, &[&owner, &limit, &offset])
        .await
        .map_err(failed)?;
    rows.iter().map(dictionary_row).collect()
}

pub(super) async fn delete_dictionary(
    store: &PgStore,
    owner: &str,
    id: &str,
) -> Result<bool, StorageError> {
    let sql = "DELETE FROM pronunciation_dictionaries WHERE owner = $1 AND id = $2";
    Ok(store.execute(sql, &[&owner, &id]).await? > 0)
}
