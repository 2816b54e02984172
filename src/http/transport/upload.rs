//! The one upload pipeline of speech-to-text, cloning and the agent's audio mode: `multipart/form-data` read as
//! it streams, then the audio decoded once admitted. The audio part is counted chunk by chunk and refused with
//! 413 the moment it passes the limit, so no more than the limit is ever buffered; text fields are small and
//! few, and parts nobody asked for are read past without being kept. Handlers validate the fields first, then
//! decode (which also validates the audio), and only then ask whether the work can be done (availability).

use std::collections::HashMap;

use axum::extract::multipart::{Multipart, MultipartError, MultipartRejection};
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};

use crate::audio::{Audio16k, DecodeLimits};
use crate::http::transport::problem::ApiError;
use crate::http::AppState;

/// Longest value of a text field, in bytes.
const FIELD_LIMIT: usize = 4 * 1024;
/// Most parts a form may have.
const MAX_PARTS: usize = 32;
/// Bytes a form may carry besides the audio (boundaries, part headers, text fields, ignored parts).
pub const FORM_OVERHEAD: usize = 256 * 1024;
/// A refused body up to this size is read before the answer, so a client still sending it sees the answer
/// rather than a reset connection.
const DRAIN_LIMIT: usize = 1024 * 1024;

/// The `multipart/form-data` body; any other content type is 415.
pub struct ApiMultipart(pub Multipart);

impl<S: Send + Sync> FromRequest<S> for ApiMultipart {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let multipart = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("multipart/form-data")
            });
        if !multipart {
            let _ = axum::body::to_bytes(request.into_body(), DRAIN_LIMIT).await;
            return Err(ApiError::unsupported_media_type(
                "send the form as multipart/form-data with an `audio` file part",
            ));
        }
        Multipart::from_request(request, state)
            .await
            .map(ApiMultipart)
            .map_err(|rejection: MultipartRejection| {
                ApiError::unsupported_media_type(format!(
                    "send the form as multipart/form-data with an `audio` file part ({})",
                    rejection.body_text()
                ))
            })
    }
}

/// The uploaded file (the audio, or a dictionary file).
#[derive(Debug)]
pub struct FilePart {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The part's declared media type.
    pub content_type: Option<String>,
}

/// A read form: the file and the text fields that were asked for.
#[derive(Debug, Default)]
pub struct Form {
    /// The name of the file part the endpoint reads (`audio`, or `file` on the compatible paths).
    pub part: String,
    /// The file part (`audio`, or the part the endpoint names).
    pub file: Option<FilePart>,
    /// Further file parts of that name, where the endpoint takes several ([`read_form_many`]).
    pub more: Vec<FilePart>,
    /// The file part's file name, if the client gave one.
    pub file_name: Option<String>,
    /// Text fields by name; a field sent more than once (`timestamp_granularities[]`) has its values joined
    /// with commas.
    pub fields: HashMap<String, String>,
    /// Every value of each field, in the order sent (for fields that are lists, such as `keyterms`).
    pub lists: HashMap<String, Vec<String>>,
    /// The name of another file part (the file sent under another name, say `file` for `audio`).
    pub other_file: Option<String>,
}

impl Form {
    /// A text field, if given and not blank.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

impl Form {
    /// Every value sent for `name` (none when it was not sent).
    pub fn values(&self, name: &str) -> Vec<String> {
        self.lists.get(name).cloned().unwrap_or_default()
    }
}

/// Refuse at once (before reading the body) an upload whose declared length cannot fit.
pub fn check_declared_length(headers: &HeaderMap, audio_limit: usize) -> Result<(), ApiError> {
    check_declared_length_of(headers, audio_limit, "audio")
}

/// [`check_declared_length`] for a file of another kind (`what` names it in the refusal).
pub fn check_declared_length_of(
    headers: &HeaderMap,
    limit: usize,
    what: &str,
) -> Result<(), ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(length) if length > (limit + FORM_OVERHEAD) as u64 => Err(too_large(limit, what)),
        _ => Ok(()),
    }
}

fn too_large(limit: usize, what: &str) -> ApiError {
    let size = if limit >= 1024 * 1024 {
        format!("{} MB", limit / (1024 * 1024))
    } else {
        format!("{} KiB", limit / 1024)
    };
    ApiError::too_large(format!(
        "the upload is larger than the limit of {size} ({limit} bytes) of {what}"
    ))
}

fn malformed(error: MultipartError) -> ApiError {
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::too_large(error.body_text());
    }
    if crate::http::transport::problem::stalled(&error) {
        return ApiError::body_timeout();
    }
    ApiError::bad_request(format!("malformed multipart body: {}", error.body_text()))
}

/// Read the form: the `audio` part (at most `audio_limit` bytes) and the text fields named in `fields`.
pub async fn read_form(
    multipart: ApiMultipart,
    audio_limit: usize,
    fields: &[&str],
) -> Result<Form, ApiError> {
    read_form_with(multipart, ("audio", "audio"), audio_limit, fields).await
}

/// Read the form: the file part `part` (`(name, what it holds)`, at most `limit` bytes) and the text fields
/// named in `fields`.
pub async fn read_form_with(
    multipart: ApiMultipart,
    part: (&str, &str),
    limit: usize,
    fields: &[&str],
) -> Result<Form, ApiError> {
    read_parts(multipart, part, false, limit, fields).await
}

/// [`read_form_with`] for an endpoint that takes several files under one name (`files`): the first in
/// [`Form::file`], the rest in [`Form::more`], all of them together at most `limit` bytes.
pub async fn read_form_many(
    multipart: ApiMultipart,
    part: (&str, &str),
    limit: usize,
    fields: &[&str],
) -> Result<Form, ApiError> {
    read_parts(multipart, part, true, limit, fields).await
}

async fn read_parts(
    ApiMultipart(mut multipart): ApiMultipart,
    (part_name, what): (&str, &str),
    many: bool,
    limit: usize,
    fields: &[&str],
) -> Result<Form, ApiError> {
    let audio_limit = limit;
    let mut files_bytes = 0usize;
    let mut form = Form {
        part: part_name.to_string(),
        ..Form::default()
    };
    let mut other_bytes = 0usize;
    let mut parts = 0usize;
    while let Some(mut part) = multipart.next_field().await.map_err(malformed)? {
        parts += 1;
        if parts > MAX_PARTS {
            return Err(ApiError::unprocessable(format!(
                "the form has more than {MAX_PARTS} parts"
            )));
        }
        let name = part.name().unwrap_or_default().to_string();
        if name == part_name {
            if form.file.is_some() && !many {
                return Err(ApiError::unprocessable(format!(
                    "the form has more than one `{part_name}` part"
                )));
            }
            let content_type = part.content_type().map(str::to_string);
            form.file_name = part.file_name().map(str::to_string);
            // Chunks are kept as they come (exact-size copies, no doubling buffer) and joined once the part is
            // complete and within the limit: a refused upload never holds more than the limit.
            let mut chunks: Vec<axum::body::Bytes> = Vec::new();
            let mut size = 0usize;
            while let Some(chunk) = part.chunk().await.map_err(malformed)? {
                size += chunk.len();
                if files_bytes + size > audio_limit {
                    return Err(too_large(audio_limit, what));
                }
                chunks.push(axum::body::Bytes::copy_from_slice(&chunk));
            }
            files_bytes += size;
            let mut bytes = Vec::with_capacity(size);
            for chunk in chunks {
                bytes.extend_from_slice(&chunk);
            }
            let file = FilePart {
                bytes,
                content_type,
            };
            match form.file {
                None => form.file = Some(file),
                Some(_) => form.more.push(file),
            }
            continue;
        }
        if part.file_name().is_some() {
            // A file under another name: read past (within the limit) and named if the file part is missing.
            let mut size = 0usize;
            while let Some(chunk) = part.chunk().await.map_err(malformed)? {
                size += chunk.len();
                if size > audio_limit {
                    return Err(ApiError::too_large(format!(
                        "the file part `{name}` is larger than the limit of {} MB ({audio_limit} bytes)",
                        audio_limit / (1024 * 1024)
                    )));
                }
            }
            form.other_file.get_or_insert(name);
            continue;
        }
        let wanted = fields.contains(&name.as_str());
        let mut value = Vec::new();
        while let Some(chunk) = part.chunk().await.map_err(malformed)? {
            other_bytes += chunk.len();
            if other_bytes > FORM_OVERHEAD {
                return Err(ApiError::too_large(format!(
                    "the form's text parts (`{name}` and those before it) are larger than {} KiB; only the `{part_name}` file part may be large",
                    FORM_OVERHEAD / 1024
                )));
            }
            if wanted {
                if value.len() + chunk.len() > FIELD_LIMIT {
                    return Err(ApiError::unprocessable(format!(
                        "`{name}` is longer than {FIELD_LIMIT} bytes"
                    )));
                }
                value.extend_from_slice(&chunk);
            }
        }
        if wanted {
            let text = String::from_utf8(value)
                .map_err(|_| ApiError::unprocessable(format!("`{name}` is not UTF-8 text")))?;
            form.lists
                .entry(name.clone())
                .or_default()
                .push(text.clone());
            form.fields
                .entry(name)
                .and_modify(|joined| {
                    joined.push(',');
                    joined.push_str(&text);
                })
                .or_insert(text);
        }
    }
    Ok(form)
}

/// The audio part, or 422 when the form has none (or an empty one, or one declared as something other than
/// audio). Browsers label WebM recordings `video/webm` and some clients send `application/octet-stream`; both
/// are accepted, and the bytes decide.
pub fn require_audio(form: &mut Form) -> Result<FilePart, ApiError> {
    let part = &form.part;
    let audio = form.file.take().ok_or_else(|| match &form.other_file {
        Some(name) => ApiError::unprocessable(format!(
            "the form has no `{part}` file part: the file came in a part named `{name}`; name that part `{part}`"
        )),
        None => ApiError::unprocessable(format!("the form has no `{part}` file part")),
    })?;
    if let Some(kind) = &audio.content_type {
        let essence = kind
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let acceptable = essence.starts_with("audio/")
            || matches!(
                essence.as_str(),
                "video/webm" | "video/ogg" | "application/ogg" | "application/octet-stream" | ""
            );
        if !acceptable {
            return Err(ApiError::unprocessable(format!(
                "the `{part}` part is declared as {essence}, not audio/*"
            )));
        }
    }
    if audio.bytes.is_empty() {
        return Err(ApiError::unprocessable(format!(
            "the `{part}` part is empty"
        )));
    }
    Ok(audio)
}

/// Decode an upload to 16 kHz mono off the async threads, once admitted (at most one decode per core runs at
/// once, so memory and CPU stay bounded however many uploads arrive); undecodable audio is 422.
pub async fn decode_audio(state: &AppState, form: &mut Form) -> Result<Audio16k, ApiError> {
    decode_audio_within(state, form, DecodeLimits::default()).await
}

/// [`decode_audio`] with other limits (what is left of a request's budget over several files).
pub async fn decode_audio_within(
    state: &AppState,
    form: &mut Form,
    limits: DecodeLimits,
) -> Result<Audio16k, ApiError> {
    let bytes = require_audio(form)?.bytes;
    state.decode(bytes, limits).await
}
