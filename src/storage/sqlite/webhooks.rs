//! Post-call webhooks and their queue of events in SQLite.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::Database;
use crate::storage::webhooks::{now_ms, EventRow, WebhookRow, WebhookStore};
use crate::storage::StorageError;

fn webhook(r: &Row<'_>) -> rusqlite::Result<WebhookRow> {
    Ok(WebhookRow {
        owner: r.get(0)?,
        url: r.get(1)?,
        secret: r.get(2)?,
        enabled: r.get(3)?,
        failures: r.get(4)?,
        last_error: r.get(5)?,
    })
}

const WEBHOOK: &str =
    "SELECT owner, url, secret, enabled, failures, last_error FROM webhooks WHERE owner = ?1";

#[async_trait]
impl WebhookStore for Database {
    async fn set_webhook(&self, row: &WebhookRow) -> Result<(), StorageError> {
        let row = row.clone();
        self.run(move |c| {
            c.execute(
                "INSERT INTO webhooks (owner, url, secret, enabled, failures, last_error)
                 VALUES (?1, ?2, ?3, 1, 0, NULL)
                 ON CONFLICT (owner) DO UPDATE SET url = excluded.url, secret = excluded.secret,
                   enabled = 1, failures = 0, last_error = NULL",
                params![row.owner, row.url, row.secret],
            )?;
            Ok(())
        })
        .await
    }

    async fn webhook(&self, owner: &str) -> Result<Option<WebhookRow>, StorageError> {
        let owner = owner.to_string();
        self.run(move |c| Ok(c.query_row(WEBHOOK, [&owner], webhook).optional()?))
            .await
    }

    async fn delete_webhook(&self, owner: &str) -> Result<bool, StorageError> {
        let owner = owner.to_string();
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM webhook_events WHERE owner = ?1", [&owner])?;
            let removed = tx.execute("DELETE FROM webhooks WHERE owner = ?1", [&owner])?;
            tx.commit()?;
            Ok(removed > 0)
        })
        .await
    }

    async fn webhook_delivered(&self, owner: &str) -> Result<(), StorageError> {
        let owner = owner.to_string();
        self.run(move |c| {
            c.execute(
                "UPDATE webhooks SET failures = 0, last_error = NULL WHERE owner = ?1",
                [&owner],
            )?;
            Ok(())
        })
        .await
    }

    async fn webhook_failed(
        &self,
        owner: &str,
        error: &str,
        disable_at: i64,
    ) -> Result<WebhookRow, StorageError> {
        let (owner, error) = (owner.to_string(), error.to_string());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO webhooks (owner, url, secret, enabled, failures, last_error)
                 VALUES (?1, '', '', 1, 0, NULL) ON CONFLICT (owner) DO NOTHING",
                [&owner],
            )?;
            tx.execute(
                "UPDATE webhooks SET failures = failures + 1, last_error = ?2,
                   enabled = CASE WHEN failures + 1 >= ?3 THEN 0 ELSE enabled END
                 WHERE owner = ?1",
                params![owner, error, disable_at],
            )?;
            let row = tx.query_row(WEBHOOK, [&owner], webhook)?;
            tx.commit()?;
            Ok(row)
        })
        .await
    }

    async fn enqueue_event(
        &self,
        event: &EventRow,
        max_per_owner: usize,
    ) -> Result<(), StorageError> {
        let event = event.clone();
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "DELETE FROM webhook_events WHERE id IN (
                   SELECT id FROM webhook_events WHERE owner = ?1
                   ORDER BY queued_ms DESC, id DESC LIMIT -1 OFFSET ?2)",
                params![event.owner, max_per_owner.saturating_sub(1) as i64],
            )?;
            tx.execute(
                "INSERT INTO webhook_events (id, owner, kind, body, attempts, due_ms, queued_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
                params![
                    event.id,
                    event.owner,
                    event.kind,
                    event.body,
                    event.attempts,
                    event.due_ms,
                    now_ms()
                ],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StorageError> {
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let events = {
                let mut statement = tx.prepare(
                    "SELECT e.id, e.owner, e.kind, e.body, e.attempts, e.due_ms FROM webhook_events e
                     LEFT JOIN webhooks w ON w.owner = e.owner
                     WHERE e.due_ms <= ?1 AND (w.owner IS NULL OR w.enabled)
                     ORDER BY e.due_ms, e.queued_ms LIMIT ?2",
                )?;
                let rows = statement.query_map(params![now, limit as i64], |r| {
                    Ok(EventRow {
                        id: r.get(0)?,
                        owner: r.get(1)?,
                        kind: r.get(2)?,
                        body: r.get(3)?,
                        attempts: r.get(4)?,
                        due_ms: r.get(5)?,
                    })
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for event in &events {
                tx.execute(
                    "UPDATE webhook_events SET due_ms = ?2 WHERE id = ?1",
                    params![event.id, now + lease_ms],
                )?;
            }
            tx.commit()?;
            Ok(events)
        })
        .await
    }

    async fn event_delivered(&self, id: &str) -> Result<(), StorageError> {
        let id = id.to_string();
        self.run(move |c| {
            c.execute("DELETE FROM webhook_events WHERE id = ?1", [&id])?;
            Ok(())
        })
        .await
    }

    async fn event_retry(&self, id: &str, attempts: i64, due_ms: i64) -> Result<(), StorageError> {
        let id = id.to_string();
        self.run(move |c| {
            c.execute(
                "UPDATE webhook_events SET attempts = ?2, due_ms = ?3 WHERE id = ?1",
                params![id, attempts, due_ms],
            )?;
            Ok(())
        })
        .await
    }
}
