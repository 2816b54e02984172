//! Output formats at the HTTP edge: the `output_format` a request names, checked before any work, and the
//! encoding of synthesised samples in it, admitted like decoding and run off the async threads.

use serde::Deserialize;

use crate::problem::codes::ErrorCode;
use super::problem::ApiError;
use super::AppState;
use crate::audio::output::OutputFormat;
use crate::cancel::Cancel;

/// `?output_format=` of the synthesis paths.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The audio format, as ElevenLabs names them (`mp3_44100_128`, `pcm_24000`, `ulaw_8000`,
    /// `opus_48000_64`, `wav_22050`, `flac_24000`, …). Omitted: a 16 kHz WAV.
    #[param(
        example = "mp3_44100_128",
        pattern = "^((wav|pcm)_(8000|16000|22050|24000|32000|44100|48000)|(ulaw|alaw)_8000|mp3_(22050_32|24000_48|44100_(32|64|96|128|192))|opus_48000_(32|64|96|128|192)|flac_(16000|22050|24000|44100))$"
    )]
    pub output_format: Option<String>,
}

impl FormatQuery {
    /// The format asked for (16 kHz WAV when none is), or 422 listing the known ones.
    pub fn format(&self) -> Result<OutputFormat, ApiError> {
        match self.output_format.as_deref() {
            None => Ok(OutputFormat::WAV_16K),
            Some(name) => OutputFormat::named(name).map_err(ApiError::unprocessable),
        }
    }
}

/// The decoding and encoding a request waits for. Dropped unfinished (the request went away), it tells the
/// work to stop and counts it in `/metrics` as cancelled work of the `encoder`.
struct Work {
    cancel: Cancel,
    finished: bool,
}

impl Work {
    fn new() -> Self {
        Self {
            cancel: Cancel::new(),
            finished: false,
        }
    }

    /// The request has its answer.
    fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if !self.finished {
            self.cancel.cancel();
            metrics::counter!(crate::telemetry::metrics::CANCELLED_WORK, "actor" => "encoder")
                .increment(1);
        }
    }
}

/// Samples read from a WAV between looks at whether the request still waits (about four seconds of audio).
const SAMPLES_PER_CHECK: usize = 1 << 16;

/// A stored 16 kHz WAV (a job's audio) encoded in `format`. A request that goes away stops the work at the
/// next bounded piece of it.
pub async fn reencode_wav(
    state: &AppState,
    format: OutputFormat,
    wav: crate::storage::Blob,
) -> Result<Vec<u8>, ApiError> {
    let work = Work::new();
    let encoded = reencode(state, format, wav, &work.cancel).await;
    work.finish();
    encoded
}

async fn reencode(
    state: &AppState,
    format: OutputFormat,
    wav: crate::storage::Blob,
    cancel: &Cancel,
) -> Result<Vec<u8>, ApiError> {
    let wav = wav.bytes().await.map_err(|e| {
        ApiError::new(
            ErrorCode::StorageUnavailable,
            format!("reading the job's audio failed: {e}"),
        )
    })?;
    let reading = cancel.clone();
    let samples = tokio::task::spawn_blocking(move || {
        let most = wav.len() / 2;
        let reader = hound::WavReader::new(std::io::Cursor::new(wav))?;
        let mut samples = Vec::with_capacity((reader.len() as usize).min(most));
        for (i, sample) in reader.into_samples::<i16>().enumerate() {
            if i % SAMPLES_PER_CHECK == 0 && reading.is_cancelled() {
                return Ok(None);
            }
            samples.push(f32::from(sample?) / 32767.0);
        }
        Ok::<_, hound::Error>(Some(samples))
    })
    .await
    .map_err(|_| {
        ApiError::new(
            ErrorCode::InternalError,
            "reading the job's audio stopped unexpectedly",
        )
    })?
    .map_err(|e| {
        ApiError::new(
            ErrorCode::InternalError,
            format!("the job's audio cannot be read: {e}"),
        )
    })?
    .ok_or_else(gone)?;
    encode_until(state, format, samples, cancel.clone()).await
}

/// `samples` (16 kHz mono) encoded in `format`, off the async threads and within the codec permits. A request
/// that goes away stops the encoding at the next bounded piece of it.
pub async fn encode(
    state: &AppState,
    format: OutputFormat,
    samples: Vec<f32>,
) -> Result<Vec<u8>, ApiError> {
    let work = Work::new();
    let encoded = encode_until(state, format, samples, work.cancel.clone()).await;
    work.finish();
    encoded
}

async fn encode_until(
    state: &AppState,
    format: OutputFormat,
    samples: Vec<f32>,
    cancel: Cancel,
) -> Result<Vec<u8>, ApiError> {
    let permit =
        super::upload::codec_permit(state, "every audio encoder is busy; retry shortly").await?;
    tokio::task::spawn_blocking(move || {
        let _admitted = permit;
        format.encode_until(&samples, &cancel)
    })
    .await
    .map_err(|_| {
        ApiError::new(
            ErrorCode::InternalError,
            "the audio encoder stopped unexpectedly",
        )
    })?
    .map_err(|e| ApiError::new(ErrorCode::InternalError, e))?
    .ok_or_else(gone)
}

/// The answer to a request that went away (never sent: nobody reads it).
fn gone() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "the request went away before its audio was ready",
    )
}

#[cfg(test)]
mod tests {
    use crate::audio::output::OutputFormat;

    /// Every `output_format` pattern in the API document admits exactly the formats sauti encodes.
    #[test]
    fn the_documented_pattern_names_exactly_the_formats() {
        let document = serde_json::to_value(crate::http::openapi_document()).unwrap();
        let mut patterns = Vec::new();
        for item in document["paths"].as_object().unwrap().values() {
            for operation in item.as_object().unwrap().values() {
                for parameter in operation["parameters"].as_array().into_iter().flatten() {
                    if parameter["name"] == "output_format" {
                        patterns.push(parameter["schema"]["pattern"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        assert!(patterns.len() >= 3, "{patterns:?}");
        for pattern in patterns {
            let pattern = regex::Regex::new(&pattern).unwrap();
            for format in OutputFormat::all() {
                assert!(pattern.is_match(&format.name()), "{}", format.name());
            }
            for other in ["mp3_48000_320", "wav", "opus_16000_32", "flac_8000", ""] {
                assert!(!pattern.is_match(other), "{other}");
            }
        }
    }
}
