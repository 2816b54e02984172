//! Post-call webhooks as stored: each key's destination (its URL, signing secret, whether deliveries go out, and
//! how many in a row have failed) and a durable queue of events waiting to be delivered. An event leaves the
//! queue only once its receiver has taken it, so it is delivered at least once, across restarts and replicas; a
//! replica takes events for a while under a lease, so two replicas do not deliver one event at the same moment.
//!
//! The SQL lies in each engine's `webhooks` module; both pass the conformance suite.

use async_trait::async_trait;

use super::StorageError;

/// A key's webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    /// The key.
    pub owner: String,
    /// Where events go; empty: the operator's destination (`webhooks.url`).
    pub url: String,
    /// The secret events are signed with; empty with the operator's destination.
    pub secret: String,
    /// Whether deliveries go out (false once `MAX_FAILURES` in a row failed, until the key sets it again).
    pub enabled: bool,
    /// Deliveries that failed in a row.
    pub failures: i64,
    /// Why the last delivery failed.
    pub last_error: Option<String>,
}

/// An event waiting to be delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// `evt_…`, the same on every try.
    pub id: String,
    /// The key whose webhook it goes to.
    pub owner: String,
    /// `post_call_transcription`, `call_initiation_failure`.
    pub kind: String,
    /// The JSON body, as signed and sent.
    pub body: String,
    /// Tries so far.
    pub attempts: i64,
    /// Not tried again before this (milliseconds since the epoch).
    pub due_ms: i64,
}

/// Where webhooks and their events are kept: the engines implement it beside [`super::Store`].
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Set a key's webhook (enabled, no failures), replacing any before.
    async fn set_webhook(&self, row: &WebhookRow) -> Result<(), StorageError>;
    /// A key's webhook.
    async fn webhook(&self, owner: &str) -> Result<Option<WebhookRow>, StorageError>;
    /// Remove a key's webhook and its waiting events; whether it had one.
    async fn delete_webhook(&self, owner: &str) -> Result<bool, StorageError>;
    /// A delivery to `owner` was taken: its failures start over.
    async fn webhook_delivered(&self, owner: &str) -> Result<(), StorageError>;
    /// A delivery to `owner` failed: one more failure in a row, and the webhook is disabled at `disable_at`; the
    /// webhook as it now stands (a row is made for a key on the operator's destination).
    async fn webhook_failed(
        &self,
        owner: &str,
        error: &str,
        disable_at: i64,
    ) -> Result<WebhookRow, StorageError>;
    /// Queue an event; the owner's oldest waiting events go first when it would hold more than `max_per_owner`.
    async fn enqueue_event(
        &self,
        event: &EventRow,
        max_per_owner: usize,
    ) -> Result<(), StorageError>;
    /// Take up to `limit` events due at `now_ms` whose webhook is enabled (or that are on the operator's
    /// destination), oldest first, leased until `now_ms + lease_ms`.
    async fn claim_events(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StorageError>;
    /// An event was delivered: it leaves the queue.
    async fn event_delivered(&self, id: &str) -> Result<(), StorageError>;
    /// An event's try failed: tried again at `due_ms`.
    async fn event_retry(&self, id: &str, attempts: i64, due_ms: i64) -> Result<(), StorageError>;
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}
