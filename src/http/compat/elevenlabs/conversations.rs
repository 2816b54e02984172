//! Call records in ElevenLabs' Conversational AI shapes, so the official SDK's
//! `conversational_ai.conversations` list, get, delete and audio calls work unchanged: under
//! `/v1/convai/conversations` and `/elevenlabs/v1/convai/conversations` alike. A conversation's `agent_id` is its
//! scenario; the whole record (channel, caller, end reason, the intent, slots, actions and safety class of every
//! reply, the transfers) is under `record`.

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::{ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::calls::CallQuery;
use crate::records::shape::{conversation, status, summary_of};
use crate::records::{CallRecord, Channel};

/// The list's query (ElevenLabs' names; others it takes are ignored).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Where the previous page ended (its `next_cursor`).
    #[param(pattern = "^[A-Za-z0-9_-]{0,400}$")]
    pub cursor: Option<String>,
    /// Only this scenario's calls.
    #[param(example = "banking")]
    pub agent_id: Option<String>,
    /// `success`, `failure` or `unknown`.
    #[param(example = "success", pattern = "^(success|failure|unknown)?$")]
    pub call_successful: Option<String>,
    /// Started before (seconds since the epoch).
    pub call_start_before_unix: Option<i64>,
    /// Started at or after.
    pub call_start_after_unix: Option<i64>,
    /// 1 to 100 (30 when omitted).
    #[param(minimum = 1, maximum = 100)]
    pub page_size: Option<usize>,
    /// Words said in the call (either side).
    pub search: Option<String>,
}

/// One conversation in a list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ConversationSummary {
    #[schema(example = "banking")]
    agent_id: String,
    agent_name: String,
    #[schema(example = "conv_5f0c3a1e9b2d4c6e8a7b1d3f5e7c9a0b")]
    conversation_id: String,
    start_time_unix_secs: i64,
    call_duration_secs: i64,
    message_count: usize,
    /// `in-progress` or `done`.
    status: String,
    /// `success`, `failure` or `unknown`.
    call_successful: String,
    termination_reason: Option<String>,
    transcript_summary: String,
    /// `inbound` for a phone call.
    direction: Option<String>,
}

/// A page of conversations.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ConversationPage {
    conversations: Vec<ConversationSummary>,
    has_more: bool,
    next_cursor: Option<String>,
}

impl From<&CallRecord> for ConversationSummary {
    fn from(record: &CallRecord) -> Self {
        Self {
            agent_id: record.scenario.clone(),
            agent_name: record.scenario.clone(),
            conversation_id: record.id.clone(),
            start_time_unix_secs: record.started_unix,
            call_duration_secs: record.duration_secs.round() as i64,
            message_count: record.turns.len(),
            status: status(record),
            call_successful: record.outcome.clone(),
            termination_reason: record.end_reason.clone(),
            transcript_summary: summary_of(record),
            direction: (record.channel == Channel::Twilio).then(|| "inbound".to_string()),
        }
    }
}

async fn list_calls(
    state: &AppState,
    caller: &Caller,
    query: ListQuery,
) -> Result<Json<ConversationPage>, ApiError> {
    let page = state
        .calls(
            &caller.key_id,
            CallQuery {
                cursor: query.cursor,
                scenario: query.agent_id,
                outcome: query.call_successful,
                after_unix: query.call_start_after_unix,
                before_unix: query.call_start_before_unix,
                search: query.search,
                page_size: query.page_size,
            },
        )
        .await?;
    Ok(Json(ConversationPage {
        conversations: page.calls.iter().map(ConversationSummary::from).collect(),
        has_more: page.next_cursor.is_some(),
        next_cursor: page.next_cursor,
    }))
}

async fn one_call(state: &AppState, caller: &Caller, id: &str) -> Result<Json<Value>, ApiError> {
    let record = state.call_record(&caller.key_id, id).await?;
    Ok(Json(conversation(&record)))
}

async fn delete_call(state: &AppState, caller: &Caller, id: &str) -> Result<Json<Value>, ApiError> {
    state.delete_call_record(&caller.key_id, id).await?;
    Ok(Json(json!({})))
}

async fn call_audio(
    state: &AppState,
    caller: &Caller,
    id: &str,
    request: &HeaderMap,
) -> Result<Response, ApiError> {
    let audio = state.call_audio(&caller.key_id, id).await?;
    crate::http::transport::download::send_file(
        audio,
        request,
        &format!("\"{id}\""),
        [
            (header::CONTENT_TYPE, "audio/wav".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{id}.wav\""),
            ),
        ],
    )
    .await
}

/// The handlers under one prefix, each documented at its own path.
macro_rules! under {
    ($module:ident, $prefix:literal, $tag:literal, $id:literal) => {
        /// The conversation endpoints under this prefix.
        pub mod $module {
            use super::*;

            /// A page of this key's conversations, newest first.
            #[utoipa::path(get, path = concat!($prefix, "/convai/conversations"), operation_id = concat!($id, "ListConversations"), tag = $tag,
                summary = "List call records (ElevenLabs-compatible)", params(ListQuery),
                responses(
                    (status = 200, description = "One page of this key's conversations, newest first", body = ConversationPage),
                    (status = 400, description = "A malformed query (a parameter given twice, or not a number where one is due)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                    (status = 422, description = "A page_size outside 1–100, an unknown call_successful, a cursor this API did not give, or a search over 200 characters", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                    (status = 503, description = "The store of records cannot be reached", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                ))]
            pub async fn list(
                State(state): State<AppState>,
                caller: Caller,
                ApiQuery(query): ApiQuery<ListQuery>,
            ) -> Result<Json<ConversationPage>, ApiError> {
                list_calls(&state, &caller, query).await
            }

            /// One conversation: transcript, metadata, analysis, and the whole record.
            #[utoipa::path(get, path = concat!($prefix, "/convai/conversations/{conversation_id}"), operation_id = concat!($id, "GetConversation"), tag = $tag,
                summary = "One call record (ElevenLabs-compatible)",
                params(("conversation_id" = String, Path, description = "The conversation", example = "conv_5f0c3a1e9b2d4c6e8a7b1d3f5e7c9a0b")),
                responses(
                    (status = 200, description = "The conversation", body = Object),
                    (status = 404, description = "No such conversation for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                ))]
            pub async fn get(
                State(state): State<AppState>,
                caller: Caller,
                ApiPath(id): ApiPath<String>,
            ) -> Result<Json<Value>, ApiError> {
                one_call(&state, &caller, &id).await
            }

            /// Delete a conversation and its recording.
            #[utoipa::path(delete, path = concat!($prefix, "/convai/conversations/{conversation_id}"), operation_id = concat!($id, "DeleteConversation"), tag = $tag,
                summary = "Delete a call record (ElevenLabs-compatible)",
                params(("conversation_id" = String, Path, description = "The conversation", example = "conv_5f0c3a1e9b2d4c6e8a7b1d3f5e7c9a0b")),
                responses(
                    (status = 200, description = "Deleted", body = Object),
                    (status = 404, description = "No such conversation for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                ))]
            pub async fn delete(
                State(state): State<AppState>,
                caller: Caller,
                ApiPath(id): ApiPath<String>,
            ) -> Result<Json<Value>, ApiError> {
                delete_call(&state, &caller, &id).await
            }

            /// The conversation's recording.
            #[utoipa::path(get, path = concat!($prefix, "/convai/conversations/{conversation_id}/audio"), operation_id = concat!($id, "ConversationAudio"), tag = $tag,
                summary = "A call's recording (ElevenLabs-compatible)",
                params(("conversation_id" = String, Path, description = "The conversation", example = "conv_5f0c3a1e9b2d4c6e8a7b1d3f5e7c9a0b")),
                responses(
                    (status = 200, description = "A stereo WAV: the caller left, the agent right", content_type = "audio/wav"),
                    (status = 404, description = "No such conversation for this key, or it was not recorded (records.recording is off)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                ))]
            pub async fn audio(
                State(state): State<AppState>,
                caller: Caller,
                request: HeaderMap,
                ApiPath(id): ApiPath<String>,
            ) -> Result<Response, ApiError> {
                call_audio(&state, &caller, &id, &request).await
            }
        }
    };
}

under!(native, "/v1", "agent", "convai");
under!(compat, "/elevenlabs/v1", "elevenlabs", "elevenlabs");
