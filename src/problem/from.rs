//! Each layer's errors as the refusal a client reads.

use super::codes::ErrorCode;
use super::ApiError;
use crate::actors::agent::AgentError;
use crate::actors::asr::RecognitionError;
use crate::actors::clone::CloneError;
use crate::actors::dialogue::{SessionError, TurnError};
use crate::actors::jobs::JobsError;
use crate::actors::tts::SynthesisError;
use crate::actors::ActorError;
use crate::asr::AsrError;
use crate::clone::profile::ProfileError;
use crate::dialogue::DialogueError;
use crate::dictionaries::DictionaryError;
use crate::tts::TtsError;

impl From<ActorError> for ApiError {
    fn from(error: ActorError) -> Self {
        let detail = error.to_string();
        match error {
            ActorError::NotAvailable(_) => ApiError::new(ErrorCode::NotAvailable, detail),
            ActorError::Busy { retry_after, .. } => {
                ApiError::new(ErrorCode::ServerBusy, detail).retry_after(retry_after)
            }
            ActorError::Faulted(_) => ApiError::new(ErrorCode::InternalError, detail),
            ActorError::Restarting(_) | ActorError::Crashed(_) | ActorError::Timeout(_) => {
                ApiError::new(ErrorCode::ServiceUnavailable, detail)
            }
        }
    }
}

impl From<TtsError> for ApiError {
    fn from(error: TtsError) -> Self {
        let detail = error.to_string();
        match error {
            TtsError::EmptyText
            | TtsError::NothingToSay
            | TtsError::SettingOutOfRange { .. }
            | TtsError::ReadsTooLong(_) => ApiError::unprocessable(detail),
            TtsError::Engine(_) => ApiError::new(ErrorCode::SynthesisFailed, detail),
        }
    }
}

impl From<SynthesisError> for ApiError {
    fn from(error: SynthesisError) -> Self {
        let detail = error.to_string();
        match error {
            SynthesisError::Invalid(invalid) => invalid.into(),
            SynthesisError::UnknownVoice(_) => ApiError::not_found(detail),
            SynthesisError::Untimed(_) => ApiError::unprocessable(detail),
            SynthesisError::InactiveVoice { .. } => ApiError::new(ErrorCode::VoiceInactive, detail),
            SynthesisError::Engine(_) => ApiError::new(ErrorCode::SynthesisFailed, detail),
            SynthesisError::Actor(actor) => actor.into(),
        }
    }
}

impl From<JobsError> for ApiError {
    fn from(error: JobsError) -> Self {
        let detail = error.to_string();
        match error {
            JobsError::NotFound(_) => ApiError::not_found(detail),
            JobsError::NotReady { .. } => ApiError::new(ErrorCode::JobNotComplete, detail),
            JobsError::Failed { .. } => ApiError::new(ErrorCode::JobFailed, detail),
            JobsError::AudioGone(_) => ApiError::new(ErrorCode::AudioGone, detail),
            JobsError::TooMany(_) => ApiError::rate_limited(detail, 30),
            JobsError::UnknownVoice(_) => ApiError::not_found(format!("`voice_id`: {detail}")),
            JobsError::Storage(_) => ApiError::new(ErrorCode::StorageUnavailable, detail),
            JobsError::NoSpace(_) => ApiError::insufficient_storage(detail),
            JobsError::Actor(actor) => actor.into(),
        }
    }
}

impl From<RecognitionError> for ApiError {
    fn from(error: RecognitionError) -> Self {
        let detail = error.to_string();
        match error {
            RecognitionError::Unavailable(_) | RecognitionError::Asr(AsrError::Unavailable(_)) => {
                ApiError::new(ErrorCode::AsrUnavailable, detail)
            }
            RecognitionError::Asr(AsrError::UnsupportedLanguage(_)) => {
                ApiError::unprocessable(detail)
            }
            RecognitionError::Asr(AsrError::Cancelled) => {
                ApiError::new(ErrorCode::RecognitionTimeout, detail)
            }
            RecognitionError::Asr(AsrError::Engine(_)) => {
                ApiError::new(ErrorCode::RecognitionFailed, detail)
            }
            RecognitionError::Actor(actor) => actor.into(),
        }
    }
}

impl From<AgentError> for ApiError {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::Dialogue(turn) => turn.into(),
            AgentError::Synthesis(synthesis) => synthesis.into(),
            AgentError::Recognition(recognition) => recognition.into(),
            AgentError::NoSpeech => ApiError::unprocessable(
                "no speech was recognised in the audio; record the question again, closer to the microphone",
            ),
            AgentError::Actor(actor) => actor.into(),
        }
    }
}

impl From<TurnError> for ApiError {
    fn from(error: TurnError) -> Self {
        let detail = error.to_string();
        match error {
            TurnError::UnknownScenario(..) => ApiError::unprocessable(detail),
            TurnError::Session(SessionError::NotFound(_)) => ApiError::not_found(detail),
            TurnError::Session(SessionError::OtherScenario { .. }) => {
                ApiError::new(ErrorCode::SessionScenarioMismatch, detail)
            }
            TurnError::Session(SessionError::Unavailable(_)) => {
                ApiError::new(ErrorCode::StorageUnavailable, detail)
            }
            TurnError::Backend(DialogueError::Backend { .. }) => {
                ApiError::new(ErrorCode::DialogueUnavailable, detail)
            }
            TurnError::Actor(actor) => actor.into(),
        }
    }
}

impl From<CloneError> for ApiError {
    fn from(error: CloneError) -> Self {
        let detail = error.to_string();
        match error {
            CloneError::Profile(ProfileError::Base(_)) => {
                ApiError::new(ErrorCode::CloningUnavailable, detail)
            }
            CloneError::Profile(_) => ApiError::unprocessable(detail),
            CloneError::TooMany(_) => ApiError::new(ErrorCode::VoiceLimitReached, detail),
            CloneError::Storage(_) => ApiError::new(ErrorCode::StorageUnavailable, detail),
            CloneError::Engine(_) => ApiError::new(ErrorCode::CloningFailed, detail),
            CloneError::Actor(actor) => actor.into(),
        }
    }
}

impl From<DictionaryError> for ApiError {
    fn from(error: DictionaryError) -> Self {
        let detail = error.to_string();
        match error {
            DictionaryError::Rules(_)
            | DictionaryError::Invalid(_)
            | DictionaryError::TooLong(_) => ApiError::unprocessable(detail),
            DictionaryError::NotFound(_) => ApiError::not_found(detail),
            DictionaryError::TooMany(_) => ApiError::new(ErrorCode::DictionaryLimitReached, detail),
            DictionaryError::Storage(_) => ApiError::new(ErrorCode::StorageUnavailable, detail),
        }
    }
}
