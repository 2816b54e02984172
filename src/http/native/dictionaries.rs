//! `/v1/pronunciation-dictionaries`: pronunciation dictionaries in ElevenLabs' shapes, private to the key that
//! made them (another key gets 404, as for a dictionary that does not exist).

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::dictionaries::{DictionaryError, NewDictionary};
use crate::http::transport::auth::Caller;
use crate::http::transport::extract::{ApiJson, ApiPath, ApiQuery};
use crate::http::transport::problem::ApiError;
use crate::http::transport::upload::{self, ApiMultipart};
use crate::http::AppState;
use crate::storage::DictionaryRecord;
use crate::tts::pronunciation::{self, Rule, MAX_FILE_BYTES};

/// Body of `POST /v1/pronunciation-dictionaries/add-from-rules`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AddFromRules {
    /// Display name (1 to 100 characters, not only spaces).
    #[schema(
        example = "Majina na chapa",
        min_length = 1,
        max_length = 100,
        pattern = r"\S"
    )]
    pub name: String,
    /// What the dictionary is for (at most 1,000 characters).
    #[serde(default)]
    pub description: Option<String>,
    /// The rules, applied in order (1 to 1,000). Other members ElevenLabs clients send (`workspace_access`)
    /// are ignored: a dictionary belongs to the key that made it.
    #[schema(min_items = 1, max_items = 1000)]
    pub rules: Vec<Rule>,
}

/// The W3C PLS upload of `POST /v1/pronunciation-dictionaries/add-from-file` (`multipart/form-data`).
// Documentation only; `deny_unknown_fields` makes the schema closed (`additionalProperties: false`).
#[derive(utoipa::ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct AddFromFileForm {
    /// A W3C PLS lexicon (`alphabet="ipa"`); JSON rules and lexicon TOML files are read too. At most 1 MB.
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    /// Display name (1 to 100 characters, not only spaces).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: String,
    /// What the dictionary is for.
    pub description: Option<String>,
    /// Accepted for compatibility and ignored.
    pub workspace_access: Option<String>,
}

/// 201 body of a created dictionary.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DictionaryCreated {
    /// Identifier, for `pronunciation_dictionary_locators`.
    #[schema(example = "pd_3f9a1c2e7b5d4a60b1c2d3e4")]
    id: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Id of the API key that made it.
    created_by: String,
    creation_time_unix: i64,
    /// The version of its rules.
    #[schema(example = "pdv_8e1b2c3d4f5a6b7c8d9e0f1a")]
    version_id: String,
    version_rules_num: usize,
}

/// A dictionary as listed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DictionaryMetadata {
    id: String,
    latest_version_id: String,
    latest_version_rules_num: usize,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    created_by: String,
    creation_time_unix: i64,
}

impl From<&DictionaryRecord> for DictionaryMetadata {
    fn from(d: &DictionaryRecord) -> Self {
        Self {
            id: d.id.clone(),
            latest_version_id: d.version_id.clone(),
            latest_version_rules_num: d.rules.len(),
            name: d.name.clone(),
            description: d.description.clone(),
            created_by: d.owner.clone(),
            creation_time_unix: d.created_unix,
        }
    }
}

/// A dictionary with its rules.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DictionaryWithRules {
    #[serde(flatten)]
    metadata: DictionaryMetadata,
    /// The rules, in the order they apply.
    rules: Vec<Rule>,
}

/// `GET /v1/pronunciation-dictionaries` body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DictionaryList {
    /// This page, newest first.
    pronunciation_dictionaries: Vec<DictionaryMetadata>,
    /// Pass as `cursor` for the next page.
    next_cursor: Option<String>,
    has_more: bool,
}

/// Query of the list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Where to continue: the `next_cursor` of the previous page.
    #[param(pattern = "^[0-9]*$")]
    cursor: Option<String>,
    /// Dictionaries per page, 1 to 100 (30 by default).
    #[param(minimum = 1, maximum = 100)]
    page_size: Option<usize>,
}

fn created(record: &DictionaryRecord) -> Response {
    let body = DictionaryCreated {
        id: record.id.clone(),
        name: record.name.clone(),
        description: record.description.clone(),
        created_by: record.owner.clone(),
        creation_time_unix: record.created_unix,
        version_id: record.version_id.clone(),
        version_rules_num: record.rules.len(),
    };
    let location = format!("/v1/pronunciation-dictionaries/{}", record.id);
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(body),
    )
        .into_response()
}

async fn create_from_rules(
    state: &AppState,
    caller: Caller,
    body: AddFromRules,
) -> Result<Response, ApiError> {
    let new = NewDictionary {
        name: body.name,
        description: body.description,
        rules: body.rules,
    };
    let record = state.dictionaries.create(&caller.key_id, new).await?;
    Ok(created(&record))
}

/// `POST /v1/pronunciation-dictionaries/add-from-rules`.
#[utoipa::path(post, path = "/v1/pronunciation-dictionaries/add-from-rules", operation_id = "addDictionaryFromRules",
    tag = "pronunciation", summary = "Create a pronunciation dictionary from rules",
    description = "Aliases respell a word or phrase; phoneme rules give a word's IPA. Every rule is checked before anything is kept.",
    request_body = AddFromRules,
    responses(
        (status = 201, description = "Created (Location: /v1/pronunciation-dictionaries/{id})", body = DictionaryCreated),
        (status = 409, description = "This key has as many dictionaries as allowed (dictionary_limit_reached)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "A bad rule (named by position, with the IPA symbol at fault, or a reading longer than 8 times what it replaces and over 64 characters), too many rules, or a bad name (empty, over 100 characters, or with a control or invisible character)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn add_from_rules(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<AddFromRules>,
) -> Result<Response, ApiError> {
    create_from_rules(&state, caller, body).await
}

/// `POST /v1/pronunciation-dictionaries`: the same as `add-from-rules`.
#[utoipa::path(post, path = "/v1/pronunciation-dictionaries", operation_id = "createDictionary",
    tag = "pronunciation", summary = "Create a pronunciation dictionary from rules (same as add-from-rules)",
    request_body = AddFromRules,
    responses(
        (status = 201, description = "Created (Location: /v1/pronunciation-dictionaries/{id})", body = DictionaryCreated),
        (status = 409, description = "This key has as many dictionaries as allowed (dictionary_limit_reached)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "A bad rule (named by position, with the IPA symbol at fault, or a reading longer than 8 times what it replaces and over 64 characters), too many rules, or a bad name (empty, over 100 characters, or with a control or invisible character)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<AddFromRules>,
) -> Result<Response, ApiError> {
    create_from_rules(&state, caller, body).await
}

/// `POST /v1/pronunciation-dictionaries/add-from-file`.
#[utoipa::path(post, path = "/v1/pronunciation-dictionaries/add-from-file", operation_id = "addDictionaryFromFile",
    tag = "pronunciation", summary = "Create a pronunciation dictionary from a PLS file",
    request_body(content = AddFromFileForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "Created (Location: /v1/pronunciation-dictionaries/{id})", body = DictionaryCreated),
        (status = 409, description = "This key has as many dictionaries as allowed (dictionary_limit_reached)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 413, description = "The file is larger than 1 MB", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "No `file` or `name`, a bad name, a file that is not valid (the line at fault is named), an unknown IPA symbol, a reading longer than 8 times what it replaces and over 64 characters, or more than 1,000 rules", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable, or every file reader is busy (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn add_from_file(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    multipart: ApiMultipart,
) -> Result<Response, ApiError> {
    const WHAT: (&str, &str) = ("file", "dictionary file");
    upload::check_declared_length_of(&headers, MAX_FILE_BYTES, WHAT.1)?;
    let fields = ["name", "description", "workspace_access"];
    let form = upload::read_form_with(multipart, WHAT, MAX_FILE_BYTES, &fields).await?;
    let name = form
        .field("name")
        .ok_or_else(|| ApiError::unprocessable("the form has no `name`"))?
        .to_string();
    let description = form.field("description").map(str::to_string);
    let file = form.file.ok_or_else(|| match &form.other_file {
        Some(other) => ApiError::unprocessable(format!(
            "the form has no `file` part: the file came in a part named `{other}`; name that part `file`"
        )),
        None => ApiError::unprocessable("the form has no `file` part (a PLS lexicon)"),
    })?;
    // The name is checked before the file is read.
    crate::dictionaries::check_name(&name)?;
    let file_name = form.file_name.unwrap_or_else(|| "upload.pls".into());
    let rules = read_file(&state, file_name, file.bytes).await?;
    let new = NewDictionary {
        name,
        description,
        rules,
    };
    let record = state.dictionaries.create(&caller.key_id, new).await?;
    Ok(created(&record))
}

/// Read a dictionary file's rules off the async threads, once admitted like every other heavy parse (at most
/// one per core at once), so that a large file never holds up other requests.
async fn read_file(state: &AppState, name: String, bytes: Vec<u8>) -> Result<Vec<Rule>, ApiError> {
    let permit = state
        .codec_permit("every file reader is busy; retry shortly")
        .await?;
    tokio::task::spawn_blocking(move || {
        let _admitted = permit;
        let text = String::from_utf8(bytes)
            .map_err(|_| ApiError::unprocessable("the file is not UTF-8 text"))?;
        pronunciation::file::read_rules(&name, &text)
            .map_err(|e| ApiError::from(DictionaryError::from(e)))
    })
    .await
    .map_err(|_| ApiError::unprocessable("the dictionary file could not be read"))?
}

/// `GET /v1/pronunciation-dictionaries`.
#[utoipa::path(get, path = "/v1/pronunciation-dictionaries", operation_id = "listDictionaries",
    tag = "pronunciation", summary = "List this key's pronunciation dictionaries",
    params(ListQuery),
    responses(
        (status = 200, description = "This key's dictionaries, newest first", body = DictionaryList),
        (status = 400, description = "A query that does not parse (a page size that is not a number)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "A bad cursor or page size", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<DictionaryList>, ApiError> {
    let limit = query.page_size.unwrap_or(30);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::unprocessable(
            "`page_size` must be between 1 and 100",
        ));
    }
    let offset = match query.cursor.as_deref() {
        None | Some("") => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| ApiError::unprocessable("`cursor` is not one this server gave"))?,
    };
    let (page, more) = state
        .dictionaries
        .list(&caller.key_id, offset, limit)
        .await?;
    Ok(Json(DictionaryList {
        next_cursor: more.then(|| (offset + page.len()).to_string()),
        pronunciation_dictionaries: page.iter().map(DictionaryMetadata::from).collect(),
        has_more: more,
    }))
}

/// `GET /v1/pronunciation-dictionaries/{pronunciation_dictionary_id}`.
#[utoipa::path(get, path = "/v1/pronunciation-dictionaries/{pronunciation_dictionary_id}", operation_id = "getDictionary",
    tag = "pronunciation", summary = "Read a pronunciation dictionary with its rules",
    params(("pronunciation_dictionary_id" = String, Path, description = "A dictionary of this key")),
    responses(
        (status = 200, description = "The dictionary and its rules", body = DictionaryWithRules),
        (status = 404, description = "No such dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<DictionaryWithRules>, ApiError> {
    let record = state.dictionaries.get(&caller.key_id, &id).await?;
    Ok(Json(DictionaryWithRules {
        metadata: DictionaryMetadata::from(&record),
        rules: record.rules,
    }))
}

/// `DELETE /v1/pronunciation-dictionaries/{pronunciation_dictionary_id}`.
#[utoipa::path(delete, path = "/v1/pronunciation-dictionaries/{pronunciation_dictionary_id}", operation_id = "deleteDictionary",
    tag = "pronunciation", summary = "Delete a pronunciation dictionary",
    description = "Synthesis naming it then answers 404; jobs already created keep the rules they were created with.",
    params(("pronunciation_dictionary_id" = String, Path, description = "A dictionary of this key")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such dictionary for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.dictionaries.delete(&caller.key_id, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/pronunciation-dictionaries/{pronunciation_dictionary_id}/{version_id}/download`.
#[utoipa::path(get, path = "/v1/pronunciation-dictionaries/{pronunciation_dictionary_id}/{version_id}/download",
    operation_id = "downloadDictionary", tag = "pronunciation", summary = "Download a dictionary version as a PLS file",
    params(("pronunciation_dictionary_id" = String, Path, description = "A dictionary of this key"),
        ("version_id" = String, Path, description = "Its version")),
    responses(
        (status = 200, description = "The rules as a W3C PLS lexicon", content_type = "application/pls+xml", body = String),
        (status = 404, description = "No such dictionary or version for this key", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "Storage unavailable (Retry-After)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn download(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    let record = state
        .dictionaries
        .get_version(&caller.key_id, &id, &version_id)
        .await?;
    let disposition = format!("attachment; filename=\"{}.pls\"", record.id);
    Ok((
        [
            (header::CONTENT_TYPE, "application/pls+xml".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        pronunciation::pls::write(&record.rules),
    )
        .into_response())
}
