//! The API's error vocabulary: every refusal is one of these codes, with its status, title, whether retrying can
//! help (and after how long), and what it means. Problem responses, the OpenAPI document and the table in
//! docs/errors.md are all written from this one list.

use axum::http::StatusCode;

/// The last segment of a problem's `type`: `{public_base_url}/errors/<code>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    BadRequest,
    Unauthorized,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    JobNotComplete,
    JobFailed,
    SessionScenarioMismatch,
    VoiceLimitReached,
    VoiceNotDeletable,
    DictionaryLimitReached,
    AudioGone,
    PayloadTooLarge,
    UnsupportedMediaType,
    RangeNotSatisfiable,
    UnprocessableContent,
    UpgradeRequired,
    RateLimitExceeded,
    QuotaExceeded,
    InternalError,
    ServiceUnavailable,
    ServerBusy,
    NotReady,
    NotAvailable,
    VoiceInactive,
    AsrUnavailable,
    CloningUnavailable,
    SynthesisFailed,
    RecognitionFailed,
    RecognitionTimeout,
    CloningFailed,
    DialogueUnavailable,
    StorageUnavailable,
    RateLimitsUnavailable,
    InsufficientStorage,
}

/// One code's entry in the vocabulary.
struct Entry {
    code: &'static str,
    status: u16,
    /// `Retry-After` seconds when retrying can help; `None` when it cannot (the caller or the operator must act).
    retry_after: Option<u64>,
    meaning: &'static str,
}

impl ErrorCode {
    /// Every code, in the order of the table in docs/errors.md.
    pub const ALL: [ErrorCode; 35] = [
        Self::BadRequest,
        Self::Unauthorized,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::RequestTimeout,
        Self::JobNotComplete,
        Self::JobFailed,
        Self::SessionScenarioMismatch,
        Self::VoiceLimitReached,
        Self::VoiceNotDeletable,
        Self::DictionaryLimitReached,
        Self::AudioGone,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::RangeNotSatisfiable,
        Self::UnprocessableContent,
        Self::UpgradeRequired,
        Self::RateLimitExceeded,
        Self::QuotaExceeded,
        Self::InternalError,
        Self::ServiceUnavailable,
        Self::ServerBusy,
        Self::NotReady,
        Self::NotAvailable,
        Self::VoiceInactive,
        Self::AsrUnavailable,
        Self::CloningUnavailable,
        Self::SynthesisFailed,
        Self::RecognitionFailed,
        Self::RecognitionTimeout,
        Self::CloningFailed,
        Self::DialogueUnavailable,
        Self::StorageUnavailable,
        Self::RateLimitsUnavailable,
        Self::InsufficientStorage,
    ];

    fn entry(self) -> Entry {
        let entry = |code, status, retry_after, meaning| Entry {
            code,
            status,
            retry_after,
            meaning,
        };
        match self {
            Self::BadRequest => entry("bad_request", 400, None, "the body or query could not be read (malformed JSON or form)"),
            Self::Unauthorized => entry("unauthorized", 401, None, "no API key, or one this server does not know (or has revoked)"),
            Self::NotFound => entry("not_found", 404, None, "no such path, voice, job, session or pronunciation dictionary for this key"),
            Self::MethodNotAllowed => entry("method_not_allowed", 405, None, "the path does not take this method"),
            Self::RequestTimeout => entry("request_timeout", 408, None, "the request body stopped arriving for `server.body_timeout_seconds`"),
            Self::JobNotComplete => entry("job_not_complete", 409, None, "the job's audio was asked for before the job succeeded"),
            Self::JobFailed => entry("job_failed", 409, None, "the job failed and has no audio (the detail says why)"),
            Self::SessionScenarioMismatch => entry("session_scenario_mismatch", 409, None, "a session continued with another scenario than the one it began with"),
            Self::VoiceLimitReached => entry("voice_limit_reached", 409, None, "the key already has `clone.max_voices_per_key` cloned voices"),
            Self::VoiceNotDeletable => entry("voice_not_deletable", 409, None, "a built-in or configured voice cannot be deleted"),
            Self::DictionaryLimitReached => entry("dictionary_limit_reached", 409, None, "the key already has `tts.max_dictionaries_per_key` pronunciation dictionaries"),
            Self::AudioGone => entry("audio_gone", 410, None, "a succeeded job's audio is no longer stored"),
            Self::PayloadTooLarge => entry("payload_too_large", 413, None, "the body, or one part of a form, is larger than the endpoint accepts"),
            Self::UnsupportedMediaType => entry("unsupported_media_type", 415, None, "the body is not of the documented content type"),
            Self::RangeNotSatisfiable => entry("range_not_satisfiable", 416, None, "the `Range` asked for lies outside the file"),
            Self::UnprocessableContent => entry("unprocessable_content", 422, None, "the request is well formed but invalid: text, settings, language, form fields or audio"),
            Self::UpgradeRequired => entry("upgrade_required", 426, None, "a realtime path was asked for without a WebSocket upgrade"),
            Self::RateLimitExceeded => entry("rate_limit_exceeded", 429, Some(60), "too many requests for this key (or address) and endpoint category, too many unfinished jobs, or too many open realtime sessions"),
            Self::QuotaExceeded => entry("quota_exceeded", 429, Some(3600), "the key has used its monthly limit of characters synthesised or seconds recognised (`sauti keys update --character-limit`, `--audio-seconds-limit`); the detail gives the reset time and `Retry-After` the seconds until it"),
            Self::InternalError => entry("internal_error", 500, Some(1), "an unexpected failure; the request id finds it in the log"),
            Self::ServiceUnavailable => entry("service_unavailable", 503, Some(1), "a component is restarting or did not answer in time"),
            Self::ServerBusy => entry("server_busy", 503, Some(2), "every worker is busy and the queue is full"),
            Self::NotReady => entry("not_ready", 503, Some(1), "`/readyz`: an actor is starting, the database does not answer, or the disk is full"),
            Self::NotAvailable => entry("not_available", 503, None, "the feature is not part of this server"),
            Self::VoiceInactive => entry("voice_inactive", 503, None, "the voice is listed but its model or ONNX Runtime is not installed (the detail says what to install)"),
            Self::AsrUnavailable => entry("asr_unavailable", 503, None, "no speech recognition model is installed (the detail names the one to install)"),
            Self::CloningUnavailable => entry("cloning_unavailable", 503, None, "the voice clones are built on is not available (the detail says which and why)"),
            Self::SynthesisFailed => entry("synthesis_failed", 503, Some(1), "the synthesis engine failed on this input"),
            Self::RecognitionFailed => entry("recognition_failed", 503, Some(5), "the recognition engine failed on this input"),
            Self::RecognitionTimeout => entry("recognition_timeout", 503, Some(5), "recognition stopped: its time ran out"),
            Self::CloningFailed => entry("cloning_failed", 503, Some(5), "the speaker analysis failed"),
            Self::DialogueUnavailable => entry("dialogue_unavailable", 503, Some(5), "the dialogue backend failed and no fallback answered"),
            Self::StorageUnavailable => entry("storage_unavailable", 503, Some(5), "the database or the audio folder failed"),
            Self::RateLimitsUnavailable => entry("rate_limits_unavailable", 503, Some(1), "the rate limits shared by the replicas (Redis) do not answer and `limits.redis_unreachable` is `refuse`"),
            Self::InsufficientStorage => entry("insufficient_storage", 507, Some(60), "the server's disk is below `storage.min_free_bytes`: new jobs and voices are refused"),
        }
    }

    /// The code as written in `type` URLs.
    pub fn as_str(self) -> &'static str {
        self.entry().code
    }

    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        StatusCode::from_u16(self.entry().status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The problem's `title`: the status's name as the spec words them.
    pub fn title(self) -> &'static str {
        title(self.status())
    }

    /// Default `Retry-After` seconds; `None` when retrying cannot help.
    pub fn retry_after(self) -> Option<u64> {
        self.entry().retry_after
    }

    /// Whether retrying the same request later can succeed.
    pub fn retryable(self) -> bool {
        self.retry_after().is_some()
    }

    /// What the code means, for the documentation.
    pub fn meaning(self) -> &'static str {
        self.entry().meaning
    }

    /// The code a status gets when no handler chose one (routing, body limits).
    pub fn for_status(status: StatusCode) -> Self {
        match status.as_u16() {
            400 => Self::BadRequest,
            401 => Self::Unauthorized,
            404 => Self::NotFound,
            405 => Self::MethodNotAllowed,
            408 => Self::RequestTimeout,
            413 => Self::PayloadTooLarge,
            415 => Self::UnsupportedMediaType,
            422 => Self::UnprocessableContent,
            429 => Self::RateLimitExceeded,
            503 => Self::ServiceUnavailable,
            _ => Self::InternalError,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The short title of a status, as the spec words them.
pub fn title(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        422 => "Unprocessable Content",
        426 => "Upgrade Required",
        429 => "Rate Limit Exceeded",
        503 => "Service Unavailable",
        507 => "Insufficient Storage",
        _ => status.canonical_reason().unwrap_or("Error"),
    }
}

/// The vocabulary as a Markdown table (the one in docs/errors.md is checked against it).
pub fn markdown_table() -> String {
    let mut table = String::from("| code | status | retry | meaning |\n|---|---|---|---|\n");
    for code in ErrorCode::ALL {
        let retry = match code.retry_after() {
            Some(seconds) => format!("yes (`Retry-After: {seconds}`)"),
            None => "no".to_string(),
        };
        table.push_str(&format!(
            "| `{}` | {} | {retry} | {} |\n",
            code.as_str(),
            code.status().as_u16(),
            code.meaning()
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_errors_doc_lists_every_code_as_the_vocabulary_says() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/errors.md"));
        let table = markdown_table();
        assert!(
            doc.contains(&table),
            "docs/errors.md's error code table must read:\n{table}"
        );
    }

    #[test]
    fn every_code_is_listed_once_with_its_own_name() {
        let names: std::collections::HashSet<&str> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert!(code.status().is_client_error() || code.status().is_server_error());
            assert_ne!(code.title(), "Error", "{code:?}");
        }
    }
}
