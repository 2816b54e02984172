//! Pronunciation dictionaries: each key's own, with the rules they were created with. A dictionary is never
//! edited in place, so its one version id names its rules for good.
//!
//! This module holds the record and its stored form, shared by both engines; the SQL lies in [`super::sqlite`]
//! and [`super::postgres`].

use super::StorageError;
use crate::tts::pronunciation::Rule;

/// One stored dictionary.
#[derive(Debug, Clone, PartialEq)]
pub struct DictionaryRecord {
    /// `pd_…`.
    pub id: String,
    /// Id of the key that made it (only that key sees or uses it).
    pub owner: String,
    /// Display name.
    pub name: String,
    /// Optional description.
    pub description: Option<String>,
    /// `pdv_…`: the version of its rules.
    pub version_id: String,
    /// The rules, in order.
    pub rules: Vec<Rule>,
    /// Unix seconds.
    pub created_unix: i64,
}

/// The dictionaries table's columns, in the order both engines read them.
pub(super) const COLUMNS: &str = "id, owner, name, description, version_id, rules, created_unix";

/// A dictionary as read: its rules decoded from their stored JSON.
pub(super) fn decode(
    (mut record, rules): (DictionaryRecord, String),
) -> Result<DictionaryRecord, StorageError> {
    record.rules =
        serde_json::from_str(&rules).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    Ok(record)
}
