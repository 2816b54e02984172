//! The OpenAPI 3.1 document (`GET /openapi.json`): generated from the handlers' `#[utoipa::path]` attributes and
//! the request and response types, with the `xi-api-key` scheme and the rate-limit headers.

use serde::Serialize;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// An error (RFC 9457 problem details), `application/problem+json`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "https://api.example/errors/unprocessable_content", "title": "Unprocessable Content", "status": 422,
    "detail": "`text` must not be empty", "instance": "/v1/text-to-speech/zuri",
    "request_id": "0b6f3c52-3d7e-4b53-9a59-1c0d1c7c8f11"
}))]
pub struct Problem {
    /// `{public_base_url}/errors/{code}`; the code is one of `ErrorCode` (`not_found`, `server_busy`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Short summary of the status.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong, in words.
    pub detail: String,
    /// The path of the request.
    pub instance: String,
    /// The request id (also the `X-Request-Id` header).
    pub request_id: Option<String>,
}

/// The audio upload of speech recognition (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct SpeechToTextForm {
    /// The audio: WAV, MP3, FLAC, Ogg (Vorbis/Opus) or WebM; at most 25 MB.
    #[schema(value_type = String, format = Binary)]
    pub audio: Vec<u8>,
    /// Language code; Swahili (`sw`) by default.
    #[schema(example = "sw", pattern = "^(sw|en|fr|de|es|pt|ar|zh|ja|ko|ru)$")]
    pub language: Option<String>,
    /// `json` (default); `verbose_json`, which adds the decoded segments with their times (and every word's, from
    /// models that align words); or captions, `srt` or `vtt`.
    #[schema(example = "json", pattern = "^(json|verbose_json|srt|vtt)$")]
    pub response_format: Option<String>,
}

/// An OpenAI transcription request (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct TranscriptionForm {
    /// The audio: WAV, MP3, FLAC, Ogg (Vorbis/Opus) or WebM; at most 25 MB.
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    /// `sauti-stt`, or OpenAI's `whisper-1`, `gpt-4o-transcribe`, `gpt-4o-mini-transcribe` (all routed by
    /// language).
    #[schema(
        example = "whisper-1",
        pattern = "^(sauti-stt|whisper-1|gpt-4o-transcribe|gpt-4o-mini-transcribe)$"
    )]
    pub model: String,
    /// Language code; Swahili (`sw`) by default.
    #[schema(example = "sw", pattern = "^(sw|en|fr|de|es|pt|ar|zh|ja|ko|ru)$")]
    pub language: Option<String>,
    /// Accepted; has no effect.
    pub prompt: Option<String>,
    /// `json` (default), `text`, `srt`, `vtt` or `verbose_json`.
    #[schema(
        example = "verbose_json",
        pattern = "^(json|text|srt|vtt|verbose_json)$"
    )]
    pub response_format: Option<String>,
    /// 0 to 1; accepted, decoding is greedy.
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub temperature: Option<f32>,
    /// `word` and/or `segment` (repeat the part): what `verbose_json` includes.
    #[serde(rename = "timestamp_granularities[]")]
    #[schema(example = json!(["word", "segment"]))]
    pub timestamp_granularities: Option<Vec<String>>,
}

/// An ElevenLabs instant clone (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct InstantCloneForm {
    /// Display name; `Cloned Voice` by default.
    pub name: Option<String>,
    /// One or more clips of the speaker (repeat the part): WAV, MP3, WebM, FLAC or Ogg, at most 50 MB together,
    /// at least 3 s of speech in all.
    #[schema(value_type = Vec<String>, format = Binary)]
    pub files: Vec<Vec<u8>>,
    /// Kept as the voice's provenance (a statement of the speaker's consent).
    pub description: Option<String>,
    /// Accepted; no effect (JSON or `null`).
    pub labels: Option<String>,
    /// Accepted; no effect.
    pub remove_background_noise: Option<bool>,
}

/// An ElevenLabs transcription request (`multipart/form-data`). Other ElevenLabs fields are accepted and have no
/// effect.
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ElevenTranscriptionForm {
    /// The audio: WAV, MP3, FLAC, Ogg (Vorbis/Opus) or WebM; at most 25 MB.
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    /// `sauti_stt`, or ElevenLabs' `scribe_v1`, `scribe_v2` (all routed by language).
    #[schema(example = "scribe_v1", pattern = "^(sauti_stt|scribe_v1|scribe_v2)$")]
    pub model_id: String,
    /// ISO 639-1 or 639-3; Swahili by default.
    #[schema(example = "swa")]
    pub language_code: Option<String>,
    /// `word` (default) or `none`.
    #[schema(pattern = "^(word|none)$")]
    pub timestamps_granularity: Option<String>,
    /// Accepted (ElevenLabs' SDK always sends it, often as `null`); no effect.
    pub webhook_metadata: Option<String>,
    /// Accepted; no effect.
    pub entity_detection: Option<String>,
    /// Accepted; no effect.
    pub entity_redaction: Option<String>,
}

/// A reference clip for voice cloning (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct VoiceCloneForm {
    /// The reference audio (WAV, MP3, WebM, FLAC or Ogg); at most 50 MB, at least 3 s of speech, 6 to 30
    /// seconds recommended.
    #[schema(value_type = String, format = Binary)]
    pub audio: Vec<u8>,
    /// Display name; `Cloned Voice` by default, cut to 100 characters.
    pub name: Option<String>,
    /// Provenance: a statement of the speaker's consent (who agreed, when, how), stored with the voice.
    pub consent: Option<String>,
}

/// An audio-mode agent turn (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ConverseAudioForm {
    /// The user's speech: WAV, MP3 or WebM; at most 25 MB.
    #[schema(value_type = String, format = Binary)]
    pub audio: Vec<u8>,
    /// `general`, `banking` or `health`; default: the session's own when `session_id` is given, else `general`.
    pub scenario: Option<String>,
    /// Voice of the reply.
    pub voice_id: Option<String>,
    /// A conversation to continue (as in the text mode).
    pub session_id: Option<String>,
    /// Pronunciation dictionaries the reply is read with, as a JSON array of locators (as in the text mode).
    #[schema(example = r#"[{"pronunciation_dictionary_id": "pd_3f9a1c2e7b5d4a60b1c2d3e4"}]"#)]
    pub pronunciation_dictionary_locators: Option<String>,
}

/// A WAV file.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary, content_media_type = "audio/wav")]
#[allow(dead_code)]
pub struct WavFile(Vec<u8>);

struct ApiKeyScheme;

impl Modify for ApiKeyScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "xi-api-key",
                "The API key. Every /v1 endpoint needs it (or the bearer scheme); limits are counted per key.",
            ))),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                utoipa::openapi::security::HttpBuilder::new()
                    .scheme(utoipa::openapi::security::HttpAuthScheme::Bearer)
                    .description(Some(
                        "The same API key as `Authorization: Bearer KEY`, as OpenAI clients send it.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document's frame: title, description, security; the paths come from the router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "sauti — Swahili speech API",
        description = "Text-to-speech, asynchronous synthesis jobs, voices, pronunciation dictionaries, speech \
                       recognition, voice cloning and a voice agent for Swahili. Every /v1 response carries X-RateLimit-Limit, X-RateLimit-Remaining \
                       and X-RateLimit-Reset; a 429 also carries Retry-After. Every response carries X-Request-Id. \
                       Errors are application/problem+json.",
        license(name = "See the project README")
    ),
    modifiers(&ApiKeyScheme),
    security(("api_key" = []), ("bearer" = [])),
    components(schemas(Problem)),
    tags(
        (name = "speech", description = "Text-to-speech and synthesis jobs"),
        (name = "voices", description = "The voices of this server"),
        (name = "recognition", description = "Speech recognition"),
        (name = "cloning", description = "Voice cloning (beta)"),
        (name = "pronunciation", description = "Pronunciation dictionaries: aliases and IPA rules a synthesis can name"),
        (name = "agent", description = "The voice agent (beta)"),
        (name = "usage", description = "What a key used this month and may use: characters, audio seconds, agent turns, call seconds"),
        (name = "elevenlabs", description = "The ElevenLabs-compatible API under /elevenlabs, for ElevenLabs' SDKs unchanged"),
        (name = "openai", description = "OpenAI-compatible audio: speech, transcription and models, for OpenAI's SDKs unchanged"),
        (name = "operations", description = "Health, readiness, metrics and this document")
    )
)]
pub struct ApiDoc;

/// Paths that need no key: their operations get an empty security requirement.
pub const OPEN_PATHS: [&str; 5] = ["/", "/healthz", "/readyz", "/metrics", "/openapi.json"];

/// Complete the generated document: open paths need no key; every `/v1` operation documents the rate-limit
/// headers on all its responses, and its 401 and 429 answers (and 400, 413 and 415 where it takes a body);
/// every 429 and 503 carries `Retry-After`.
pub fn finish(mut api: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::path::Operation;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};

    let integer = |description: &str| {
        let header = HeaderBuilder::new()
            .schema(Some(
                utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::Integer),
            ))
            .description(Some(description))
            .build();
        utoipa::openapi::RefOr::T(header)
    };
    let problem = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/problem+json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build(),
            )
            .build()
    };
    if let Some(components) = api.components.as_mut() {
        components
            .schemas
            .insert("ErrorCode".into(), error_codes().into());
    }
    for (path, item) in api.paths.paths.iter_mut() {
        let operations: [&mut Option<Operation>; 4] = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            if OPEN_PATHS.contains(&path.as_str()) {
                operation.security = Some(Vec::new());
                continue;
            }
            if !super::transport::edge::authenticated(path) {
                continue;
            }
            let has_body = operation.request_body.is_some();
            let responses = &mut operation.responses.responses;
            if has_body {
                responses.entry("400".into()).or_insert_with(|| {
                    problem("The body could not be read (malformed JSON or form)").into()
                });
                responses.entry("413".into()).or_insert_with(|| {
                    problem("The body is larger than this endpoint accepts").into()
                });
                responses.entry("415".into()).or_insert_with(|| {
                    problem("The body is not of the documented content type").into()
                });
            }
            responses
                .entry("401".into())
                .or_insert_with(|| problem("Missing or unknown API key").into());
            responses.entry("429".into()).or_insert_with(|| {
                problem("Rate limit exceeded for this key and endpoint category (see Retry-After)")
                    .into()
            });
            for (status, response) in responses.iter_mut() {
                let utoipa::openapi::RefOr::T(response) = response else {
                    continue;
                };
                response.headers.insert(
                    "X-RateLimit-Limit".into(),
                    integer("Requests allowed per minute in this endpoint category"),
                );
                response.headers.insert(
                    "X-RateLimit-Remaining".into(),
                    integer("Requests left before limiting"),
                );
                response.headers.insert(
                    "X-RateLimit-Reset".into(),
                    integer("Unix time (seconds) at which the allowance is full again"),
                );
                if status == "429" || status == "503" || status == "507" {
                    response.headers.insert(
                        "Retry-After".into(),
                        integer("Seconds to wait before retrying; absent when retrying cannot help (see ErrorCode)"),
                    );
                }
            }
        }
    }
    api
}

/// The `ErrorCode` schema: every code a problem's `type` ends with, and what each means.
fn error_codes() -> utoipa::openapi::schema::Object {
    use super::codes::ErrorCode;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let mut description = String::from(
        "The last segment of a problem's `type` (`{public_base_url}/errors/<code>`):\n",
    );
    for code in ErrorCode::ALL {
        let retry = match code.retry_after() {
            Some(_) => "retry with Retry-After",
            None => "retrying cannot help",
        };
        description.push_str(&format!(
            "- `{}` ({}, {retry}): {}\n",
            code.as_str(),
            code.status().as_u16(),
            code.meaning()
        ));
    }
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(ErrorCode::ALL.iter().map(|c| c.as_str())))
        .description(Some(description))
        .build()
}

/// `GET /openapi.json`: this document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", operation_id = "openapi",
    summary = "This API description (OpenAPI 3.1)",
    responses((status = 200, description = "The OpenAPI document", body = Object)))]
pub async fn openapi_json() -> axum::Json<utoipa::openapi::OpenApi> {
    static DOCUMENT: std::sync::OnceLock<utoipa::openapi::OpenApi> = std::sync::OnceLock::new();
    axum::Json(DOCUMENT.get_or_init(super::openapi_document).clone())
}
