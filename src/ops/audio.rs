//! Decoding what callers upload: off the async threads, at most one codec job per core at once, so memory and
//! CPU stay bounded however many uploads arrive.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Service;
use crate::audio::{self, Audio16k, DecodeLimits};
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;

/// How long decoding an upload or encoding an answer waits for a permit before the answer is 503 `server_busy`.
const CODEC_WAIT: Duration = Duration::from_secs(60);

/// A permit for audio codec work (decoding an upload, encoding an answer): at most one per core runs at once.
/// 503 `server_busy` (`busy` its detail) when none frees up in time.
pub async fn permit(
    decoders: &Arc<Semaphore>,
    busy: &'static str,
) -> Result<OwnedSemaphorePermit, ApiError> {
    tokio::time::timeout(CODEC_WAIT, Arc::clone(decoders).acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| ApiError::new(ErrorCode::ServerBusy, busy))
}

impl Service {
    /// A permit for codec work of this server (see [`permit`]).
    pub async fn codec_permit(&self, busy: &'static str) -> Result<OwnedSemaphorePermit, ApiError> {
        permit(&self.decoders, busy).await
    }

    /// `bytes` of an upload decoded to 16 kHz mono within `limits`, once admitted; undecodable audio is 422.
    pub async fn decode(&self, bytes: Vec<u8>, limits: DecodeLimits) -> Result<Audio16k, ApiError> {
        let permit = self
            .codec_permit("every audio decoder is busy; retry shortly")
            .await?;
        tokio::task::spawn_blocking(move || {
            let _admitted = permit;
            audio::load_16k(&bytes, &limits)
        })
        .await
        .map_err(|_| ApiError::unprocessable("the audio could not be decoded"))?
        .map_err(|e| ApiError::unprocessable(e.to_string()))
    }
}
