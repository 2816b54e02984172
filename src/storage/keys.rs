//! API keys: only SHA-256 hashes are stored; a key's id (derived from its hash) names its owner everywhere.

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::{now_rfc3339, StorageError};

/// A stored key (never the key itself).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    /// Stable id, `key_` + 16 hex digits of the hash.
    pub id: String,
    /// A label for operators.
    pub name: String,
    /// Hex SHA-256 of the key.
    pub hash: String,
    /// When it was created.
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

/// Hex SHA-256 of a key.
pub fn hash_key(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The id of the key with this hash.
pub fn key_id(hash: &str) -> String {
    format!("key_{}", &hash[..16.min(hash.len())])
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

/// Longest key name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A key name as stored: trimmed, 1 to [`MAX_NAME_CHARS`] characters, none of them a control character or an
/// invisible formatting character (see [`check_display_name`]). The reason, when it is refused.
pub fn check_name(name: &str) -> Result<String, String> {
    check_display_name("key name", name, MAX_NAME_CHARS)
}

/// A name shown in listings (of an API key, a pronunciation dictionary), as stored: trimmed, 1 to `max`
/// characters, none of them a control character or an invisible formatting character (line breaks, tabs,
/// escapes, bidirectional overrides), so that every listing shows it as one honest line. `what` names it in
/// the reason, when it is refused.
pub fn check_display_name(what: &str, name: &str, max: usize) -> Result<String, String> {
    let name = name.trim();
    let count = name.chars().count();
    if count == 0 {
        return Err(format!("a {what} cannot be empty"));
    }
    if count > max {
        return Err(format!(
            "a {what} has at most {max} characters; this one has {count}"
        ));
    }
    if let Some(bad) = name.chars().find(|&c| hidden(c)) {
        return Err(format!(
            "a {what} cannot contain control or invisible characters such as line breaks or tabs (found U+{:04X})",
            u32::from(bad)
        ));
    }
    Ok(name.to_string())
}

/// Control characters and the invisible ones that change how the text around them is shown.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// Store a new key's hash; returns its record.
pub fn insert(c: &Connection, name: &str, key: &str) -> Result<KeyRecord, StorageError> {
    let hash = hash_key(key);
    let record = KeyRecord {
        id: key_id(&hash),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_are_trimmed_single_line_and_short() {
        assert_eq!(check_name("  bank pilot ").as_deref(), Ok("bank pilot"));
        assert_eq!(
            check_name("Ofisi ya Mombasa – majaribio").as_deref(),
            Ok("Ofisi ya Mombasa – majaribio")
        );
        assert_eq!(check_name(&"a".repeat(64)).map(|n| n.len()), Ok(64));
        for bad in [
            "",
            "   ",
            "two\nlines",
            "tab\there",
            "esc\u{1b}[31m",
            "rtl\u{202e}txt",
            "zero\u{200b}width",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        let long = check_name(&"ü".repeat(65)).unwrap_err();
        assert!(long.contains("at most 64") && long.contains("65"), "{long}");
    }
}
