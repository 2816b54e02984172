//! ElevenLabs' input-streaming sockets: `GET …/text-to-speech/{voice_id}/stream-input` (one stream of text
//! in, its audio out) and `…/multi-stream-input` (up to [`MAX_CONTEXTS`] contexts on one socket, one per
//! turn of a conversation), under `/elevenlabs/v1` and `/v1`. What can be checked before the upgrade is a
//! problem answer the client can read (the query, and with a key in the headers the voice and the socket
//! limits); a key given in the first message instead is checked there, and a refusal then closes the socket
//! with 1008 before any audio. See docs/compatibility.md.

mod serve;
pub mod wire;

use std::time::Duration;

use axum::extract::ws::{rejection::WebSocketUpgradeRejection, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{check_model, Kind};
use crate::actors::realtime::{Seat, SeatError};
use crate::audio::output::OutputFormat;
use crate::http::transport::extract::{ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::speech_input::{InputVoice, OpenInput};
use crate::problem::codes::ErrorCode;
use crate::tts::VoiceSettings;

/// Contexts one multi-context socket may have open at once (ElevenLabs' limit).
pub const MAX_CONTEXTS: usize = 5;
/// `inactivity_timeout`'s default and largest value, in seconds.
pub const INACTIVITY_SECONDS: (u64, u64) = (20, 180);
/// The largest message a client may send.
const MAX_FRAME: usize = 256 * 1024;

/// Whether `request` opens a speech input socket without a key in its headers: its key may come in its first
/// message (`xi_api_key` or `authorization`), as browsers must send it.
pub fn takes_key_in_message(request: &Request) -> bool {
    let path = request.uri().path();
    let under = ["/elevenlabs/v1/text-to-speech/", "/v1/text-to-speech/"]
        .iter()
        .any(|prefix| path.starts_with(prefix));
    let upgrade = request
        .headers()
        .get(axum::http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    under && upgrade && (path.ends_with("/stream-input") || path.ends_with("/multi-stream-input"))
}

/// The query of the input-streaming sockets. ElevenLabs' members sauti has no use for (`enable_logging`,
/// `enable_ssml_parsing`, `seed`, `optimize_streaming_latency`, `apply_language_text_normalization`) are
/// accepted.
#[allow(dead_code)]
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InputQuery {
    /// A speech model from `GET /elevenlabs/v1/models`; omitted: `sauti_tts`.
    #[param(
        example = "eleven_flash_v2_5",
        pattern = "^(sauti_tts|eleven_multilingual_v2|eleven_turbo_v2_5|eleven_flash_v2_5)$"
    )]
    pub model_id: Option<String>,
    /// `sw` (or `swa`) or omitted.
    #[param(example = "sw", pattern = "^(sw|swa)$")]
    pub language_code: Option<String>,
    /// The audio's format (`mp3_44100_128` by default, `pcm_16000`, `pcm_24000`, `ulaw_8000`, …).
    #[param(
        example = "pcm_16000",
        pattern = "^((wav|pcm)_(8000|16000|22050|24000|32000|44100|48000)|(ulaw|alaw)_8000|mp3_(22050_32|24000_48|44100_(32|64|96|128|192))|opus_48000_(32|64|96|128|192)|flac_(16000|22050|24000|44100))$"
    )]
    pub output_format: Option<String>,
    /// Seconds without a message before the socket closes (1 to 180; 20 by default).
    #[param(minimum = 1, maximum = 180, example = 20)]
    pub inactivity_timeout: Option<u64>,
    /// Alignment times count from the start of the context's audio (as a player hears it); otherwise, as by
    /// default, from the start of each message's audio.
    pub sync_alignment: Option<bool>,
    /// Speak at every clause boundary instead of following the chunk schedule.
    pub auto_mode: Option<bool>,
    /// `auto`, `on` or `off`: numbers and abbreviations are always read out by the voices.
    #[param(pattern = "^(auto|on|off)$")]
    pub apply_text_normalization: Option<String>,
    /// Accepted; sauti keeps no request logs of text.
    pub enable_logging: Option<bool>,
    /// Accepted; SSML is read as text.
    pub enable_ssml_parsing: Option<bool>,
}

/// A socket checked before its upgrade.
pub struct Checked {
    /// The audio's format.
    pub format: OutputFormat,
    /// The voice asked for.
    pub voice_id: String,
    /// With a key in the headers: the voice checked for it, and its place among the sockets.
    pub opened: Option<(InputVoice, Seat)>,
    /// How long the socket may go without a message.
    pub inactivity: Duration,
    /// Speak at every clause boundary.
    pub auto: bool,
    /// Alignment times count from the start of each context's audio.
    pub continuous: bool,
    /// Several contexts on one socket.
    pub multi: bool,
}

async fn check(
    state: &AppState,
    voice_id: String,
    query: InputQuery,
    multi: bool,
) -> Result<Checked, ApiError> {
    check_model(query.model_id.as_deref(), Kind::Speech)?;
    if let Some(language) = query.language_code.as_deref() {
        if super::two_letter(language) != Some("sw") {
            return Err(ApiError::unprocessable(format!(
                "`language_code` {language:?} is not spoken by these voices; send \"sw\" or omit it"
            )));
        }
    }
    if let Some(mode) = query.apply_text_normalization.as_deref() {
        if !matches!(mode, "auto" | "on" | "off") {
            return Err(ApiError::unprocessable(
                "`apply_text_normalization` must be auto, on or off",
            ));
        }
    }
    let format = OutputFormat::named(query.output_format.as_deref().unwrap_or("mp3_44100_128"))
        .map_err(ApiError::unprocessable)?;
    let (default, most) = INACTIVITY_SECONDS;
    let inactivity = query.inactivity_timeout.unwrap_or(default);
    if !(1..=most).contains(&inactivity) {
        return Err(ApiError::unprocessable(format!(
            "`inactivity_timeout` must be 1 to {most} seconds"
        )));
    }
    let opened = match crate::telemetry::request_scope::key_id() {
        Some(owner) => Some(open(state, &owner, &voice_id).await?),
        None => None,
    };
    Ok(Checked {
        format,
        voice_id,
        opened,
        inactivity: Duration::from_secs(inactivity),
        auto: query.auto_mode.unwrap_or(false),
        continuous: query.sync_alignment.unwrap_or(false),
        multi,
    })
}

/// The voice checked for `owner` and a place among the sockets: 404 for another key's voice, 429 or 503
/// when the sockets are all taken.
pub async fn open(
    state: &AppState,
    owner: &str,
    voice_id: &str,
) -> Result<(InputVoice, Seat), ApiError> {
    let open = OpenInput {
        owner: owner.to_string(),
        voice_id: voice_id.to_string(),
        settings: VoiceSettings::default(),
        locators: Vec::new(),
        voices_at: "/elevenlabs/v1/voices",
    };
    let voice = state.open_speech_input(open).await?;
    let seat = state.speech_sockets.take(owner).map_err(|error| match error {
        SeatError::KeyFull(n) => ApiError::rate_limited(
            format!("this API key already has {n} speech input sockets open (realtime.max_speech_sockets_per_key); close one first"),
            5,
        ),
        SeatError::ServerFull(n) => ApiError::new(
            ErrorCode::ServerBusy,
            format!("the server already holds {n} speech input sockets (realtime.max_speech_sockets); try again shortly"),
        ),
    })?;
    Ok((voice, seat))
}

async fn accept(
    state: AppState,
    voice_id: String,
    query: InputQuery,
    multi: bool,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let checked = check(&state, voice_id, query, multi).await?;
    let upgrade = crate::http::transport::websocket::upgrade(upgrade)?;
    Ok(upgrade
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| serve::serve(socket, state, checked))
        .into_response())
}

macro_rules! socket_route {
    ($name:ident, $path:literal, $id:literal, $multi:literal, $summary:literal) => {
        #[utoipa::path(get, path = $path, operation_id = $id, tag = "elevenlabs",
            summary = $summary,
            description = "A WebSocket in ElevenLabs' input-streaming message shapes: send `{\"text\": \" \"}` first \
                           (with `voice_settings`, `generation_config.chunk_length_schedule`, \
                           `pronunciation_dictionary_locators`, and `xi_api_key` when no header carries the key), \
                           then text as it is written, `{\"flush\": true}` to speak what is held, and `{\"text\": \"\"}` \
                           to end; the server sends `audio` (base64) with `alignment` and `normalizedAlignment` \
                           as each piece is spoken, then `isFinal`. The multi-context socket adds `context_id` to \
                           every message, `close_context`, `close_socket`, and `contextId` to every answer. \
                           See docs/compatibility.md.",
            params(("voice_id" = String, Path, description = "A voice from GET /elevenlabs/v1/voices", example = "zuri"), InputQuery),
            responses(
                (status = 101, description = "Switched to the WebSocket protocol"),
                (status = 400, description = "A malformed query", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                (status = 404, description = "No such voice", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                (status = 422, description = "An unknown model, language, output format or normalisation mode, or an inactivity timeout out of range", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                (status = 426, description = "Not a WebSocket request", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                (status = 429, description = "This key has `realtime.max_speech_sockets_per_key` sockets open (or too many requests)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
                (status = 503, description = "The server holds all the sockets it may", content_type = "application/problem+json", body = crate::http::openapi::Problem),
            ))]
        pub async fn $name(
            State(state): State<AppState>,
            ApiPath(voice_id): ApiPath<String>,
            ApiQuery(query): ApiQuery<InputQuery>,
            upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
        ) -> Result<Response, ApiError> {
            accept(state, voice_id, query, $multi, upgrade).await
        }
    };
}

socket_route!(
    stream_input,
    "/elevenlabs/v1/text-to-speech/{voice_id}/stream-input",
    "elevenlabsStreamInput",
    false,
    "Text streamed in, speech streamed out (ElevenLabs-compatible WebSocket)"
);
socket_route!(
    multi_stream_input,
    "/elevenlabs/v1/text-to-speech/{voice_id}/multi-stream-input",
    "elevenlabsMultiStreamInput",
    true,
    "Several streams of text in, speech out, one context each (ElevenLabs-compatible WebSocket)"
);
socket_route!(
    stream_input_v1,
    "/v1/text-to-speech/{voice_id}/stream-input",
    "streamInput",
    false,
    "Text streamed in, speech streamed out (WebSocket, ElevenLabs' messages)"
);
socket_route!(
    multi_stream_input_v1,
    "/v1/text-to-speech/{voice_id}/multi-stream-input",
    "multiStreamInput",
    true,
    "Several streams of text in, speech out, one context each (WebSocket, ElevenLabs' messages)"
);
