//! OpenAI-compatible audio endpoints, so OpenAI's SDKs work unchanged with `base_url = ".../v1"`:
//! `POST /v1/audio/speech`, `POST /v1/audio/transcriptions`, `POST /v1/audio/translations` and
//! `GET /v1/models`. The key comes as `Authorization: Bearer` (accepted everywhere); limits, isolation and
//! problem+json errors are those of every other path, and the problems here also carry the
//! `{"error": {"message", …}}` member OpenAI's SDKs read.

mod events;
pub mod realtime;
pub mod speech;
pub mod transcription;

use std::sync::OnceLock;

use axum::Json;
use serde::Serialize;

use axum::extract::State;

use crate::http::transport::extract::ApiPath;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::models::Engine;

/// What a model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `POST /v1/audio/speech`.
    Speech,
    /// `POST /v1/audio/transcriptions` and `/translations`.
    Recognition,
}

/// The model names accepted, with what each does. Synthesis is sauti's voices whatever the name; recognition
/// is routed by language (a CTC model where one is installed for it, else Whisper) whatever the name. OpenAI's
/// own names are accepted so that code written for it runs unchanged.
pub const MODELS: [(&str, Kind); 8] = [
    ("sauti-tts", Kind::Speech),
    ("tts-1", Kind::Speech),
    ("tts-1-hd", Kind::Speech),
    ("gpt-4o-mini-tts", Kind::Speech),
    ("sauti-stt", Kind::Recognition),
    ("whisper-1", Kind::Recognition),
    ("gpt-4o-transcribe", Kind::Recognition),
    ("gpt-4o-mini-transcribe", Kind::Recognition),
];

/// `model` checked against the models of `task`: 404 naming them when it is none of them.
pub fn check_model(model: &str, task: Kind) -> Result<(), ApiError> {
    if MODELS.iter().any(|(name, t)| *name == model && *t == task) {
        return Ok(());
    }
    let names: Vec<&str> = MODELS
        .iter()
        .filter(|(_, t)| *t == task)
        .map(|(name, _)| *name)
        .collect();
    Err(ApiError::not_found(format!(
        "model {model:?} does not exist here; use one of {}",
        names.join(", ")
    )))
}

/// One model of `GET /v1/models`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = OpenAiModel)]
pub struct Model {
    /// The name to send as `model`.
    #[schema(example = "sauti-tts")]
    id: &'static str,
    /// Always `model`.
    #[schema(example = "model")]
    object: &'static str,
    /// When this server started serving it (Unix seconds).
    created: u64,
    /// Always `sauti`.
    #[schema(example = "sauti")]
    owned_by: &'static str,
    /// The engines installed behind the name, with the languages (and voices) they serve; empty when none is
    /// (recognition without a model).
    engines: Vec<Engine>,
}

/// Body of `GET /v1/models`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = OpenAiModelList)]
pub struct ModelList {
    /// Always `list`.
    #[schema(example = "list")]
    object: &'static str,
    data: Vec<Model>,
}

/// Every model, with the engines installed behind it.
fn models(state: &AppState) -> Vec<Model> {
    static STARTED: OnceLock<u64> = OnceLock::new();
    let created = *STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let (speech, recognition) = (state.speech_engines(), state.recognition_engines());
    MODELS
        .iter()
        .map(|&(id, kind)| Model {
            id,
            object: "model",
            created,
            owned_by: "sauti",
            engines: match kind {
                Kind::Speech => speech.clone(),
                Kind::Recognition => recognition.clone(),
            },
        })
        .collect()
}

/// `GET /v1/models`.
#[utoipa::path(get, path = "/v1/models", operation_id = "listModels", tag = "openai", summary = "Models (OpenAI-compatible)",
    description = "The names `POST /v1/audio/speech` and `POST /v1/audio/transcriptions` accept as `model`, each with \
                   the engines installed behind it and the languages (and voices) they serve.",
    responses((status = 200, description = "The models", body = ModelList)))]
pub async fn list(State(state): State<AppState>) -> Json<ModelList> {
    Json(ModelList {
        object: "list",
        data: models(&state),
    })
}

/// `GET /v1/models/{model}`.
#[utoipa::path(get, path = "/v1/models/{model}", operation_id = "getModel", tag = "openai", summary = "One model (OpenAI-compatible)",
    params(("model" = String, Path, description = "A model name", example = "whisper-1")),
    responses(
        (status = 200, description = "The model", body = Model),
        (status = 404, description = "No such model", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(model): ApiPath<String>,
) -> Result<Json<Model>, ApiError> {
    models(&state)
        .into_iter()
        .find(|m| m.id == model)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("model {model:?} does not exist here")))
}
