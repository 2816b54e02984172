//! OpenAI's realtime transcription sessions: `GET /v1/realtime?intent=transcription`, a WebSocket in OpenAI's
//! event shapes, so the `openai` SDK's realtime client transcribes live against sauti by its base URL alone.
//! What a client can get wrong before the socket opens (the intent, a model, recognition missing, too many
//! sessions) is a problem it can read; after, `error` events. See docs/compatibility.md.

mod live;
mod session;
pub mod wire;

use axum::extract::ws::{rejection::WebSocketUpgradeRejection, WebSocketUpgrade};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::ApiQuery;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;

/// The largest event a client may send (a second of 24 kHz PCM in base64 is 64 KB).
const MAX_FRAME: usize = 1 << 20;

/// The query of the realtime socket.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RealtimeQuery {
    /// `transcription`: this socket transcribes (the voice agent is `/v1/voice-agent/realtime`).
    #[param(example = "transcription", pattern = "^transcription$")]
    pub intent: Option<String>,
    /// A transcription model of `GET /v1/models`, accepted for OpenAI's clients; speech-to-speech models are
    /// not served here.
    #[param(
        example = "gpt-4o-transcribe",
        pattern = "^(sauti-stt|whisper-1|gpt-4o-transcribe|gpt-4o-mini-transcribe)$"
    )]
    pub model: Option<String>,
}

/// `GET /v1/realtime`.
#[utoipa::path(get, path = "/v1/realtime", operation_id = "realtimeTranscription", tag = "openai",
    summary = "Live transcription over a WebSocket (OpenAI realtime transcription sessions)",
    description = "Open with `?intent=transcription` and `Authorization: Bearer KEY`. The server sends \
                   `session.created`; send `session.update` (a `transcription` session: `audio.input.format` \
                   audio/pcm at 24 kHz, audio/pcmu or audio/pcma, `transcription.language`, `turn_detection` \
                   server_vad or null) and `input_audio_buffer.append` with base64 audio. With server VAD the \
                   server sends `input_audio_buffer.speech_started`, `speech_stopped` and `committed`; without, \
                   `input_audio_buffer.commit` ends a turn. Each turn's transcript comes as \
                   `conversation.item.input_audio_transcription.delta` events (while the caller speaks, when a \
                   CTC model serves the language) and `…completed`. See docs/compatibility.md.",
    params(RealtimeQuery),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, description = "A malformed query", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "A model that is not a transcription model here", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `intent=transcription`: speech-to-speech sessions are not served here", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 426, description = "Not a WebSocket request", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 429, description = "This key has `realtime.max_sessions_per_key` sessions open (or too many requests)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed, or the server holds all the sessions it may", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn transcription(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<RealtimeQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    if query.intent.as_deref() != Some("transcription") {
        return Err(ApiError::unprocessable(
            "this socket transcribes: open it with ?intent=transcription (the voice agent's socket is \
             /v1/voice-agent/realtime)",
        ));
    }
    if let Some(model) = query.model.as_deref() {
        super::check_model(model, super::Kind::Recognition)?;
    }
    let owner = caller.key_id.to_string();
    let mut seat = state.seat_for(&owner).await?;
    let max_per_key = state.settings.realtime.max_sessions_per_key;
    if let Some(shared) = state.limits.realtime_seat(&owner, max_per_key).await? {
        seat.also_hold(shared);
    }
    let upgrade = crate::http::transport::websocket::upgrade(upgrade)?;
    Ok(upgrade
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| session::serve(socket, state, owner, seat))
        .into_response())
}
