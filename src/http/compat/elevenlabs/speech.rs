//! `POST /elevenlabs/v1/text-to-speech/{voice_id}` and `…/stream`: ElevenLabs' speech request, answered with
//! the audio itself in `output_format` (`mp3_44100_128` by default, as ElevenLabs does).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{check_model, Kind};
use crate::audio::output::OutputFormat;
use crate::dictionaries::Locator;
use crate::http::transport::auth::Caller;
use crate::http::transport::cost::character_cost;
use crate::http::transport::extract::{ApiJson, ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::speech::Speak;
use crate::tts::VoiceSettings;

/// Longest `text` of one request.
pub use crate::ops::text::TTS_MAX_CHARS as MAX_TEXT_CHARS;

/// The query of the speech paths.
// The members with no effect are read (so their types are checked) and otherwise unused.
#[allow(dead_code)]
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SpeechQuery {
    /// `codec_rate[_kbps]`, as ElevenLabs names them (`mp3_44100_128` by default, `pcm_16000`, `ulaw_8000`,
    /// `opus_48000_64`, `wav_22050`, …).
    #[param(
        example = "mp3_44100_128",
        pattern = "^((wav|pcm)_(8000|16000|22050|24000|32000|44100|48000)|(ulaw|alaw)_8000|mp3_(22050_32|24000_48|44100_(32|64|96|128|192))|opus_48000_(32|64|96|128|192)|flac_(16000|22050|24000|44100))$"
    )]
    pub output_format: Option<String>,
    /// Accepted; sauti keeps no request logs of text.
    pub enable_logging: Option<String>,
    /// Accepted; has no effect.
    pub optimize_streaming_latency: Option<String>,
}

/// ElevenLabs' voice settings. `speed` is sauti's speaking rate; the others are accepted and have no effect.
// The members with no effect are read (so their types are checked) and otherwise unused.
#[allow(dead_code)]
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct ElevenVoiceSettings {
    /// Tempo, 0.25 to 4.0 (1.0 by default).
    #[schema(example = 1.1, minimum = 0.25, maximum = 4.0)]
    pub speed: Option<f64>,
    /// Accepted; no effect.
    pub stability: Option<f32>,
    /// Accepted; no effect.
    pub similarity_boost: Option<f32>,
    /// Accepted; no effect.
    pub style: Option<f32>,
    /// Accepted; no effect.
    pub use_speaker_boost: Option<bool>,
    /// Accepted; no effect.
    pub clone_strength: Option<f32>,
}

/// ElevenLabs' speech body. Members sauti has no use for (`seed`, `previous_text`, `next_text`, request ids,
/// normalisation switches) are accepted and ignored; any member may be `null`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ElevenSpeechRequest {
    /// The text: 1 to 5,000 characters with a letter or digit.
    #[schema(
        example = "Habari! Miadi yako ni kesho saa tatu asubuhi.",
        min_length = 1,
        max_length = 5000,
        pattern = "[A-Za-z0-9]"
    )]
    pub text: String,
    /// A speech model from `GET /elevenlabs/v1/models`; omitted: `sauti_tts`.
    #[schema(
        example = "eleven_multilingual_v2",
        pattern = "^(sauti_tts|eleven_multilingual_v2|eleven_turbo_v2_5|eleven_flash_v2_5)$"
    )]
    pub model_id: Option<String>,
    /// `sw` (or `swa`) or omitted: the voices speak Swahili.
    #[schema(example = "sw", pattern = "^(sw|swa)$")]
    pub language_code: Option<String>,
    /// Voice settings; see [`ElevenVoiceSettings`].
    pub voice_settings: Option<ElevenVoiceSettings>,
    /// Up to 3 pronunciation dictionaries of this key.
    #[schema(max_items = 3)]
    pub pronunciation_dictionary_locators: Option<Vec<Locator>>,
}

/// A checked request: the synthesis, and the dialect's answer format and text.
pub struct Prepared {
    /// The synthesis.
    pub speech: crate::ops::speech::Prepared,
    /// The audio format of the answer.
    pub format: OutputFormat,
    /// The text as sent (the timed answers align their characters with it).
    pub text: String,
}

/// ElevenLabs' speech request as the synthesis operation takes it: its model and language are ones sauti
/// speaks, its `speed` becomes the speaking rate; then the operation checks the rest.
pub async fn prepare(
    state: &AppState,
    caller: &Caller,
    voice_id: &str,
    query: SpeechQuery,
    request: ElevenSpeechRequest,
) -> Result<Prepared, ApiError> {
    check_model(request.model_id.as_deref(), Kind::Speech)?;
    if let Some(language) = request.language_code.as_deref() {
        if super::two_letter(language) != Some("sw") {
            return Err(ApiError::unprocessable(format!(
                "`language_code` {language:?} is not spoken by these voices; send \"sw\" or omit it"
            )));
        }
    }
    let format = OutputFormat::named(query.output_format.as_deref().unwrap_or("mp3_44100_128"))
        .map_err(ApiError::unprocessable)?;
    let speed = request.voice_settings.and_then(|s| s.speed).unwrap_or(1.0);
    let settings = VoiceSettings {
        speaking_rate: crate::tts::speaking_rate_of(speed, "voice_settings.speed")
            .map_err(ApiError::unprocessable)?,
        ..VoiceSettings::default()
    };
    let text = request.text.clone();
    let speak = Speak {
        owner: caller.key_id.to_string(),
        voice_id: voice_id.to_string(),
        text: request.text,
        field: "text",
        max_chars: MAX_TEXT_CHARS,
        settings,
        locators: request
            .pronunciation_dictionary_locators
            .unwrap_or_default(),
        voices_at: "/elevenlabs/v1/voices",
    };
    let speech = state.prepare_speech(speak).await?;
    Ok(Prepared {
        speech,
        format,
        text,
    })
}

#[utoipa::path(post, path = "/elevenlabs/v1/text-to-speech/{voice_id}", operation_id = "elevenlabsConvert", tag = "elevenlabs",
    summary = "Text to speech (ElevenLabs-compatible)",
    description = "The audio itself, in `output_format`.",
    params(("voice_id" = String, Path, description = "A voice from GET /elevenlabs/v1/voices", example = "zuri"), SpeechQuery),
    request_body = ElevenSpeechRequest,
    responses(
        (status = 200, description = "The audio", content(
            (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/wav"), (Vec<u8> = "audio/pcm"), (Vec<u8> = "audio/basic"),
            (Vec<u8> = "audio/x-alaw-basic"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/flac"),
        )),
        (status = 400, description = "Malformed JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice, or no such pronunciation dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, an unknown model, language or output format, or settings out of range", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn convert(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<SpeechQuery>,
    ApiJson(request): ApiJson<ElevenSpeechRequest>,
) -> Result<Response, ApiError> {
    let prepared = prepare(&state, &caller, &voice_id, query, request).await?;
    let (format, cost) = (prepared.format, character_cost(prepared.speech.chars()));
    let audio = prepared.speech.encoded(&state, format).await?;
    Ok(([(header::CONTENT_TYPE, format.media_type())], cost, audio).into_response())
}

/// `POST /elevenlabs/v1/text-to-speech/{voice_id}/stream`.
#[utoipa::path(post, path = "/elevenlabs/v1/text-to-speech/{voice_id}/stream", operation_id = "elevenlabsStream", tag = "elevenlabs",
    summary = "Text to speech, streamed (ElevenLabs-compatible)",
    description = "The audio in `output_format`, sent in chunks (chunked transfer encoding) as each sentence is made: \
                   the first bytes leave once the first sentence is synthesised.",
    params(("voice_id" = String, Path, description = "A voice from GET /elevenlabs/v1/voices", example = "zuri"), SpeechQuery),
    request_body = ElevenSpeechRequest,
    responses(
        (status = 200, description = "The audio, chunked", content(
            (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/wav"), (Vec<u8> = "audio/pcm"), (Vec<u8> = "audio/basic"),
            (Vec<u8> = "audio/x-alaw-basic"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/flac"),
        )),
        (status = 400, description = "Malformed JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 404, description = "No such voice, or no such pronunciation dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not JSON", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Empty or too long text, an unknown model, language or output format, or settings out of range", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Synthesis is busy or the voice is inactive (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<SpeechQuery>,
    ApiJson(request): ApiJson<ElevenSpeechRequest>,
) -> Result<Response, ApiError> {
    let prepared = prepare(&state, &caller, &voice_id, query, request).await?;
    let (format, cost) = (prepared.format, character_cost(prepared.speech.chars()));
    let opened = prepared.speech.stream(&state, false).await?;
    let chunks = crate::ops::stream::encoded(&state, format, opened)?;
    Ok((
        [(header::CONTENT_TYPE, format.media_type())],
        cost,
        crate::http::native::streaming::audio(chunks),
    )
        .into_response())
}
