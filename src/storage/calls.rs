//! Call records as stored: one row per agent conversation (an HTTP conversation, a realtime socket, a phone
//! call), written whole each time it changes, so that a process killed mid-call leaves everything said before the
//! cut. The row carries what lists filter and order on (owner, scenario, start, outcome, the transcript's text
//! for search) beside the record itself (JSON, [`crate::records::CallRecord`]). Rows are private to their owner.
//!
//! The SQL lies in each engine's `calls` module; both pass the conformance suite.

use async_trait::async_trait;

use super::StorageError;

/// One stored call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRow {
    /// `conv_…`.
    pub id: String,
    /// The key that made it (only that key sees it).
    pub owner: String,
    /// The scenario that answered it.
    pub scenario: String,
    /// When it started, seconds since the epoch.
    pub started_unix: i64,
    /// `success`, `failure` or `unknown`.
    pub outcome: String,
    /// The transcript's words, lower case, for search.
    pub search: String,
    /// The record, JSON.
    pub body: String,
}

/// Which calls a list wants: newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallFilter {
    /// Only this scenario's.
    pub scenario: Option<String>,
    /// Only calls with this outcome.
    pub outcome: Option<String>,
    /// Started at or after (seconds since the epoch).
    pub after_unix: Option<i64>,
    /// Started before.
    pub before_unix: Option<i64>,
    /// Whose transcript holds this text (lower case).
    pub search: Option<String>,
    /// Older than this `(start, id)`: where the last page ended.
    pub below: Option<(i64, String)>,
    /// The most rows to return.
    pub limit: usize,
}

/// Where call records are kept: the engines implement it beside [`super::Store`].
#[async_trait]
pub trait CallStore: Send + Sync {
    /// Keep `row`, replacing the call's earlier row (the same owner's only).
    async fn put_call(&self, row: &CallRow) -> Result<(), StorageError>;
    /// `owner`'s call `id` (another key's is not found).
    async fn call(&self, owner: &str, id: &str) -> Result<Option<CallRow>, StorageError>;
    /// `owner`'s calls that pass `filter`, newest first (ties by id, descending).
    async fn calls(&self, owner: &str, filter: &CallFilter) -> Result<Vec<CallRow>, StorageError>;
    /// Delete `owner`'s call; whether it existed.
    async fn delete_call(&self, owner: &str, id: &str) -> Result<bool, StorageError>;
    /// Delete calls started before `before_unix`; their ids (for removing their recordings).
    async fn delete_expired_calls(&self, before_unix: i64) -> Result<Vec<String>, StorageError>;
}

/// `text` as a `LIKE` pattern that matches it anywhere, its wildcards taken literally (escape `\`).
pub fn contains_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}
