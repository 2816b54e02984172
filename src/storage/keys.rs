//! API keys: only SHA-256 hashes are stored. A key's id names its owner everywhere (jobs, voices, dictionaries,
//! conversations) and appears in logs, so it must not let anyone test a guessed key against it: it is an
//! HMAC-SHA256 of the key's hash under the store's key secret, 32 random bytes made once per store and kept
//! in it (every replica sharing a PostgreSQL reads the same secret, so every replica derives the same id).
//! Ids of earlier releases were the unsalted hash's first 64 bits; data kept under them is handed to the new
//! ids at start-up ([`crate::storage::Store::adopt_key_ids`]).
//!
//! This module holds what both engines share: the records, the secret, how ids are derived and names checked.
//! The SQL lies in [`super::sqlite`] and [`super::postgres`].

use sha2::{Digest, Sha256};

use super::StorageError;

/// A stored key (never the key itself).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    /// Stable id, `key_` + 16 hex digits of the hash's HMAC under the key secret.
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

/// The store's secret that key ids are derived under. Never logged.
#[derive(Clone, PartialEq, Eq)]
pub struct KeySecret([u8; 32]);

impl std::fmt::Debug for KeySecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySecret(..)")
    }
}

impl KeySecret {
    /// A new random secret.
    pub fn random() -> Self {
        Self(rand::random())
    }

    /// The secret as stored: 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// A secret as stored, or why it cannot be read.
    pub fn from_hex(text: &str) -> Result<Self, StorageError> {
        let corrupt = || StorageError::Corrupt("the key secret is not 64 hex digits".into());
        if text.len() != 64 || !text.is_ascii() {
            return Err(corrupt());
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| corrupt())?;
        }
        Ok(Self(bytes))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex SHA-256 of a key.
pub fn hash_key(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The id of the key with this (hex) hash: `key_` + 16 hex digits of HMAC-SHA256(secret, hash).
pub fn key_id(secret: &KeySecret, hash: &str) -> String {
    format!(
        "key_{}",
        &hex(&hmac_sha256(&secret.0, hash.as_bytes()))[..16]
    )
}

/// The id earlier releases gave the key with this hash (the hash's first 16 hex digits): only to find data
/// kept under it.
pub fn legacy_key_id(hash: &str) -> String {
    format!("key_{}", &hash[..16.min(hash.len())])
}

/// Tables whose `owner` column holds a key id.
pub(super) const OWNED: [&str; 10] = [
    "jobs",
    "call_records",
    "webhooks",
    "webhook_events",
    "cloned_voices",
    "pronunciation_dictionaries",
    "agent_sessions",
    "key_limits",
    "usage_totals",
    "usage_daily",
];

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

/// Hand what earlier releases kept under a key's unkeyed id (the configured keys', given as configured, and the
/// stored keys') to its id under `secret`; how many rows moved. Run at every start, before anything is served:
/// data an older replica wrote meanwhile is handed over at the next start.
pub async fn adopt_earlier_ids(
    store: &dyn super::Store,
    secret: &KeySecret,
    configured: &[String],
) -> Result<usize, StorageError> {
    let mut moves: Vec<(String, String)> = configured
        .iter()
        .map(|key| {
            let hash = hash_key(key.trim());
            (legacy_key_id(&hash), key_id(secret, &hash))
        })
        .collect();
    moves.extend(
        store
            .keys()
            .await?
            .into_iter()
            .map(|record| (record.id, key_id(secret, &record.hash))),
    );
    moves.retain(|(old, new)| old != new);
    moves.sort();
    moves.dedup();
    if moves.is_empty() {
        return Ok(0);
    }
    store.adopt_key_ids(&moves).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn key_ids_depend_on_the_secret_and_not_on_the_bare_hash() {
        let hash = hash_key("sk_sauti_weak");
        let (a, b) = (KeySecret::random(), KeySecret::random());
        assert_eq!(key_id(&a, &hash), key_id(&a.clone(), &hash));
        assert_ne!(key_id(&a, &hash), key_id(&b, &hash));
        assert_ne!(key_id(&a, &hash), legacy_key_id(&hash));
        assert_eq!(key_id(&a, &hash).len(), 20);
        assert_eq!(KeySecret::from_hex(&a.to_hex()).unwrap(), a);
        assert!(KeySecret::from_hex("zz").is_err());
        assert_eq!(format!("{a:?}"), "KeySecret(..)");
    }

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
