//! The realtime voice agent over WebSocket: `GET /v1/voice-agent/realtime` (ElevenLabs-style JSON events),
//! `GET /v1/voice-agent/twilio` (Twilio Media Streams) and `POST /v1/voice-agent/sessions` (a short-lived token
//! for browsers, which cannot set headers on a WebSocket). Everything a client can get wrong is refused before
//! the upgrade, as a problem it can read; then the socket belongs to a session actor.

mod call_data;
mod convai;
mod input;
mod pace;
mod socket;
mod twilio;

/// The wire protocols on their own: what a client's frames become (`tests/fuzz/fuzz_targets/realtime_message.rs`
/// feeds them anything).
pub mod wire {
    pub use super::convai::ConvAi;
    pub use super::input::{linear, InputFormat, NAMES as INPUT_FORMATS};
    pub use super::socket::{Taken, Wire};
    pub use super::twilio::Twilio;
}

/// How a socket closes when a frame cannot be read, and a close reason cut to fit (every socket of the API).
pub mod closing {
    pub use super::socket::{truncate, unreadable};
}

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{rejection::WebSocketUpgradeRejection, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::actors::realtime::{SessionOptions, TurnGate, TurnRefused};
use crate::audio::output::OutputFormat;
use crate::http::transport::auth::Caller;
use crate::http::transport::extract::ApiQuery;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::realtime::OpenSession;
use crate::problem::codes::ErrorCode;
use crate::storage::usage::UsageKind;
use input::InputFormat;

/// The paths that take `?token=` in place of a key.
pub const SOCKET_PATHS: [&str; 2] = ["/v1/voice-agent/realtime", "/v1/voice-agent/twilio"];

/// The largest frame a client may send (a second of 48 kHz PCM in base64 is under 130 KB).
const MAX_FRAME: usize = 1 << 20;

/// The query of the realtime sockets.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RealtimeQuery {
    /// The scenario (`general`, `banking`, `health`, or any loaded); omitted: the default, or the continued
    /// session's own.
    #[param(example = "banking")]
    pub scenario: Option<String>,
    /// The agent's voice; omitted: `tts.agent_voice`.
    #[param(example = "baraka")]
    pub voice_id: Option<String>,
    /// A dialogue session to continue (from an HTTP turn or an earlier socket).
    pub session_id: Option<String>,
    /// Silence that ends the caller's turn, 200 to 3000 ms; omitted: `realtime.end_of_turn_ms`.
    #[param(minimum = 200, maximum = 3000, example = 500)]
    pub end_of_turn_ms: Option<u64>,
    /// The agent's audio (`/realtime` only): any output format; omitted: `pcm_16000`.
    #[param(
        example = "pcm_16000",
        pattern = "^((wav|pcm)_(8000|16000|22050|24000|32000|44100|48000)|(ulaw|alaw)_8000|mp3_(22050_32|24000_48|44100_(32|64|96|128|192))|opus_48000_(32|64|96|128|192)|flac_(16000|22050|24000|44100))$"
    )]
    pub output_format: Option<String>,
    /// The caller's audio (`/realtime` only): `pcm_8000` … `pcm_48000`, `ulaw_8000`, `alaw_8000`, or `file`
    /// (each chunk a whole audio file, WAV, Ogg Opus, WebM…); omitted: `pcm_16000`.
    #[param(
        example = "pcm_16000",
        pattern = "^(pcm_(8000|16000|22050|24000|44100|48000)|ulaw_8000|alaw_8000|file)$"
    )]
    pub input_format: Option<String>,
    /// A token from `POST /v1/voice-agent/sessions`, in place of a key header (used once).
    pub token: Option<String>,
}

/// The query of the phone socket: the caller's and the agent's audio are Twilio's μ-law.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PhoneQuery {
    /// The scenario; omitted: the default.
    #[param(example = "banking")]
    pub scenario: Option<String>,
    /// The agent's voice; omitted: `tts.agent_voice`.
    #[param(example = "baraka")]
    pub voice_id: Option<String>,
    /// A dialogue session to continue.
    pub session_id: Option<String>,
    /// Silence that ends the caller's turn, 200 to 3000 ms; omitted: `realtime.end_of_turn_ms`.
    #[param(minimum = 200, maximum = 3000, example = 500)]
    pub end_of_turn_ms: Option<u64>,
    /// A token from `POST /v1/voice-agent/sessions`, in place of a key header (used once).
    pub token: Option<String>,
}

impl From<PhoneQuery> for RealtimeQuery {
    fn from(query: PhoneQuery) -> Self {
        Self {
            scenario: query.scenario,
            voice_id: query.voice_id,
            session_id: query.session_id,
            end_of_turn_ms: query.end_of_turn_ms,
            output_format: None,
            input_format: None,
            token: query.token,
        }
    }
}

/// A checked request: the session to start, how its socket speaks, and the token it came with (spent only
/// when the socket opens, so a refused request leaves it usable).
struct Checked {
    options: SessionOptions,
    input: InputFormat,
    token: Option<String>,
}

async fn check(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    query: RealtimeQuery,
    format: OutputFormat,
    phone: bool,
) -> Result<Checked, ApiError> {
    let input = InputFormat::named(query.input_format.as_deref().unwrap_or("pcm_16000"))
        .map_err(ApiError::unprocessable)?;
    let open = OpenSession {
        owner: caller.key_id.to_string(),
        scenario: query.scenario,
        voice_id: query.voice_id,
        session_id: query.session_id,
        end_of_turn_ms: query.end_of_turn_ms,
        format,
        phone,
    };
    Ok(Checked {
        options: state.check_session(open).await?,
        input,
        // A key in the headers is what authenticated the request; the token only when there is none.
        token: query
            .token
            .filter(|_| crate::http::transport::auth::presented_key(headers).is_none()),
    })
}

/// Accept the socket for a checked session: recognition must be there and a seat free (on this replica, and
/// among the key's sessions on every replica when those are counted). A call that cannot start for want of
/// them is told to the key's webhook (`call_initiation_failure`).
async fn accept(
    state: AppState,
    checked: Checked,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    wire: impl FnOnce(InputFormat) -> Box<dyn socket::Wire>,
) -> Result<Response, ApiError> {
    let upgrade = crate::http::transport::websocket::upgrade(upgrade)?;
    let (owner, options) = (checked.options.owner.clone(), checked.options.clone());
    let webhooks = state.records.webhooks.clone();
    let accepted = open(state, checked, upgrade, wire).await;
    if let Err(refused) = &accepted {
        let data = serde_json::json!({
            "agent_id": options.scenario_id,
            "failure_reason": refused.detail,
            "metadata": { "type": options.channel, "status": refused.code.status().as_u16() },
        });
        let kind = crate::webhooks::CALL_INITIATION_FAILURE;
        tokio::spawn(async move { webhooks.send(&owner, kind, data).await });
    }
    accepted
}

async fn open(
    state: AppState,
    checked: Checked,
    upgrade: WebSocketUpgrade,
    wire: impl FnOnce(InputFormat) -> Box<dyn socket::Wire>,
) -> Result<Response, ApiError> {
    let owner = &checked.options.owner;
    let mut seat = state.seat_for(owner).await?;
    let max_per_key = state.settings.realtime.max_sessions_per_key;
    if let Some(shared) = state.limits.realtime_seat(owner, max_per_key).await? {
        seat.also_hold(shared);
    }
    if let Some(token) = &checked.token {
        let tokens = &state.keys.tokens;
        tokens
            .spend(token)
            .map_err(|e| ApiError::unauthorized(e.to_string()))?;
    }
    let gate = Arc::new(TurnLimits(state.clone()));
    let (session, events) = state.start_session(checked.options, gate).await?;
    let (wire, stopping) = (wire(checked.input), state.stopping.clone());
    let bounds = socket::Bounds {
        decoders: Arc::clone(&state.decoders),
        audio_ahead: Duration::from_secs(state.settings.realtime.max_audio_ahead_seconds),
    };
    Ok(upgrade
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| async move {
            let (started, owner) = (std::time::Instant::now(), seat.owner().to_string());
            socket::serve(socket, session, events, wire, seat, stopping, bounds).await;
            let seconds = started.elapsed().as_secs_f64();
            state.count(&owner, UsageKind::CallSeconds, seconds).await;
        })
        .into_response())
}

/// `GET /v1/voice-agent/realtime`.
#[utoipa::path(get, path = "/v1/voice-agent/realtime", operation_id = "voiceAgentRealtime", tag = "agent",
    summary = "Talk with the voice agent over a WebSocket",
    description = "A WebSocket (ElevenLabs Conversational AI message shapes): stream the caller's audio as \
                   `{\"user_audio_chunk\": base64}`; the server detects the end of each turn, answers with \
                   `user_transcript`, `agent_response` and the reply's `audio` as it is synthesised, and sends \
                   `interruption` (then `agent_response_correction`) when the caller talks over it. The key goes in \
                   `xi-api-key`, or a token from POST /v1/voice-agent/sessions in `?token=`. See docs/agent.md.",
    params(RealtimeQuery),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, description = "A malformed query (a parameter given twice, or not a number where one is due)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 401, description = "No key, an unknown key, or a token that is unknown, used or expired", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice, or no such session for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "The session belongs to another scenario", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "An unknown scenario, output or input format, or an end-of-turn silence out of range", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 426, description = "Not a WebSocket request", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 429, description = "This key has `realtime.max_sessions_per_key` sessions open (or too many requests)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed, or the server holds all the sessions it may", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn converse(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<RealtimeQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let format = OutputFormat::named(query.output_format.as_deref().unwrap_or("pcm_16000"))
        .map_err(ApiError::unprocessable)?;
    let checked = check(&state, &caller, &headers, query, format, false).await?;
    let max_text_chars = state.settings.dialogue.max_text_chars;
    accept(state, checked, upgrade, move |input| {
        Box::new(convai::ConvAi::new(input, max_text_chars))
    })
    .await
}

/// `GET /v1/voice-agent/twilio`.
#[utoipa::path(get, path = "/v1/voice-agent/twilio", operation_id = "voiceAgentTwilio", tag = "agent",
    summary = "A phone call with the voice agent (Twilio Media Streams)",
    description = "Point a TwiML `<Connect><Stream url=\"wss://HOST/v1/voice-agent/twilio?token=…&scenario=banking\">` \
                   here: μ-law 8 kHz both ways, `media`, `mark` and `clear` out (clear when the caller talks over \
                   the agent). The key goes in `xi-api-key` or a token in `?token=`.",
    params(PhoneQuery),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, description = "A malformed query (a parameter given twice, or not a number where one is due)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 401, description = "No key, an unknown key, or a token that is unknown, used or expired", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice, or no such session for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "The session belongs to another scenario", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "An unknown scenario or an end-of-turn silence out of range", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 426, description = "Not a WebSocket request", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 429, description = "This key has `realtime.max_sessions_per_key` sessions open (or too many requests)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "No speech recognition model is installed, or the server holds all the sessions it may", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn phone(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<PhoneQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let ulaw = OutputFormat::named("ulaw_8000").map_err(ApiError::unprocessable)?;
    let checked = check(&state, &caller, &headers, query.into(), ulaw, true).await?;
    accept(state, checked, upgrade, |_| Box::new(twilio::Twilio::new())).await
}

/// A token for one realtime socket.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionToken {
    /// Put it in `?token=` of the socket URL; it opens one session.
    #[schema(example = "rt_3f9a1c2e7b5d4a60b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4")]
    token: String,
    /// Seconds it stays usable.
    #[schema(example = 300)]
    expires_in_seconds: u64,
    /// The socket path with the token (add `scenario`, `voice_id` and the formats as needed).
    #[schema(example = "/v1/voice-agent/realtime?token=rt_3f9a…")]
    url: String,
}

/// `POST /v1/voice-agent/sessions`.
#[utoipa::path(post, path = "/v1/voice-agent/sessions", operation_id = "voiceAgentSessionToken", tag = "agent",
    summary = "A token to open a realtime socket from a browser",
    description = "Browsers cannot set headers on a WebSocket: a page's server asks for a token with its key and \
                   hands the page the URL. The token stands for the key, opens one socket, and expires after \
                   `realtime.token_ttl_seconds`.",
    responses(
        (status = 201, description = "The token", body = SessionToken),
        (status = 503, description = "No speech recognition model is installed (a session could not hear the caller), or too many tokens are outstanding", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn token(State(state): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    // A session could not hear its caller: say so now, where a browser can read it, not at the socket.
    state.graph.asr.ensure_available().await?;
    let ttl = state.settings.realtime.token_ttl_seconds;
    let token = state
        .keys
        .tokens
        .mint(caller.key_id.clone(), Duration::from_secs(ttl))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::ServerBusy,
                "too many tokens are outstanding; retry shortly",
            )
        })?;
    let body = SessionToken {
        url: format!("{}?token={token}", SOCKET_PATHS[0]),
        token,
        expires_in_seconds: ttl,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// Realtime turns count against their key's rate limit like the HTTP agent's turns, and in its use.
struct TurnLimits(AppState);

#[async_trait::async_trait]
impl TurnGate for TurnLimits {
    async fn admit(&self, owner: &str) -> Result<(), TurnRefused> {
        self.0.limits.count_turn(owner).await?;
        self.0.count(owner, UsageKind::AgentTurns, 1.0).await;
        Ok(())
    }
}
