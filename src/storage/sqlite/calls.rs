//! Call records in SQLite.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row};

use super::Database;
use crate::storage::calls::{contains_pattern, CallFilter, CallRow, CallStore};
use crate::storage::StorageError;

const COLUMNS: &str = "id, owner, scenario, started_unix, outcome, search, body";

fn row(r: &Row<'_>) -> rusqlite::Result<CallRow> {
    Ok(CallRow {
        id: r.get(0)?,
        owner: r.get(1)?,
        scenario: r.get(2)?,
        started_unix: r.get(3)?,
        outcome: r.get(4)?,
        search: r.get(5)?,
        body: r.get(6)?,
    })
}

#[async_trait]
impl CallStore for Database {
    async fn put_call(&self, call: &CallRow) -> Result<(), StorageError> {
        let call = call.clone();
        self.run(move |c| {
            // A row of the same id under another owner is never replaced.
            c.execute(
                "INSERT INTO call_records (id, owner, scenario, started_unix, outcome, search, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (id) DO UPDATE SET scenario = excluded.scenario, outcome = excluded.outcome,
                   search = excluded.search, body = excluded.body
                 WHERE call_records.owner = excluded.owner",
                params![
                    call.id,
                    call.owner,
                    call.scenario,
                    call.started_unix,
                    call.outcome,
                    call.search,
                    call.body
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn call(&self, owner: &str, id: &str) -> Result<Option<CallRow>, StorageError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.run(move |c| {
            Ok(c.query_row(
                &format!("SELECT {COLUMNS} FROM call_records WHERE owner = ?1 AND id = ?2"),
                [&owner, &id],
                row,
            )
            .optional()?)
        })
        .await
    }

    async fn calls(&self, owner: &str, filter: &CallFilter) -> Result<Vec<CallRow>, StorageError> {
        let (owner, filter) = (owner.to_string(), filter.clone());
        self.run(move |c| {
            let (below_start, below_id) = filter
                .below
                .clone()
                .map_or((None, None), |(start, id)| (Some(start), Some(id)));
            let mut statement = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM call_records
                 WHERE owner = ?1
                   AND (?2 IS NULL OR scenario = ?2)
                   AND (?3 IS NULL OR outcome = ?3)
                   AND (?4 IS NULL OR started_unix >= ?4)
                   AND (?5 IS NULL OR started_unix < ?5)
                   AND (?6 IS NULL OR search LIKE ?6 ESCAPE '\\')
                   AND (?7 IS NULL OR started_unix < ?7 OR (started_unix = ?7 AND id < ?8))
                 ORDER BY started_unix DESC, id DESC
                 LIMIT ?9"
            ))?;
            let rows = statement.query_map(
                params![
                    owner,
                    filter.scenario,
                    filter.outcome,
                    filter.after_unix,
                    filter.before_unix,
                    filter.search.as_deref().map(contains_pattern),
                    below_start,
                    below_id,
                    filter.limit as i64
                ],
                row,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn delete_call(&self, owner: &str, id: &str) -> Result<bool, StorageError> {
        let (owner, id) = (owner.to_string(), id.to_string());
        self.run(move |c| {
            Ok(c.execute(
                "DELETE FROM call_records WHERE owner = ?1 AND id = ?2",
                [&owner, &id],
            )? > 0)
        })
        .await
    }

    async fn delete_expired_calls(&self, before_unix: i64) -> Result<Vec<String>, StorageError> {
        self.run(move |c| {
            let mut statement =
                c.prepare("DELETE FROM call_records WHERE started_unix < ?1 RETURNING id")?;
            let ids = statement.query_map([before_unix], |r| r.get(0))?;
            Ok(ids.collect::<Result<Vec<String>, _>>()?)
        })
        .await
    }
}
