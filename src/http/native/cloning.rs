//! `POST /v1/voice-clone/` and `DELETE /v1/voices/{voice_id}`: cloned voices, private to the key that made them.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::clone::ClonedVoiceSummary;
use crate::http::transport::auth::Caller;
use crate::http::transport::extract::ApiPath;
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::ops::clone::CloneVoice;

/// `POST /v1/voice-clone/`.
#[utoipa::path(post, path = "/v1/voice-clone/", operation_id = "cloneVoice", tag = "cloning", summary = "Clone a voice from a clip",
    request_body(content = crate::http::openapi::VoiceCloneForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "The new voice, usable by this key wherever a voice is (Location: /v1/voices/{voice_id})", body = ClonedVoiceSummary),
        (status = 400, description = "A malformed multipart body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "This key has as many cloned voices as allowed", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The audio is larger than 50 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 415, description = "The body is not multipart/form-data", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `audio` part, undecodable audio, or less than 3 s of speech in it (the detail says how much was found)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Cloning is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 507, description = "The server's disk is full (insufficient_storage, Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn clone_voice(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Response, ApiError> {
    let limit = state.settings.clone.max_upload_bytes;
    upload::check_declared_length(&headers, limit)?;
    let mut form = upload::read_form(multipart, limit, &["name", "consent"]).await?;
    let request = CloneVoice {
        owner: caller.key_id.to_string(),
        name: form.field("name").map(str::to_string),
        consent: form.field("consent").map(str::to_string),
        recordings: upload::require_audio(&mut form).map(|file| vec![file.bytes]),
    };
    let summary = state.clone_voice(request).await?;
    let location = format!("/v1/voices/{}", summary.voice_id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(summary),
    )
        .into_response())
}

/// `DELETE /v1/voices/{voice_id}` (extension): the owner removes a cloned voice.
#[utoipa::path(delete, path = "/v1/voices/{voice_id}", operation_id = "deleteVoice", tag = "voices", summary = "Delete a cloned voice",
    params(("voice_id" = String, Path, description = "A cloned voice of this key", example = "cv_3f9a1c2e7b5d4a60")),
    responses(
        (status = 204, description = "Deleted; synthesis with it now answers 404"),
        (status = 404, description = "No cloned voice by that id for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 409, description = "A built-in or configured voice, which cannot be deleted", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn delete_voice(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(voice_id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.delete_voice(&caller.key_id, &voice_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
