//! Pronunciation dictionaries in SQLite: each owner's, created within a cap, never edited in place.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::storage::dictionaries::{decode, COLUMNS};
use crate::storage::{DictionaryRecord, StorageError};

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(DictionaryRecord, String)> {
    Ok((
        DictionaryRecord {
            id: r.get(0)?,
            owner: r.get(1)?,
            name: r.get(2)?,
            description: r.get(3)?,
            version_id: r.get(4)?,
            rules: Vec::new(),
            created_unix: r.get(6)?,
        },
        r.get(5)?,
    ))
}

/// Store a new dictionary unless its owner already has `max`; whether it was stored. The count and the insert
/// are one write transaction, so concurrent requests can never pass the cap together.
pub fn insert_within(
    c: &mut Connection,
    dictionary: &DictionaryRecord,
    max: usize,
) -> Result<bool, StorageError> {
    let rules = serde_json::to_string(&dictionary.rules)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if count_of(&tx, &dictionary.owner)? >= max {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO pronunciation_dictionaries (id, owner, name, description, version_id, rules, created_unix)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            dictionary.id,
            dictionary.owner,
            dictionary.name,
            dictionary.description,
            dictionary.version_id,
            rules,
            dictionary.created_unix
        ],
    )?;
    tx.commit()?;
    Ok(true)
}

/// How many dictionaries `owner` has.
pub fn count_of(c: &Connection, owner: &str) -> Result<usize, StorageError> {
    let n: i64 = c.query_row(
        "SELECT COUNT(*) FROM pronunciation_dictionaries WHERE owner = ?1",
        params![owner],
        |r| r.get(0),
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// `owner`'s dictionary by id (another key's is not found).
pub fn get(
    c: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<DictionaryRecord>, StorageError> {
    let sql =
        format!("SELECT {COLUMNS} FROM pronunciation_dictionaries WHERE owner = ?1 AND id = ?2");
    c.query_row(&sql, params![owner, id], row)
        .optional()?
        .map(decode)
        .transpose()
}

/// `owner`'s dictionaries, newest first: `limit` of them after skipping `offset`.
pub fn list(
    c: &Connection,
    owner: &str,
    offset: usize,
    limit: usize,
) -> Result<Vec<DictionaryRecord>, StorageError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM pronunciation_dictionaries WHERE owner = ?1
         ORDER BY created_unix DESC, rowid DESC LIMIT ?2 OFFSET ?3"
    );
    let mut statement = c.prepare(&sql)?;
    let rows = statement
        .query_map(
            params![
                owner,
                i64::try_from(limit).unwrap_or(i64::MAX),
                i64::try_from(offset).unwrap_or(0)
            ],
            row,
        )?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(decode).collect()
}

/// Delete `owner`'s dictionary; whether it existed.
pub fn delete(c: &Connection, owner: &str, id: &str) -> Result<bool, StorageError> {
    let removed = c.execute(
        "DELETE FROM pronunciation_dictionaries WHERE owner = ?1 AND id = ?2",
        params![owner, id],
    )?;
    Ok(removed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::pronunciation::Rule;

    fn record(id: &str, owner: &str, unix: i64) -> DictionaryRecord {
        DictionaryRecord {
            id: id.into(),
            owner: owner.into(),
            name: "Majina".into(),
            description: None,
            version_id: format!("v_{id}"),
            rules: vec![Rule::alias("Sheng", "shengi")],
            created_unix: unix,
        }
    }

    #[test]
    fn dictionaries_are_kept_per_owner_within_a_cap() {
        let mut c = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut c).unwrap();
        assert!(insert_within(&mut c, &record("pd_1", "a", 1), 2).unwrap());
        assert!(insert_within(&mut c, &record("pd_2", "a", 2), 2).unwrap());
        assert!(!insert_within(&mut c, &record("pd_3", "a", 3), 2).unwrap());
        assert!(insert_within(&mut c, &record("pd_4", "b", 3), 2).unwrap());
        assert_eq!(get(&c, "a", "pd_1").unwrap(), Some(record("pd_1", "a", 1)));
        assert_eq!(get(&c, "b", "pd_1").unwrap(), None);
        let newest_first: Vec<String> = list(&c, "a", 0, 10)
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(newest_first, ["pd_2", "pd_1"]);
        assert_eq!(list(&c, "a", 1, 10).unwrap().len(), 1);
        assert!(!delete(&c, "b", "pd_1").unwrap());
        assert!(delete(&c, "a", "pd_1").unwrap());
        assert_eq!(count_of(&c, "a").unwrap(), 1);
    }
}
