//! Call records in PostgreSQL, shared by every replica.

use async_trait::async_trait;

use super::{failed, prepared, PgStore};
use crate::storage::calls::{contains_pattern, CallFilter, CallRow, CallStore};
use crate::storage::StorageError;

const COLUMNS: &str = "id, owner, scenario, started_unix, outcome, search, body";

fn row(r: &tokio_postgres::Row) -> CallRow {
    CallRow {
        id: r.get(0),
        owner: r.get(1),
        scenario: r.get(2),
        started_unix: r.get(3),
        outcome: r.get(4),
        search: r.get(5),
        body: r.get(6),
    }
}

#[async_trait]
impl CallStore for PgStore {
    async fn put_call(&self, call: &CallRow) -> Result<(), StorageError> {
        let client = self.client().await?;
        // A row of the same id under another owner is never replaced.
        let sql = "INSERT INTO call_records (id, owner, scenario, started_unix, outcome, search, body)
                   VALUES ($1, $2, $3, $4, $5, $6, $7)
                   ON CONFLICT (id) DO UPDATE SET scenario = EXCLUDED.scenario, outcome = EXCLUDED.outcome,
                     search = EXCLUDED.search, body = EXCLUDED.body
                   WHERE call_records.owner = EXCLUDED.owner";
        client
            .execute(
                &prepared(&client, sql).await?,
                &[
                    &call.id,
                    &call.owner,
                    &call.scenario,
                    &call.started_unix,
                    &call.outcome,
                    &call.search,
                    &call.body,
                ],
            )
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn call(&self, owner: &str, id: &str) -> Result<Option<CallRow>, StorageError> {
        let client = self.client().await?;
        let sql = format!("SELECT {COLUMNS} FROM call_records WHERE owner = $1 AND id = $2");
        let found = client
            .query_opt(&prepared(&client, &sql).await?, &[&owner, &id])
            .await
            .map_err(failed)?;
        Ok(found.as_ref().map(row))
    }

    async fn calls(&self, owner: &str, filter: &CallFilter) -> Result<Vec<CallRow>, StorageError> {
        let client = self.client().await?;
        let sql = format!(
            "SELECT {COLUMNS} FROM call_records
             WHERE owner = $1
               AND ($2::text IS NULL OR scenario = $2)
               AND ($3::text IS NULL OR outcome = $3)
               AND ($4::bigint IS NULL OR started_unix >= $4)
               AND ($5::bigint IS NULL OR started_unix < $5)
               AND ($6::text IS NULL OR search LIKE $6 ESCAPE '\\')
               AND ($7::bigint IS NULL OR started_unix < $7 OR (started_unix = $7 AND id < $8))
             ORDER BY started_unix DESC, id DESC
             LIMIT $9"
        );
        let (below_start, below_id) = filter
            .below
            .clone()
            .map_or((None, None), |(start, id)| (Some(start), Some(id)));
        let pattern = filter.search.as_deref().map(contains_pattern);
        let rows = client
            .query(
                &prepared(&client, &sql).await?,
                &[
                    &owner,
                    &filter.scenario,
                    &filter.outcome,
                    &filter.after_unix,
                    &filter.before_unix,
                    &pattern,
                    &below_start,
                    &below_id.unwrap_or_default(),
                    &(filter.limit as i64),
                ],
            )
            .await
            .map_err(failed)?;
        Ok(rows.iter().map(row).collect())
    }

    async fn delete_call(&self, owner: &str, id: &str) -> Result<bool, StorageError> {
        let client = self.client().await?;
        let sql = "DELETE FROM call_records WHERE owner = $1 AND id = $2";
        let deleted = client
            .execute(&prepared(&client, sql).await?, &[&owner, &id])
            .await
            .map_err(failed)?;
        Ok(deleted > 0)
    }

    async fn delete_expired_calls(&self, before_unix: i64) -> Result<Vec<String>, StorageError> {
        let client = self.client().await?;
        let sql = "DELETE FROM call_records WHERE started_unix < $1 RETURNING id";
        let rows = client
            .query(&prepared(&client, sql).await?, &[&before_unix])
            .await
            .map_err(failed)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
