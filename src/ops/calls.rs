//! Looking up call records, for every protocol that shows them: a page of a key's calls (newest first, filtered
//! by scenario, outcome, start time and words said), one call, its recording, and deleting one. Another key's
//! call is not found.

use base64::Engine as _;

use super::Service;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;
use crate::records::CallRecord;
use crate::storage::{CallFilter, StorageError};

/// The most calls one page holds.
pub const MAX_PAGE: usize = 100;
/// A page's size when none is asked for.
pub const DEFAULT_PAGE: usize = 30;
/// The longest search text.
const MAX_SEARCH_CHARS: usize = 200;

/// Which calls to list, as a client asks.
#[derive(Debug, Default, Clone)]
pub struct CallQuery {
    /// Where the last page ended.
    pub cursor: Option<String>,
    /// Only this scenario's.
    pub scenario: Option<String>,
    /// `success`, `failure` or `unknown`.
    pub outcome: Option<String>,
    /// Started at or after (seconds since the epoch).
    pub after_unix: Option<i64>,
    /// Started before.
    pub before_unix: Option<i64>,
    /// Words the transcript holds.
    pub search: Option<String>,
    /// 1 to 100.
    pub page_size: Option<usize>,
}

/// A page of calls.
pub struct CallPage {
    /// The calls, newest first.
    pub calls: Vec<CallRecord>,
    /// Where the next page starts, when there is one.
    pub next_cursor: Option<String>,
}

fn unavailable(error: StorageError) -> ApiError {
    ApiError::new(
        ErrorCode::StorageUnavailable,
        format!("call records cannot be read right now: {error}"),
    )
}

fn cursor_of(started: i64, id: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{started}:{id}"))
}

fn parse_cursor(cursor: &str) -> Option<(i64, String)> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (started, id) = text.split_once(':')?;
    Some((started.parse().ok()?, id.to_string()))
}

impl Service {
    /// A page of `owner`'s calls.
    pub async fn calls(&self, owner: &str, query: CallQuery) -> Result<CallPage, ApiError> {
        // An empty parameter is one not given (`?cursor=` from a client that has none yet).
        let given = |value: Option<String>| value.filter(|v| !v.trim().is_empty());
        let query = CallQuery {
            cursor: given(query.cursor),
            scenario: given(query.scenario),
            outcome: given(query.outcome),
            ..query
        };
        let limit = query.page_size.unwrap_or(DEFAULT_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(ApiError::unprocessable(format!(
                "`page_size` must be between 1 and {MAX_PAGE}"
            )));
        }
        if let Some(outcome) = &query.outcome {
            if !["success", "failure", "unknown"].contains(&outcome.as_str()) {
                return Err(ApiError::unprocessable(
                    "`call_successful` must be success, failure or unknown",
                ));
            }
        }
        let below = match &query.cursor {
            Some(cursor) => Some(parse_cursor(cursor).ok_or_else(|| {
                ApiError::unprocessable("`cursor` is not one this API gave; start again without it")
            })?),
            None => None,
        };
        let search = query
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if search.is_some_and(|s| s.chars().count() > MAX_SEARCH_CHARS) {
            return Err(ApiError::unprocessable(format!(
                "`search` may be {MAX_SEARCH_CHARS} characters at most"
            )));
        }
        let filter = CallFilter {
            scenario: query.scenario,
            outcome: query.outcome,
            after_unix: query.after_unix,
            before_unix: query.before_unix,
            search: search.map(str::to_lowercase),
            below,
            // One more than the page, to know whether another follows.
            limit: limit + 1,
        };
        let mut rows = self.db.calls(owner, &filter).await.map_err(unavailable)?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next_cursor = more
            .then(|| rows.last().map(|r| cursor_of(r.started_unix, &r.id)))
            .flatten();
        let calls = rows
            .iter()
            .map(CallRecord::from_row)
            .collect::<Result<Vec<_>, _>>()
            .map_err(unavailable)?;
        Ok(CallPage { calls, next_cursor })
    }

    /// `owner`'s call `id`; 404 for any other key's.
    pub async fn call_record(&self, owner: &str, id: &str) -> Result<CallRecord, ApiError> {
        let row = self.db.call(owner, id).await.map_err(unavailable)?;
        let row = row.ok_or_else(|| not_found(id))?;
        CallRecord::from_row(&row).map_err(unavailable)
    }

    /// Delete `owner`'s call `id` and its recording; 404 for any other key's.
    pub async fn delete_call_record(&self, owner: &str, id: &str) -> Result<(), ApiError> {
        match self.db.delete_call(owner, id).await.map_err(unavailable)? {
            true => {
                self.records.forget_audio(id).await;
                Ok(())
            }
            false => Err(not_found(id)),
        }
    }

    /// The recording of `owner`'s call `id` (a stereo WAV: the caller left, the agent right); 404 when the
    /// call is another key's or was not recorded.
    pub async fn call_audio(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<crate::storage::Blob, ApiError> {
        let record = self.call_record(owner, id).await?;
        if !record.audio {
            return Err(ApiError::not_found(format!(
                "conversation {id:?} has no recording (records.recording is off, or the call is still going on)"
            )));
        }
        self.records
            .audio(id)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| {
                ApiError::not_found(format!("the recording of conversation {id:?} is gone"))
            })
    }
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "conversation {id:?} not found; GET /v1/convai/conversations lists this key's"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_names_where_a_page_ended() {
        let cursor = cursor_of(1_764_000_000, "conv_ab12");
        assert_eq!(
            parse_cursor(&cursor),
            Some((1_764_000_000, "conv_ab12".into()))
        );
        for wrong in ["", "x", "bm90LWEtY3Vyc29y", "%%%"] {
            assert_eq!(parse_cursor(wrong), None, "{wrong}");
        }
    }
}
