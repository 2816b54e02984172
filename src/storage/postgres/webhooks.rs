//! Post-call webhooks and their queue of events in PostgreSQL: replicas take due events with `SKIP LOCKED`, each
//! under a lease, so two never deliver one event at the same moment.

use async_trait::async_trait;

use super::{failed, prepared, PgStore};
use crate::storage::webhooks::{now_ms, EventRow, WebhookRow, WebhookStore};
use crate::storage::StorageError;

const WEBHOOK: &str =
    "SELECT owner, url, secret, enabled, failures, last_error FROM webhooks WHERE owner = $1";

fn webhook(r: &tokio_postgres::Row) -> WebhookRow {
    WebhookRow {
        owner: r.get(0),
        url: r.get(1),
        secret: r.get(2),
        enabled: r.get(3),
        failures: r.get(4),
        last_error: r.get(5),
    }
}

#[async_trait]
impl WebhookStore for PgStore {
    async fn set_webhook(&self, row: &WebhookRow) -> Result<(), StorageError> {
        let sql = "INSERT INTO webhooks (owner, url, secret, enabled, failures, last_error)
                   VALUES ($1, $2, $3, TRUE, 0, NULL)
                   ON CONFLICT (owner) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret,
                     enabled = TRUE, failures = 0, last_error = NULL";
        self.execute(sql, &[&row.owner, &row.url, &row.secret])
            .await?;
        Ok(())
    }

    async fn webhook(&self, owner: &str) -> Result<Option<WebhookRow>, StorageError> {
        let client = self.client().await?;
        let found = client
            .query_opt(&prepared(&client, WEBHOOK).await?, &[&owner])
            .await
            .map_err(failed)?;
        Ok(found.as_ref().map(webhook))
    }

    async fn delete_webhook(&self, owner: &str) -> Result<bool, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute(
            &prepared(&tx, "DELETE FROM webhook_events WHERE owner = $1").await?,
            &[&owner],
        )
        .await
        .map_err(failed)?;
        let removed = tx
            .execute(
                &prepared(&tx, "DELETE FROM webhooks WHERE owner = $1").await?,
                &[&owner],
            )
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(removed > 0)
    }

    async fn webhook_delivered(&self, owner: &str) -> Result<(), StorageError> {
        let sql =
            "UPDATE webhooks SET failures = 0, last_error = NULL WHERE owner = $1 AND failures > 0";
        self.execute(sql, &[&owner]).await?;
        Ok(())
    }

    async fn webhook_failed(
        &self,
        owner: &str,
        error: &str,
        disable_at: i64,
    ) -> Result<WebhookRow, StorageError> {
        let client = self.client().await?;
        let sql = "INSERT INTO webhooks AS w (owner, url, secret, enabled, failures, last_error)
                   VALUES ($1, '', '', $3::bigint > 1, 1, $2)
                   ON CONFLICT (owner) DO UPDATE SET failures = w.failures + 1, last_error = $2,
                     enabled = CASE WHEN w.failures + 1 >= $3::bigint THEN FALSE ELSE w.enabled END
                   RETURNING owner, url, secret, enabled, failures, last_error";
        let row = client
            .query_one(
                &prepared(&client, sql).await?,
                &[&owner, &error, &disable_at],
            )
            .await
            .map_err(failed)?;
        Ok(webhook(&row))
    }

    async fn enqueue_event(
        &self,
        event: &EventRow,
        max_per_owner: usize,
    ) -> Result<(), StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute(
            &prepared(
                &tx,
                "SELECT pg_advisory_xact_lock(hashtext('webhook_events:' || $1))",
            )
            .await?,
            &[&event.owner],
        )
        .await
        .map_err(failed)?;
        let keep = max_per_owner.saturating_sub(1) as i64;
        tx.execute(
            &prepared(
                &tx,
                "DELETE FROM webhook_events WHERE id IN (
                   SELECT id FROM webhook_events WHERE owner = $1
                   ORDER BY queued_ms DESC, id DESC OFFSET $2)",
            )
            .await?,
            &[&event.owner, &keep],
        )
        .await
        .map_err(failed)?;
        tx.execute(
            &prepared(
                &tx,
                "INSERT INTO webhook_events (id, owner, kind, body, attempts, due_ms, queued_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
            )
            .await?,
            &[
                &event.id,
                &event.owner,
                &event.kind,
                &event.body,
                &event.attempts,
                &event.due_ms,
                &now_ms(),
            ],
        )
        .await
        .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(())
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StorageError> {
        let client = self.client().await?;
        let sql = "UPDATE webhook_events SET due_ms = $2::bigint + $3::bigint WHERE id IN (
                     SELECT e.id FROM webhook_events e LEFT JOIN webhooks w ON w.owner = e.owner
                     WHERE e.due_ms <= $2::bigint AND (w.owner IS NULL OR w.enabled)
                     ORDER BY e.due_ms, e.queued_ms LIMIT $1::bigint FOR UPDATE OF e SKIP LOCKED)
                   RETURNING id, owner, kind, body, attempts, due_ms";
        let rows = client
            .query(
                &prepared(&client, sql).await?,
                &[&(limit as i64), &now, &lease_ms],
            )
            .await
            .map_err(failed)?;
        Ok(rows
            .iter()
            .map(|r| EventRow {
                id: r.get(0),
                owner: r.get(1),
                kind: r.get(2),
                body: r.get(3),
                attempts: r.get(4),
                due_ms: r.get(5),
            })
            .collect())
    }

    async fn event_delivered(&self, id: &str) -> Result<(), StorageError> {
        self.execute("DELETE FROM webhook_events WHERE id = $1", &[&id])
            .await?;
        Ok(())
    }

    async fn event_retry(&self, id: &str, attempts: i64, due_ms: i64) -> Result<(), StorageError> {
        let sql = "UPDATE webhook_events SET attempts = $2, due_ms = $3 WHERE id = $1";
        self.execute(sql, &[&id, &attempts, &due_ms]).await?;
        Ok(())
    }
}
