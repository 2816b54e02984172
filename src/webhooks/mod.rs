//! Post-call webhooks: when a call ends, its record goes to the key's receiver as a `post_call_transcription`
//! event, and a call that could not start as `call_initiation_failure`, each signed as ElevenLabs signs them
//! (`ElevenLabs-Signature: t=TIMESTAMP,v0=HEX(HMAC-SHA256(secret, "TIMESTAMP.BODY"))`). Events wait in a durable
//! queue in the store and are delivered by a loop beside the calls ([`deliver`]): retried with a growing pause,
//! at least once each (with a stable id, `event_id` and the `Sauti-Event-Id` header), across restarts; after
//! `webhooks.max_failures` failures in a row the key's webhook is disabled until the key sets it again. A
//! destination on a loopback, private or link-local address is refused unless the operator allows them.

pub mod deliver;
pub mod destination;

use std::sync::Arc;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::config::WebhookSettings;
use crate::storage::{EventRow, Storage, StorageError, WebhookRow};

/// The events a webhook receives.
pub const POST_CALL_TRANSCRIPTION: &str = "post_call_transcription";
/// A call that could not start.
pub const CALL_INITIATION_FAILURE: &str = "call_initiation_failure";

/// The service's webhooks.
#[derive(Clone)]
pub struct Webhooks {
    /// Where webhooks and their queue are kept.
    pub store: Storage,
    /// `[webhooks]`.
    pub settings: Arc<WebhookSettings>,
    /// Wakes the delivery loop when an event is queued.
    pub(crate) queued: Arc<tokio::sync::Notify>,
}

/// Where a key's events go, and with what secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The receiver.
    pub url: String,
    /// The signing secret.
    pub secret: String,
}

/// `ElevenLabs-Signature` for `body` sent at `timestamp`.
pub fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(format!("{timestamp}.{body}").as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t={timestamp},v0={hex}")
}

/// A new signing secret.
pub fn new_secret() -> String {
    let bytes: [u8; 24] = rand::random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("whsec_{hex}")
}

impl Webhooks {
    /// Webhooks kept in `store`.
    pub fn new(store: Storage, settings: WebhookSettings) -> Self {
        Self {
            store,
            settings: Arc::new(settings),
            queued: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Where `owner`'s events go now: its own webhook, else the operator's; none while disabled.
    pub fn destination(&self, row: Option<&WebhookRow>) -> Option<Destination> {
        if row.is_some_and(|r| !r.enabled) {
            return None;
        }
        match row.filter(|r| !r.url.is_empty()) {
            Some(row) => Some(Destination {
                url: row.url.clone(),
                secret: row.secret.clone(),
            }),
            None => (!self.settings.url.is_empty()).then(|| Destination {
                url: self.settings.url.clone(),
                secret: self.settings.secret.clone(),
            }),
        }
    }

    /// Queue an event of `kind` for `owner`'s webhook, if it has one that is enabled.
    pub async fn send(&self, owner: &str, kind: &str, data: Value) {
        let row = match self.store.webhook(owner).await {
            Ok(row) => row,
            Err(error) => return tracing::warn!(%error, "a webhook could not be looked up"),
        };
        if self.destination(row.as_ref()).is_none() {
            return;
        }
        let id = format!("evt_{}", uuid::Uuid::new_v4().simple());
        let body = json!({
            "type": kind,
            "event_id": id,
            "event_timestamp": crate::storage::unix_now(),
            "data": data,
        });
        let event = EventRow {
            id,
            owner: owner.to_string(),
            kind: kind.to_string(),
            body: body.to_string(),
            attempts: 0,
            due_ms: crate::storage::webhooks::now_ms(),
        };
        match self
            .store
            .enqueue_event(&event, self.settings.max_queued_per_key)
            .await
        {
            Ok(()) => self.queued.notify_one(),
            Err(error) => tracing::warn!(%error, kind, "a webhook event could not be queued"),
        }
    }

    /// Set `owner`'s webhook, once its destination is one the service may reach; the secret it signs with.
    pub async fn set(
        &self,
        owner: &str,
        url: &str,
        secret: Option<String>,
    ) -> Result<String, SetError> {
        destination::check(url, self.settings.allow_private_destinations)
            .await
            .map_err(SetError::Refused)?;
        let secret = secret.unwrap_or_else(new_secret);
        let row = WebhookRow {
            owner: owner.to_string(),
            url: url.to_string(),
            secret: secret.clone(),
            enabled: true,
            failures: 0,
            last_error: None,
        };
        self.store
            .set_webhook(&row)
            .await
            .map_err(SetError::Storage)?;
        self.queued.notify_one();
        Ok(secret)
    }
}

/// Why a webhook was not set.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// The destination may not be used.
    #[error("{0}")]
    Refused(String),
    /// The store failed.
    #[error(transparent)]
    Storage(StorageError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_hmac_sha256_of_the_timestamp_and_body() {
        // Computed apart with Python's hmac module.
        let body = r#"{"type":"post_call_transcription"}"#;
        assert_eq!(
            signature("Jefe", 1_764_000_000, body),
            "t=1764000000,v0=431edd1d40503a342112501f6aeb2f62ede6b65a884ceb16b1691a365544e901"
        );
        assert!(new_secret().starts_with("whsec_") && new_secret().len() == 54);
    }
}
