use std::path::{Path, PathBuf};
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::Semaphore;

use super::{CloneError, CloneRequest};
use crate::actors::admit;
use crate::actors::work::WorkSet;
use crate::clone::{self, profile, ClonedVoiceSummary};
use crate::storage::{now_rfc3339, ClonedVoiceRecord, Storage};
use crate::tts::catalog::VoiceRegistry;
use crate::tts::lexicon::Lexicon;

/// Messages to the CloneActor.
pub enum ToCloneActor {
    /// Make a voice.
    Clone {
        /// The reference and form fields.
        request: CloneRequest,
        /// Where the new voice goes.
        reply: RpcReplyPort<Result<ClonedVoiceSummary, CloneError>>,
    },
    /// Delete a voice.
    Delete {
        /// The caller's key id.
        owner: String,
        /// Which voice.
        voice_id: String,
        /// Whether it existed.
        reply: RpcReplyPort<Result<bool, CloneError>>,
    },
}

/// What the CloneActor is started with; shared across restarts.
#[derive(Clone)]
pub struct CloneArgs {
    /// Where voices are stored.
    pub db: Storage,
    /// Where they are published.
    pub voices: Arc<VoiceRegistry>,
    /// Pronunciations for the voices it builds.
    pub lexicon: Lexicon,
    /// Cloned voices one key may have.
    pub max_per_key: usize,
    /// The voice every clone is built on (`""`: the built-in voice nearer the speaker's pitch).
    pub base_voice: String,
    /// `auto` or `dsp` (convert after synthesis even for built-in bases).
    pub method: String,
    /// The speaker encoder, when one is installed: similarity of each new voice to its reference.
    pub encoder: Option<Arc<crate::clone::speaker::SpeakerEncoder>>,
    /// A similarity under this flags the new voice with a warning.
    pub similarity_floor: f32,
    /// Where reference recordings are kept (`None`: they are not kept).
    pub references: Option<PathBuf>,
    /// Analyses running or waiting; none left means 503 `server_busy`.
    pub admission: Arc<Semaphore>,
}

/// Builds voices as its own work, apart from its mailbox, so the mailbox never stalls.
pub struct CloneActor;

/// The CloneActor's state: what it was started with, and the work it has running.
pub struct CloneState {
    args: CloneArgs,
    work: WorkSet,
}

impl Actor for CloneActor {
    type Msg = ToCloneActor;
    type State = CloneState;
    type Arguments = CloneArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: CloneArgs,
    ) -> Result<CloneState, ActorProcessingErr> {
        Ok(CloneState {
            args,
            work: WorkSet::new("clone"),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut CloneState,
    ) -> Result<(), ActorProcessingErr> {
        let CloneState { args: state, work } = state;
        #[cfg(feature = "fault-injection")]
        crate::actors::faults::maybe_panic("clone");
        match message {
            ToCloneActor::Clone { request, reply } => {
                let admitted = match admit(&state.admission, "clone", "voice cloning", 5) {
                    Ok(admitted) => admitted,
                    Err(busy) => {
                        let _ = reply.send(Err(CloneError::Actor(busy)));
                        return Ok(());
                    }
                };
                let state = state.clone();
                work.answer(reply, async move {
                    let outcome = make(&state, request).await;
                    drop(admitted);
                    outcome
                });
            }
            ToCloneActor::Delete {
                owner,
                voice_id,
                reply,
            } => {
                let state = state.clone();
                work.answer(reply, async move { delete(&state, owner, voice_id).await });
            }
        }
        Ok(())
    }
}

async fn make(state: &CloneArgs, request: CloneRequest) -> Result<ClonedVoiceSummary, CloneError> {
    if state.voices.cloned_count(&request.owner) >= state.max_per_key {
        return Err(CloneError::TooMany(state.max_per_key));
    }
    let CloneRequest {
        owner,
        name,
        consent,
        samples,
        source_sha256,
    } = request;
    let (voices, base, method) = (
        Arc::clone(&state.voices),
        state.base_voice.clone(),
        state.method.clone(),
    );
    let (profile, samples) = tokio::task::spawn_blocking(move || {
        let profile = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            profile::analyse(&samples, |f0| {
                clone::choose_base(&voices, &base, &method, f0)
            })
        }));
        (profile, samples)
    })
    .await
    .map_err(|e| CloneError::Engine(e.to_string()))?;
    let mut profile = profile.map_err(|_| {
        CloneError::Engine("the speaker analysis failed on this recording".into())
    })??;
    if profile.method == profile::Method::Neural {
        profile.tone = Some(tone_colours(state, &profile.base, &samples).await?);
    }
    if let Some(encoder) = state.encoder.clone() {
        let (voices, lexicon) = (Arc::clone(&state.voices), state.lexicon.clone());
        let (reference, candidate) = (samples.clone(), profile.clone());
        let measured = tokio::task::spawn_blocking(move || {
            let voice = clone::ClonedVoice::new(
                &candidate,
                &lexicon,
                |id| {
                    voices
                        .synthesizer(id)
                        .unwrap_or_else(|| Err("no such voice".into()))
                },
                voices.converter(),
            )?;
            clone::similarity(&encoder, &reference, &voice)
        })
        .await
        .map_err(|e| CloneError::Engine(e.to_string()))?;
        match measured {
            Ok(similarity) => {
                profile.similarity = Some(similarity);
                if similarity < state.similarity_floor {
                    profile.warnings.push(format!(
                        "its speaker similarity to the reference ({similarity:.3}) is below this server's floor \
                         ({:.2}): it may not sound like the speaker",
                        state.similarity_floor
                    ));
                }
            }
            Err(why) => tracing::warn!(%why, "speaker similarity not measured"),
        }
    }
    let record = ClonedVoiceRecord {
        voice_id: format!("cv_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]),
        owner: owner.clone(),
        name,
        profile: serde_json::to_string(&profile).map_err(|e| CloneError::Engine(e.to_string()))?,
        created_at: now_rfc3339(),
        source_sha256,
        consent,
    };
    // The cap is checked again where the voice is stored: requests analysed at the same time all passed the
    // early check above, and only one transaction at a time may count and insert.
    let max = state.max_per_key;
    let inserted = state.db.insert_voice_within(&record, max).await?;
    if !inserted {
        return Err(CloneError::TooMany(max));
    }
    if let Some(dir) = &state.references {
        if let Err(error) = keep_reference(dir, &record.voice_id, &samples).await {
            let _ = state.db.delete_voice(&record.owner, &record.voice_id).await;
            return Err(error);
        }
    }
    let profile =
        clone::publish(&record, &state.voices, &state.lexicon).map_err(CloneError::Engine)?;
    tracing::info!(
        voice_id = record.voice_id,
        base = profile.base,
        f0 = profile.f0_median,
        "voice cloned"
    );
    Ok(ClonedVoiceSummary::of(&record, &profile))
}

/// The speaker's and the base voice's tone colours, measured by the converter off the actor.
async fn tone_colours(
    state: &CloneArgs,
    base: &str,
    samples: &[f32],
) -> Result<clone::neural::ToneProfile, CloneError> {
    let converter = state
        .voices
        .converter()
        .cloned()
        .ok_or_else(|| CloneError::Engine("the tone-colour converter is not loaded".into()))?;
    let voice = state
        .voices
        .synthesizer(base)
        .unwrap_or_else(|| Err("no such voice".into()))
        .map_err(CloneError::Engine)?;
    let reference = samples.to_vec();
    tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            clone::neural::measure(&converter, &reference, voice.as_ref())
        }))
        .unwrap_or_else(|_| Err("the tone-colour converter failed on this recording".into()))
    })
    .await
    .map_err(|e| CloneError::Engine(e.to_string()))?
    .map_err(CloneError::Engine)
}

/// Write the reference recording beside the voice.
async fn keep_reference(dir: &Path, voice_id: &str, samples: &[f32]) -> Result<(), CloneError> {
    let path = dir.join(format!("{voice_id}.wav"));
    let wav = crate::audio::encode_wav_16k(samples);
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(path.parent().unwrap_or(&path))?;
        std::fs::write(&path, wav)
    })
    .await
    .map_err(|e| CloneError::Engine(e.to_string()))?
    .map_err(crate::storage::StorageError::from)?;
    Ok(())
}

async fn delete(state: &CloneArgs, owner: String, voice_id: String) -> Result<bool, CloneError> {
    let existed = state.db.delete_voice(&owner, &voice_id).await?;
    if existed {
        state.voices.remove_cloned(&owner, &voice_id);
        if let Some(dir) = &state.references {
            let _ = std::fs::remove_file(dir.join(format!("{voice_id}.wav")));
        }
        tracing::info!(voice_id, "cloned voice deleted");
    }
    Ok(existed)
}
