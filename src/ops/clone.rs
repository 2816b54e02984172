//! Cloning a voice from one recording or several (joined with short gaps), and deleting one. A voice is kept
//! on disk: with the disk full it is refused (507) before any analysis is spent on it.

use std::time::Duration;

use sha2::{Digest, Sha256};

use super::usage::{self, Usage};
use super::Service;
use crate::actors::clone::CloneRequest;
use crate::audio::{DecodeLimits, SAMPLE_RATE};
use crate::clone::{display_name, ClonedVoiceSummary};
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;

/// Recordings one voice is made from at most.
pub const MAX_RECORDINGS: usize = 25;
/// Silence put between the recordings of one voice.
const GAP_SECONDS: f32 = 0.3;

/// A voice to make.
pub struct CloneVoice {
    /// The key that will own it.
    pub owner: String,
    /// Its display name as sent (defaulted and cut here).
    pub name: Option<String>,
    /// The speaker's consent statement, kept as provenance.
    pub consent: Option<String>,
    /// The uploaded recordings, in order (or why there are none).
    pub recordings: Result<Vec<Vec<u8>>, ApiError>,
}

impl Service {
    /// Make a voice: at most [`MAX_RECORDINGS`] recordings holding at most as much audio together as one
    /// upload may (15 minutes); each is decoded within what the ones before it left.
    pub async fn clone_voice(&self, request: CloneVoice) -> Result<ClonedVoiceSummary, ApiError> {
        let recordings = request.recordings?;
        if recordings.len() > MAX_RECORDINGS {
            return Err(ApiError::unprocessable(format!(
                "at most {MAX_RECORDINGS} recordings make one voice"
            )));
        }
        let budget = DecodeLimits::default().max_duration;
        let rate = SAMPLE_RATE as usize;
        let mut digest = Sha256::new();
        let mut samples: Vec<f32> = Vec::new();
        for recording in recordings {
            digest.update(&recording);
            let used = Duration::from_secs_f64(samples.len() as f64 / rate as f64);
            if used >= budget {
                return Err(ApiError::unprocessable(format!(
                    "the recordings hold more than {} minutes of audio together; send less",
                    budget.as_secs() / 60
                )));
            }
            let limits = DecodeLimits {
                max_duration: budget - used,
            };
            let clip = self.decode(recording, limits).await?;
            if !samples.is_empty() {
                samples.resize(samples.len() + (GAP_SECONDS * rate as f32) as usize, 0.0);
            }
            samples.extend_from_slice(&clip.samples);
        }
        let storage = &self.settings.storage;
        if let Some(why) =
            crate::storage::space::shortage(&storage.data_dir, storage.min_free_bytes)
        {
            return Err(ApiError::insufficient_storage(why));
        }
        let seconds = samples.len() as f64 / rate as f64;
        let summary = self
            .graph
            .clone
            .clone_voice(CloneRequest {
                owner: request.owner,
                name: display_name(request.name.as_deref()),
                consent: request.consent,
                samples,
                source_sha256: digest
                    .finalize()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect(),
            })
            .await?;
        usage::record(Usage::ClonedSeconds(seconds));
        Ok(summary)
    }

    /// Delete `owner`'s cloned voice `voice_id`: 409 for one of the server's own voices, 404 for none.
    pub async fn delete_voice(&self, owner: &str, voice_id: &str) -> Result<(), ApiError> {
        if self.voices.get(voice_id).is_some() {
            return Err(ApiError::new(
                ErrorCode::VoiceNotDeletable,
                format!("voice {voice_id:?} is one of the server's own voices; only cloned voices can be deleted"),
            ));
        }
        match self.graph.clone.delete(owner, voice_id).await? {
            true => Ok(()),
            false => Err(ApiError::not_found(format!("voice {voice_id:?} not found"))),
        }
    }
}
