//! The ElevenLabs-compatible API under `/elevenlabs`, so ElevenLabs' SDKs work unchanged with
//! `base_url = "http://HOST/elevenlabs"`: speech ([`speech`]), voices and instant cloning ([`voices`]),
//! speech to text ([`recognition`]) and the models list. Keys, limits, isolation and problem+json errors are
//! those of `/v1`; the seed paths keep their own shapes.

pub mod conversations;
pub mod recognition;
pub mod socket;
pub mod speech;
pub mod timestamps;
pub mod voices;

use axum::Json;
use serde::Serialize;

use crate::http::transport::problem::ApiError;

/// Which work a model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text to speech.
    Speech,
    /// Speech to text.
    Recognition,
}

/// The `model_id`s accepted. Synthesis is sauti's voices and recognition is routed by language whatever the
/// name; ElevenLabs' own names are accepted so code written for it runs unchanged.
pub const MODELS: [(&str, Kind, &str); 7] = [
    ("sauti_tts", Kind::Speech, "sauti's Swahili voices"),
    (
        "eleven_multilingual_v2",
        Kind::Speech,
        "accepted name: sauti's Swahili voices",
    ),
    (
        "eleven_turbo_v2_5",
        Kind::Speech,
        "accepted name: sauti's Swahili voices",
    ),
    (
        "eleven_flash_v2_5",
        Kind::Speech,
        "accepted name: sauti's Swahili voices",
    ),
    (
        "sauti_stt",
        Kind::Recognition,
        "sauti's recognition, routed by language",
    ),
    (
        "scribe_v1",
        Kind::Recognition,
        "accepted name: sauti's recognition",
    ),
    (
        "scribe_v2",
        Kind::Recognition,
        "accepted name: sauti's recognition",
    ),
];

/// `model_id` checked against the models of `kind` (absent is the default model): 422 naming them.
pub fn check_model(model: Option<&str>, kind: Kind) -> Result<(), ApiError> {
    let Some(model) = model else {
        return Ok(());
    };
    if MODELS.iter().any(|(id, k, _)| *id == model && *k == kind) {
        return Ok(());
    }
    let names: Vec<&str> = MODELS
        .iter()
        .filter(|(_, k, _)| *k == kind)
        .map(|(id, _, _)| *id)
        .collect();
    Err(ApiError::unprocessable(format!(
        "`model_id` {model:?} is not offered; use one of {}",
        names.join(", ")
    )))
}

/// A language of a model.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModelLanguage {
    /// ISO 639-1 code.
    #[schema(example = "sw")]
    language_id: &'static str,
    /// English name.
    #[schema(example = "Swahili")]
    name: &'static str,
}

/// One model of `GET /elevenlabs/v1/models`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = ElevenLabsModel)]
pub struct Model {
    /// The name to send as `model_id`.
    #[schema(example = "sauti_tts")]
    model_id: &'static str,
    /// What it is.
    name: &'static str,
    /// Whether it synthesises speech.
    can_do_text_to_speech: bool,
    /// Always false.
    can_do_voice_conversion: bool,
    /// Longest text one request may synthesise.
    maximum_text_length_per_request: usize,
    /// Languages it serves: the voices' language, or the languages an installed recognizer serves.
    languages: Vec<ModelLanguage>,
    /// The engines installed behind it (sauti's addition).
    engines: Vec<crate::ops::models::Engine>,
}

/// `GET /elevenlabs/v1/models`: a bare list, as ElevenLabs answers.
#[utoipa::path(get, path = "/elevenlabs/v1/models", operation_id = "elevenlabsModels", tag = "elevenlabs",
    summary = "Models (ElevenLabs-compatible)",
    responses((status = 200, description = "The models", body = Vec<Model>)))]
pub async fn models(
    axum::extract::State(state): axum::extract::State<crate::http::AppState>,
) -> Json<Vec<Model>> {
    let (speech, recognition) = (state.speech_engines(), state.recognition_engines());
    let languages = |engines: &[crate::ops::models::Engine]| {
        let mut codes: Vec<&str> = Vec::new();
        for code in engines.iter().flat_map(|e| e.languages.iter()) {
            if !codes.contains(&code.as_str()) {
                codes.push(code);
            }
        }
        codes
            .into_iter()
            .filter_map(|code| two_letter(code))
            .map(|code| ModelLanguage {
                language_id: code,
                name: language_name(code),
            })
            .collect()
    };
    Json(
        MODELS
            .iter()
            .map(|&(model_id, kind, name)| {
                let engines = match kind {
                    Kind::Speech => speech.clone(),
                    Kind::Recognition => recognition.clone(),
                };
                Model {
                    model_id,
                    name,
                    can_do_text_to_speech: kind == Kind::Speech,
                    can_do_voice_conversion: false,
                    maximum_text_length_per_request: match kind {
                        Kind::Speech => speech::MAX_TEXT_CHARS,
                        Kind::Recognition => 0,
                    },
                    languages: languages(&engines),
                    engines,
                }
            })
            .collect(),
    )
}

/// The English name of a language sauti recognises.
pub fn language_name(code: &str) -> &'static str {
    match code {
        "sw" => "Swahili",
        "en" => "English",
        "fr" => "French",
        "de" => "German",
        "es" => "Spanish",
        "pt" => "Portuguese",
        "ar" => "Arabic",
        "zh" => "Chinese",
        "ja" => "Japanese",
        "ko" => "Korean",
        "ru" => "Russian",
        _ => "Unknown",
    }
}

/// ISO 639-3 codes of the languages sauti recognises, as ElevenLabs writes `language_code` in transcripts.
pub fn three_letter(code: &str) -> &'static str {
    match code {
        "sw" => "swa",
        "en" => "eng",
        "fr" => "fra",
        "de" => "deu",
        "es" => "spa",
        "pt" => "por",
        "ar" => "ara",
        "zh" => "zho",
        "ja" => "jpn",
        "ko" => "kor",
        "ru" => "rus",
        _ => "und",
    }
}

/// A language code as ElevenLabs clients send it (ISO 639-1 or 639-3) in sauti's form (639-1), if known.
pub fn two_letter(code: &str) -> Option<&'static str> {
    let code = code.trim().to_ascii_lowercase();
    crate::asr::LANGUAGES
        .iter()
        .find(|&&two| two == code || three_letter(two) == code || (two == "sw" && code == "swh"))
        .copied()
}
