//! Output formats at the HTTP edge: the `output_format` a request names, checked before any work, and the
//! encoding of synthesised samples in it, admitted like decoding and run off the async threads.

use std::sync::Arc;

use serde::Deserialize;

use super::codes::ErrorCode;
use super::problem::ApiError;
use super::AppState;
use crate::audio::output::OutputFormat;

/// `?output_format=` of the synthesis paths.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The audio format, as ElevenLabs names them (`mp3_44100_128`, `pcm_24000`, `ulaw_8000`,
    /// `opus_48000_64`, `wav_22050`, `flac_24000`, …). Omitted: a 16 kHz WAV.
    #[param(example = "mp3_44100_128")]
    pub output_format: Option<String>,
}

impl FormatQuery {
    /// The format asked for (16 kHz WAV when none is), or 422 listing the known ones.
    pub fn format(&self) -> Result<OutputFormat, ApiError> {
        match self.output_format.as_deref() {
            None | Some("") => Ok(OutputFormat::WAV_16K),
            Some(name) => OutputFormat::named(name).map_err(ApiError::unprocessable),
        }
    }
}

/// How long an encoding waits for a permit before the answer is 503 `server_busy`.
const ENCODE_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `samples` (16 kHz mono) encoded in `format`, off the async threads and within the codec permits.
pub async fn encode(
    state: &AppState,
    format: OutputFormat,
    samples: Vec<f32>,
) -> Result<Vec<u8>, ApiError> {
    let permit = tokio::time::timeout(ENCODE_WAIT, Arc::clone(&state.decoders).acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::ServerBusy,
                "every audio encoder is busy; retry shortly",
            )
        })?;
    tokio::task::spawn_blocking(move || {
        let _admitted = permit;
        format.encode(&samples)
    })
    .await
    .map_err(|_| {
        ApiError::new(
            ErrorCode::InternalError,
            "the audio encoder stopped unexpectedly",
        )
    })?
    .map_err(|e| ApiError::new(ErrorCode::InternalError, e))
}
