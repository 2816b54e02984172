//! The root supervisor: spawns every component actor linked to itself, restarts a crashed one within a restart
//! budget, and stops the whole graph (so the service exits) when the budget is spent.

mod actor;

pub use actor::{Supervisor, SupervisorArgs, ToSupervisor};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ractor::{Actor, ActorRef};
use tokio::sync::Semaphore;

use super::agent::AgentHandle;
use super::asr::{AsrArgs, AsrHandle};
use super::clone::{CloneArgs, CloneHandle};
use super::dialogue::{DialogueArgs, DialogueHandle};
use super::fair::WorkerPool;
use super::jobs::JobsHandle;
use super::tts::{TtsArgs, TtsHandle};
use crate::config::Settings;
use crate::storage::{ArtifactStore, Storage};
use crate::tts::catalog::VoiceRegistry;

/// Handles to every component, and the supervisor itself.
#[derive(Clone)]
pub struct Graph {
    /// Synthesis.
    pub tts: TtsHandle,
    /// Jobs.
    pub jobs: JobsHandle,
    /// Speech recognition.
    pub asr: AsrHandle,
    /// Dialogue.
    pub dialogue: DialogueHandle,
    /// Voice agent.
    pub agent: AgentHandle,
    /// Voice cloning.
    pub clone: CloneHandle,
    supervisor: ActorRef<ToSupervisor>,
    restarts: Arc<AtomicU64>,
}

impl Graph {
    /// Start the graph.
    pub async fn start(
        settings: &Settings,
        voices: Arc<VoiceRegistry>,
        recognizer: Result<Arc<dyn crate::asr::Recognizer>, String>,
        dialogue: DialogueArgs,
        db: Storage,
        artifacts: ArtifactStore,
    ) -> Result<(Self, tokio::task::JoinHandle<()>), ractor::SpawnErr> {
        let slots = actor::Slots::default();
        let restarts = Arc::new(AtomicU64::new(0));
        let tts = TtsArgs {
            voices: Arc::clone(&voices),
            admission: Arc::new(Semaphore::new(settings.tts.workers + settings.tts.queue)),
            pool: Arc::new(
                WorkerPool::new(
                    "sauti-synth",
                    settings.tts.workers,
                    settings.tts.workers_per_key,
                )
                .map_err(|e| ractor::SpawnErr::StartupFailed(e.into()))?,
            ),
        };
        let asr = AsrArgs {
            recognizer,
            admission: Arc::new(Semaphore::new(
                settings.asr.recognitions_at_once() + settings.asr.queue,
            )),
            pool: Arc::new(
                WorkerPool::new(
                    "sauti-recog",
                    settings.asr.recognitions_at_once(),
                    settings.asr.workers_per_key,
                )
                .map_err(|e| ractor::SpawnErr::StartupFailed(e.into()))?,
            ),
        };
        let recognition_workers = Arc::clone(&asr.pool);
        let clone = CloneArgs {
            db: db.clone(),
            voices: Arc::clone(&voices),
            lexicon: (**voices.lexicon()).clone(),
            max_per_key: settings.clone.max_voices_per_key,
            base_voice: settings.clone.base_voice.clone(),
            method: settings.clone.method.clone(),
            encoder: speaker_encoder(settings),
            similarity_floor: settings.clone.similarity_floor,
            references: settings
                .clone
                .keep_reference
                .then(|| settings.storage.data_dir.join("voices")),
            admission: Arc::new(Semaphore::new(settings.clone.queue)),
        };
        let safety = dialogue.library.safety();
        let args = SupervisorArgs {
            slots: slots.clone(),
            tts,
            asr,
            clone,
            dialogue,
            voices,
            db,
            artifacts,
            jobs: settings.jobs.clone(),
            budget: settings.supervisor.clone(),
            restarts: Arc::clone(&restarts),
        };
        let (supervisor, join) = Actor::spawn(None, Supervisor, args).await?;
        let graph = Graph {
            tts: TtsHandle::new(slots.tts.clone()),
            jobs: JobsHandle::new(slots.jobs.clone()),
            asr: AsrHandle::new(slots.asr.clone()).with_workers(recognition_workers),
            dialogue: DialogueHandle::new(slots.dialogue.clone(), safety),
            agent: AgentHandle::new(slots.agent.clone()),
            clone: CloneHandle::new(slots.clone.clone()),
            supervisor,
            restarts,
        };
        Ok((graph, join))
    }

    /// Whether every actor is running.
    pub fn all_up(&self) -> bool {
        self.tts.is_up()
            && self.asr.is_up()
            && self.dialogue.is_up()
            && self.agent.is_up()
            && self.clone.is_up()
    }

    /// Actor restarts since start-up.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// Stop every actor (graceful shutdown).
    pub fn stop(&self) {
        self.supervisor.stop(Some("shutdown".into()));
    }
}

/// The configured speaker encoder, if installed (without one, cloned voices carry no similarity score).
fn speaker_encoder(settings: &Settings) -> Option<Arc<crate::clone::speaker::SpeakerEncoder>> {
    let configured = &settings.clone.speaker_encoder;
    if configured.as_os_str().is_empty() {
        return None;
    }
    let path = settings.models.dir.join(configured);
    match crate::clone::speaker::SpeakerEncoder::load(&path, &settings.models) {
        Ok(encoder) => {
            tracing::info!(model = %path.display(), "speaker encoder ready: cloned voices get a similarity score");
            Some(Arc::new(encoder))
        }
        Err(error) => {
            tracing::info!(%error, "no speaker encoder: cloned voices get no similarity score (sauti models fetch speaker-resnet34)");
            None
        }
    }
}
