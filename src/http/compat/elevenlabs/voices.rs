//! Voices in ElevenLabs' shapes: `GET /elevenlabs/v1/voices`, `GET /elevenlabs/v2/voices` (search and pages),
//! `GET` and `DELETE /elevenlabs/v1/voices/{voice_id}`, and instant cloning, `POST /elevenlabs/v1/voices/add`.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::{ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::ops::clone::CloneVoice;
use crate::tts::catalog::{VoiceInfo, VoiceStatus};

/// A voice as ElevenLabs describes one.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ElevenVoice {
    /// The id to synthesise with.
    #[schema(example = "zuri")]
    voice_id: String,
    /// Display name.
    name: String,
    /// `premade` (the server's voices) or `cloned` (this key's).
    #[schema(example = "premade")]
    category: &'static str,
    /// `language`, `locale`, `gender`, `engine`, `status`.
    labels: BTreeMap<&'static str, String>,
    /// One line about the voice (an inactive one: what to install).
    description: String,
    /// When a cloned voice was made (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at_unix: Option<i64>,
    /// Always true for a cloned voice of this key.
    is_owner: bool,
}

impl From<VoiceInfo> for ElevenVoice {
    fn from(info: VoiceInfo) -> Self {
        let created_at_unix = info.created_at.as_deref().and_then(|at| {
            time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
                .ok()
                .map(|t| t.unix_timestamp())
        });
        let status = match info.status {
            VoiceStatus::Active => "active",
            VoiceStatus::Inactive => "inactive",
        };
        let labels = BTreeMap::from([
            ("language", info.language_code),
            ("locale", info.locale),
            ("gender", info.gender),
            ("engine", info.engine),
            ("status", status.to_string()),
        ]);
        let description = match info.status_detail {
            Some(detail) => format!("{} ({detail})", info.description),
            None => info.description,
        };
        Self {
            voice_id: info.voice_id,
            name: info.name,
            category: if created_at_unix.is_some() {
                "cloned"
            } else {
                "premade"
            },
            labels,
            description,
            created_at_unix,
            is_owner: created_at_unix.is_some(),
        }
    }
}

/// The voices `caller` can synthesise with now. ElevenLabs clients take every listed voice as usable, so a
/// voice whose model is not installed is left out here (`/v1/voices` lists it, saying what to install).
fn usable(state: &AppState, caller: &Caller) -> Vec<ElevenVoice> {
    state
        .voices
        .list_for(&caller.key_id)
        .into_iter()
        .filter(|info| info.status == VoiceStatus::Active)
        .map(ElevenVoice::from)
        .collect()
}

/// `{"voices": [...]}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ElevenVoices {
    voices: Vec<ElevenVoice>,
}

/// `GET /elevenlabs/v1/voices`: every voice this key can use.
#[utoipa::path(get, path = "/elevenlabs/v1/voices", operation_id = "elevenlabsVoices", tag = "elevenlabs",
    summary = "Voices (ElevenLabs-compatible)",
    responses((status = 200, description = "The voices that can synthesise now: the server's, then this key's cloned voices", body = ElevenVoices)))]
pub async fn all(State(state): State<AppState>, caller: Caller) -> Json<ElevenVoices> {
    state.refresh_voices_of(&caller.key_id).await;
    Json(ElevenVoices {
        voices: usable(&state, &caller),
    })
}

/// The query of `GET /elevenlabs/v2/voices`. Other ElevenLabs filters are accepted and have no effect.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Where to continue: the `next_page_token` of the page before.
    #[param(pattern = "^[0-9]{1,6}$")]
    pub next_page_token: Option<String>,
    /// Voices per page, 1 to 100 (10 by default).
    #[param(minimum = 1, maximum = 100)]
    pub page_size: Option<usize>,
    /// Words the name or description contains (any case).
    pub search: Option<String>,
    /// `name` (default) or `created_at_unix`.
    #[param(pattern = "^(name|created_at_unix)$")]
    pub sort: Option<String>,
    /// `asc` (default) or `desc`.
    #[param(pattern = "^(asc|desc)$")]
    pub sort_direction: Option<String>,
    /// `personal` (this key's cloned voices), `default` (the server's), or omitted: both.
    #[param(pattern = "^(personal|default|cloned|premade)$")]
    pub voice_type: Option<String>,
    /// `premade` or `cloned`.
    #[param(pattern = "^(premade|cloned)$")]
    pub category: Option<String>,
}

/// One page of `GET /elevenlabs/v2/voices`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct VoicePage {
    voices: Vec<ElevenVoice>,
    /// Whether another page follows.
    has_more: bool,
    /// Voices matching, over all pages.
    total_count: usize,
    /// The token for the next page.
    next_page_token: Option<String>,
}

/// `GET /elevenlabs/v2/voices`.
#[utoipa::path(get, path = "/elevenlabs/v2/voices", operation_id = "elevenlabsSearchVoices", tag = "elevenlabs",
    summary = "Search voices (ElevenLabs-compatible)", params(SearchQuery),
    responses(
        (status = 200, description = "One page of the matching voices", body = VoicePage),
        (status = 400, description = "A malformed query (a page size that is not a number)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "A page size, sort, page token or filter value that is not offered", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Json<VoicePage>, ApiError> {
    let (start, size) = query.page()?;
    let category = query.category()?;
    let wanted = query.search.as_deref().unwrap_or_default().to_lowercase();
    state.refresh_voices_of(&caller.key_id).await;
    let mut voices: Vec<ElevenVoice> = usable(&state, &caller)
        .into_iter()
        .filter(|v| category.is_none_or(|c| v.category == c))
        .filter(|v| {
            wanted.is_empty()
                || v.name.to_lowercase().contains(&wanted)
                || v.description.to_lowercase().contains(&wanted)
        })
        .collect();
    query.order(&mut voices)?;
    let total_count = voices.len();
    let end = start.saturating_add(size).min(total_count);
    let has_more = end < total_count;
    Ok(Json(VoicePage {
        voices: voices.into_iter().skip(start).take(size).collect(),
        has_more,
        total_count,
        next_page_token: has_more.then(|| end.to_string()),
    }))
}

impl SearchQuery {
    /// Where the page starts and how many voices it holds.
    fn page(&self) -> Result<(usize, usize), ApiError> {
        let size = self.page_size.unwrap_or(10);
        if !(1..=100).contains(&size) {
            return Err(ApiError::unprocessable("`page_size` must be from 1 to 100"));
        }
        let start = match self.next_page_token.as_deref() {
            None => 0,
            Some(token) => token.parse::<usize>().map_err(|_| {
                ApiError::unprocessable("`next_page_token` is not a token this server gave")
            })?,
        };
        Ok((start, size))
    }

    /// The category asked for, as the voices name theirs.
    fn category(&self) -> Result<Option<&'static str>, ApiError> {
        match self.voice_type.as_deref().or(self.category.as_deref()) {
            None => Ok(None),
            Some("personal" | "cloned") => Ok(Some("cloned")),
            Some("default" | "premade") => Ok(Some("premade")),
            Some(other) => Err(ApiError::unprocessable(format!(
                "voice type {other:?} is not offered; use personal, default, cloned or premade"
            ))),
        }
    }

    /// `voices` in the order asked for.
    fn order(&self, voices: &mut [ElevenVoice]) -> Result<(), ApiError> {
        match self.sort.as_deref() {
            None | Some("name") => voices.sort_by(|a, b| a.name.cmp(&b.name)),
            Some("created_at_unix") => voices.sort_by_key(|v| v.created_at_unix),
            Some(other) => {
                return Err(ApiError::unprocessable(format!(
                    "`sort` {other:?} is not offered; use name or created_at_unix"
                )))
            }
        }
        match self.sort_direction.as_deref() {
            None | Some("asc") => Ok(()),
            Some("desc") => {
                voices.reverse();
                Ok(())
            }
            Some(other) => Err(ApiError::unprocessable(format!(
                "`sort_direction` {other:?} is not offered; use asc or desc"
            ))),
        }
    }
}

/// `GET /elevenlabs/v1/voices/{voice_id}`.
#[utoipa::path(get, path = "/elevenlabs/v1/voices/{voice_id}", operation_id = "elevenlabsVoice", tag = "elevenlabs",
    summary = "One voice (ElevenLabs-compatible)",
    params(("voice_id" = String, Path, description = "The voice id", example = "zuri")),
    responses(
        (status = 200, description = "The voice", body = ElevenVoice),
        (status = 404, description = "No such voice (another key's cloned voice included)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
) -> Result<Json<ElevenVoice>, ApiError> {
    state.has_voice(&caller.key_id, &voice_id).await;
    state
        .voices
        .get_for(&caller.key_id, &voice_id)
        .map(|info| Json(ElevenVoice::from(info)))
        .ok_or_else(|| ApiError::not_found(format!("voice {voice_id:?} not found")))
}

/// `{"status": "ok"}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Deleted {
    #[schema(example = "ok")]
    status: &'static str,
}

/// `DELETE /elevenlabs/v1/voices/{voice_id}`.
#[utoipa::path(delete, path = "/elevenlabs/v1/voices/{voice_id}", operation_id = "elevenlabsDeleteVoice", tag = "elevenlabs",
    summary = "Delete a cloned voice (ElevenLabs-compatible)",
    params(("voice_id" = String, Path, description = "A cloned voice of this key", example = "cv_3f9a1c2e7b5d4a60")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 404, description = "No cloned voice by that id for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "One of the server's own voices", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn delete(
    state: State<AppState>,
    caller: Caller,
    voice_id: ApiPath<String>,
) -> Result<Json<Deleted>, ApiError> {
    crate::http::native::cloning::delete_voice(state, caller, voice_id).await?;
    Ok(Json(Deleted { status: "ok" }))
}

/// The answer to an instant clone.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Added {
    /// The new voice, usable by this key wherever a voice is.
    #[schema(example = "cv_3f9a1c2e7b5d4a60")]
    voice_id: String,
    /// Always false: sauti asks for a statement of consent instead (the `description` part is kept as it).
    requires_verification: bool,
}

/// `POST /elevenlabs/v1/voices/add`: an instant clone from one or more `files`.
#[utoipa::path(post, path = "/elevenlabs/v1/voices/add", operation_id = "elevenlabsAddVoice", tag = "elevenlabs",
    summary = "Instant voice clone (ElevenLabs-compatible)",
    request_body(content = crate::http::openapi::InstantCloneForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The new voice", body = Added),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "This key has as many cloned voices as allowed", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The files are larger than 50 MB together", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `files` part, undecodable audio, or less than 3 s of speech in all of it", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Cloning is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 507, description = "The server's disk is full (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn add(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Json<Added>, ApiError> {
    let limit = state.settings.clone.max_upload_bytes;
    upload::check_declared_length_of(&headers, limit, "audio")?;
    let fields = ["name", "description", "labels", "remove_background_noise"];
    let mut form = upload::read_form_many(multipart, ("files", "audio"), limit, &fields).await?;
    let recordings = std::iter::once(upload::require_audio(&mut form))
        .chain(std::mem::take(&mut form.more).into_iter().map(|file| {
            form.file = Some(file);
            upload::require_audio(&mut form)
        }))
        .map(|file| file.map(|f| f.bytes))
        .collect::<Result<Vec<_>, _>>();
    let request = CloneVoice {
        owner: caller.key_id.to_string(),
        name: form.field("name").map(str::to_string),
        consent: form.field("description").map(str::to_string),
        recordings,
    };
    let summary = state.clone_voice(request).await?;
    Ok(Json(Added {
        voice_id: summary.voice_id,
        requires_verification: false,
    }))
}
