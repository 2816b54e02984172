//! API keys: the `xi-api-key` header (or `Authorization: Bearer`, as OpenAI clients send it) checked against
//! SHA-256 hashes in constant time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName};

use sha2::{Digest, Sha256};

use crate::storage::{key_id, KeySecret, StorageError, Store};

/// The authenticated caller of a request. As an extractor: the caller the front admitted the request for
/// (carried in the request's scope, not in its extensions); 401 outside the authenticated API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Id of the caller's key; owns the jobs (and later voices) it creates.
    pub key_id: Arc<str>,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = crate::http::transport::problem::ApiError;

    async fn from_request_parts(
        _: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        crate::telemetry::request_scope::key_id()
            .map(|key_id| Caller { key_id })
            .ok_or_else(|| {
                crate::http::transport::problem::ApiError::unauthorized(
                    "this path needs an API key",
                )
            })
    }
}

/// Key ids by the SHA-256 of their key.
type Entries = std::collections::HashMap<[u8; 32], Arc<str>>;

/// Short-lived, single-use tokens that stand for a key on the realtime sockets (a browser cannot set headers
/// on a WebSocket, so it asks for a token over HTTP with its key and opens the socket with `?token=`).
#[derive(Default)]
pub struct SocketTokens(Mutex<std::collections::HashMap<String, (Arc<str>, Instant)>>);

/// Why a token was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Never minted, or already used.
    #[error("the token is not valid (unknown, or already used to open a session)")]
    Unknown,
    /// Past its time.
    #[error("the token has expired; ask POST /v1/voice-agent/sessions for another")]
    Expired,
    /// The key it stands for has been revoked since it was minted.
    #[error("the API key this token was made for has been revoked")]
    Revoked,
}

/// Expired tokens are remembered this long (to say "expired" rather than "unknown"), then forgotten.
const EXPIRED_KEPT: Duration = Duration::from_secs(3600);
/// The most tokens held at once (each key's use is also rate limited).
const MAX_TOKENS: usize = 100_000;

impl SocketTokens {
    /// A new token for `key_id`, usable once within `ttl`; `None` when too many are outstanding.
    pub fn mint(&self, key_id: Arc<str>, ttl: Duration) -> Option<String> {
        let mut tokens = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        tokens.retain(|_, (_, expires)| now < *expires + EXPIRED_KEPT);
        if tokens.len() >= MAX_TOKENS {
            return None;
        }
        let token = format!(
            "rt_{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        tokens.insert(token.clone(), (key_id, now + ttl));
        Some(token)
    }

    /// The caller a token stands for; the token stays usable until [`SocketTokens::spend`] (a request it
    /// authenticated may still be refused, and the client may retry with it).
    pub fn check(&self, token: &str) -> Result<Caller, TokenError> {
        let tokens = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (key_id, expires) = tokens.get(token).ok_or(TokenError::Unknown)?;
        if Instant::now() >= *expires {
            return Err(TokenError::Expired);
        }
        Ok(Caller {
            key_id: key_id.clone(),
        })
    }

    /// Use the token up, as its socket opens; refused when another request spent it first or it expired.
    pub fn spend(&self, token: &str) -> Result<(), TokenError> {
        let mut tokens = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (_, expires) = tokens.remove(token).ok_or(TokenError::Unknown)?;
        if Instant::now() >= expires {
            return Err(TokenError::Expired);
        }
        Ok(())
    }
}

/// The last valid key one connection presented and whose it is, so a client that sends the same key with every
/// request of a keep-alive connection has it hashed and looked up once (until the keys change). Belongs to
/// one connection; never shared between them.
#[derive(Default)]
pub struct KeyMemo(std::cell::RefCell<Option<Known>>);

struct Known {
    presented: Box<[u8]>,
    generation: u64,
    caller: Caller,
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    let differ = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    a.len() == b.len() && std::hint::black_box(differ) == 0
}

/// The accepted keys (hashes only), from configuration and the database.
#[derive(Clone, Default)]
pub struct KeyRing {
    /// Tokens minted for the realtime sockets.
    pub tokens: Arc<SocketTokens>,
    configured: Arc<Entries>,
    stored: Arc<RwLock<Entries>>,
    /// The database's data version when the stored keys were last read.
    loaded_at: Arc<Mutex<Option<i64>>>,
    /// Moves on whenever the stored keys are replaced: what a [`KeyMemo`] remembers holds only while it stands.
    generation: Arc<AtomicU64>,
}

/// The header that carries the API key.
const XI_API_KEY: HeaderName = HeaderName::from_static("xi-api-key");

/// The key a request presents: its `xi-api-key` header, else the token of `Authorization: Bearer TOKEN`.
pub fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(key) = headers.get(XI_API_KEY) {
        return key.to_str().ok();
    }
    let authorization = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = authorization.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl KeyRing {
    /// Keys from configuration (plaintext there, hashed here), their ids derived under the store's `secret`.
    pub fn new(configured: &[String], secret: &KeySecret) -> Self {
        let configured = configured
            .iter()
            .map(|k| {
                let hash = digest(k.trim());
                (hash, Arc::from(key_id(secret, &hex(&hash))))
            })
            .collect();
        Self {
            tokens: Arc::default(),
            configured: Arc::new(configured),
            stored: Arc::default(),
            loaded_at: Arc::default(),
            generation: Arc::default(),
        }
    }

    /// Reload the database's active keys (start-up, and whenever the database changed).
    pub async fn refresh(&self, db: &dyn Store) -> Result<usize, StorageError> {
        // The version is read first: a change that lands between the two reads is read again next time.
        let version = db.keys_version().await?;
        let records = db.keys().await?;
        let entries: Entries = records
            .into_iter()
            .filter(|r| r.revoked_at.is_none())
            .filter_map(|r| {
                let bytes: Vec<u8> = (0..r.hash.len() / 2)
                    .filter_map(|i| u8::from_str_radix(&r.hash[2 * i..2 * i + 2], 16).ok())
                    .collect();
                let hash: [u8; 32] = bytes.try_into().ok()?;
                Some((hash, Arc::from(r.id)))
            })
            .collect();
        let count = entries.len();
        if let Ok(mut stored) = self.stored.write() {
            *stored = entries;
        }
        // After the new keys are in place: a memo made against the old ones is not used again.
        self.generation.fetch_add(1, Ordering::AcqRel);
        if let Ok(mut loaded_at) = self.loaded_at.lock() {
            *loaded_at = Some(version);
        }
        Ok(count)
    }

    /// Reload the keys only if another process (`sauti keys`, another replica) changed them since they were
    /// read; whether they were reloaded. Cheap enough to run every second: one pragma or one row.
    pub async fn refresh_if_changed(&self, db: &dyn Store) -> Result<bool, StorageError> {
        let version = db.keys_version().await?;
        let loaded_at = self.loaded_at.lock().ok().and_then(|v| *v);
        if loaded_at == Some(version) {
            return Ok(false);
        }
        self.refresh(db).await?;
        Ok(true)
    }

    /// The caller a presented key belongs to, found by the key's SHA-256 (the digest is what is compared, so
    /// the lookup reveals nothing about the key through its timing).
    pub fn authenticate(&self, presented: &str) -> Option<Caller> {
        let hash = digest(presented);
        let id = match self.configured.get(&hash) {
            Some(id) => id.clone(),
            None => self.stored.read().ok()?.get(&hash)?.clone(),
        };
        Some(Caller { key_id: id })
    }

    /// [`KeyRing::authenticate`], remembering the answer in `memo` (one connection's): the same key presented
    /// again while the keys are unchanged is not hashed and looked up again.
    pub fn authenticate_with(&self, memo: &KeyMemo, presented: &str) -> Option<Caller> {
        // Read before the keys are: a memo is never newer than the keys it was made from.
        let generation = self.generation.load(Ordering::Acquire);
        if let Some(known) = memo.0.borrow().as_ref() {
            if known.generation == generation && same(&known.presented, presented.as_bytes()) {
                return Some(known.caller.clone());
            }
        }
        let caller = self.authenticate(presented)?;
        *memo.0.borrow_mut() = Some(Known {
            presented: presented.as_bytes().into(),
            generation,
            caller: caller.clone(),
        });
        Some(caller)
    }

    /// The caller a socket token stands for, while its key is still accepted (it is not spent here).
    pub fn check_token(&self, token: &str) -> Result<Caller, TokenError> {
        let caller = self.tokens.check(token)?;
        match self.holds(&caller.key_id) {
            true => Ok(caller),
            false => Err(TokenError::Revoked),
        }
    }

    /// Whether the key with id `key_id` is accepted now (configured, or stored and not revoked).
    pub fn holds(&self, key_id: &str) -> bool {
        self.configured.values().any(|id| &**id == key_id)
            || self
                .stored
                .read()
                .is_ok_and(|stored| stored.values().any(|id| &**id == key_id))
    }

    /// Whether any key is configured or stored.
    pub fn is_empty(&self) -> bool {
        self.configured.is_empty() && self.stored.read().map(|s| s.is_empty()).unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::presented_key;
    use axum::http::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), HeaderValue::from_static(v)))
            .collect()
    }

    #[test]
    fn the_key_comes_from_xi_api_key_first_then_a_bearer_token() {
        assert_eq!(presented_key(&headers(&[("xi-api-key", "k1")])), Some("k1"));
        assert_eq!(
            presented_key(&headers(&[("authorization", "Bearer k2")])),
            Some("k2")
        );
        assert_eq!(
            presented_key(&headers(&[("authorization", "bearer   k3 ")])),
            Some("k3")
        );
        assert_eq!(
            presented_key(&headers(&[
                ("xi-api-key", "k1"),
                ("authorization", "Bearer k2")
            ])),
            Some("k1")
        );
        assert_eq!(
            presented_key(&headers(&[("authorization", "Basic abc")])),
            None
        );
        assert_eq!(
            presented_key(&headers(&[("authorization", "Bearer ")])),
            None
        );
        assert_eq!(presented_key(&headers(&[])), None);
    }

    #[tokio::test]
    async fn a_connection_remembers_its_key_only_while_the_keys_are_unchanged() {
        use super::{KeyMemo, KeyRing};
        let dir = tempfile::tempdir().unwrap();
        let db = crate::storage::Database::open(dir.path()).unwrap();
        let store: &dyn crate::storage::Store = &db;
        let keys = KeyRing::new(
            &["configured-key".to_string()],
            &store.key_secret().await.unwrap(),
        );
        let stored = store.insert_key("pilot", "stored-key").await.unwrap();
        keys.refresh(store).await.unwrap();
        let memo = KeyMemo::default();

        // The same key twice, then another on the same connection, then the first again: each its own caller.
        let first = keys.authenticate_with(&memo, "stored-key").unwrap();
        assert_eq!(&*first.key_id, stored.id.as_str());
        assert_eq!(
            keys.authenticate_with(&memo, "stored-key"),
            Some(first.clone())
        );
        let other = keys.authenticate_with(&memo, "configured-key").unwrap();
        assert_ne!(other, first);
        assert_eq!(keys.authenticate_with(&memo, "stored-key"), Some(first));
        // A wrong key is refused, and a prefix or extension of the remembered one is a different key.
        assert_eq!(keys.authenticate_with(&memo, "stored-ke"), None);
        assert_eq!(keys.authenticate_with(&memo, "stored-keyy"), None);
        assert_eq!(keys.authenticate_with(&memo, "wrong"), None);

        // Revoked: the connection that presented it a moment ago is refused too once the keys are reloaded.
        assert!(keys.authenticate_with(&memo, "stored-key").is_some());
        assert!(store.revoke_key(&stored.id).await.unwrap());
        keys.refresh(store).await.unwrap();
        assert_eq!(keys.authenticate_with(&memo, "stored-key"), None);
        assert!(keys.authenticate_with(&memo, "configured-key").is_some());
    }
}
