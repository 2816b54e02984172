//! Synthesised samples encoded in the output format a request named, admitted like decoding (one permit per
//! core) and run off the async threads; a request that goes away stops the work at its next bounded piece.

use super::Service;
use crate::audio::output::OutputFormat;
use crate::cancel::Cancel;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;

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
    service: &Service,
    format: OutputFormat,
    wav: crate::storage::Blob,
) -> Result<Vec<u8>, ApiError> {
    let work = Work::new();
    let encoded = reencode(service, format, wav, &work.cancel).await;
    work.finish();
    encoded
}

async fn reencode(
    service: &Service,
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
    encode_until(service, format, samples, cancel.clone()).await
}

/// `samples` (16 kHz mono) encoded in `format`, off the async threads and within the codec permits. A request
/// that goes away stops the encoding at the next bounded piece of it.
pub async fn encode(
    service: &Service,
    format: OutputFormat,
    samples: Vec<f32>,
) -> Result<Vec<u8>, ApiError> {
    let work = Work::new();
    let encoded = encode_until(service, format, samples, work.cancel.clone()).await;
    work.finish();
    encoded
}

async fn encode_until(
    service: &Service,
    format: OutputFormat,
    samples: Vec<f32>,
    cancel: Cancel,
) -> Result<Vec<u8>, ApiError> {
    let permit = service
        .codec_permit("every audio encoder is busy; retry shortly")
        .await?;
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
