use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::runner::{run_next, JobContext};
use super::{JobsError, NewJob};
use crate::actors::tts::TtsHandle;
use crate::actors::work::WorkSet;
use crate::actors::ActorSlot;
use crate::config::JobSettings;
use crate::storage::{unix_now, ArtifactStore, JobRecord, JobStatus, Storage, StorageError};
use crate::tts::catalog::VoiceRegistry;

/// How often finished jobs past their retention are deleted.
const SWEEP_EVERY: Duration = Duration::from_secs(600);
/// How soon recovery is tried again when storage refused it at start.
const RECOVER_RETRY: Duration = Duration::from_secs(5);
/// With a shared store: how often jobs queued by other replicas, and jobs whose replica died, are looked for.
const POLL_EVERY: Duration = Duration::from_secs(2);

/// Messages to the JobsActor.
pub enum ToJobsActor {
    /// Store and queue a new job.
    Create {
        /// The request.
        job: NewJob,
        /// The stored job.
        reply: RpcReplyPort<Result<JobRecord, JobsError>>,
    },
    /// Read a job.
    Get {
        /// Requesting key.
        owner: String,
        /// Job id.
        id: String,
        /// The job.
        reply: RpcReplyPort<Result<JobRecord, JobsError>>,
    },
    /// Read a succeeded job's WAV.
    Audio {
        /// Requesting key.
        owner: String,
        /// Job id.
        id: String,
        /// The WAV, opened for streaming.
        reply: RpcReplyPort<Result<crate::storage::Blob, JobsError>>,
    },
    /// A runner finished (or gave up on) a job, or found none to claim.
    Finished {
        /// Whether it claimed a job.
        claimed: bool,
        /// The wake it was started for.
        generation: u64,
    },
    /// Delete finished jobs past retention.
    Sweep,
    /// Queue again the jobs a stop or crash left running (retried while the disk is full).
    Recover,
    /// Jobs may be waiting: queued here or by another replica, or left behind by a replica that stopped.
    Poll,
    /// Readiness probe.
    Ping(RpcReplyPort<bool>),
}

/// What the JobsActor is started with.
#[derive(Clone)]
pub struct JobsArgs {
    /// Where jobs are kept.
    pub db: Storage,
    /// Job audio files.
    pub artifacts: ArtifactStore,
    /// Where synthesis happens.
    pub tts: TtsHandle,
    /// Voices, to refuse unknown ones at creation.
    pub voices: Arc<VoiceRegistry>,
    /// Limits and retention.
    pub settings: JobSettings,
    /// This actor's own slot, so runners reach whichever incarnation is alive when they finish.
    pub slot: ActorSlot<ToJobsActor>,
    /// True on the first start of the process: jobs left running by a crash are queued again.
    pub recover: bool,
}

/// Owns the queue; runners do the synthesis as the actor's own work, stopped with it (their jobs are queued
/// again when it starts anew).
pub struct JobsActor;

/// The actor's state. Jobs wait in storage, not here: runners claim the oldest queued job, so replicas sharing
/// a store share one queue.
pub struct JobsState {
    args: JobsArgs,
    /// Runners at work (claiming or running).
    running: usize,
    /// Bumped whenever jobs may be waiting; a runner that finds none clears `waiting` only if no newer wake came.
    generation: u64,
    /// Whether a claim may find a job.
    waiting: bool,
    /// The runners.
    work: WorkSet,
}

fn storage(e: StorageError) -> JobsError {
    JobsError::Storage(e.to_string())
}

impl Actor for JobsActor {
    type Msg = ToJobsActor;
    type State = JobsState;
    type Arguments = JobsArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: JobsArgs,
    ) -> Result<JobsState, ActorProcessingErr> {
        if args.recover && !recover(&args).await {
            // A full disk: start anyway (reads work, readiness says why not ready) and try again shortly.
            myself.send_after(RECOVER_RETRY, || ToJobsActor::Recover);
        }
        if !args.recover {
            // A restart: the runners stopped with the actor that started them, so their jobs go back to the
            // queue (their start taken back: it was not the job's doing).
            match args.db.release_jobs().await {
                Ok(0) => {}
                Ok(released) => tracing::warn!(released, "jobs of stopped runners queued again"),
                Err(error) => tracing::error!(%error, "jobs of stopped runners not queued again"),
            }
        }
        tracing::info!("jobs actor started");
        let mut state = JobsState {
            args,
            running: 0,
            generation: 0,
            waiting: true,
            work: WorkSet::new("jobs"),
        };
        myself.send_message(ToJobsActor::Sweep)?;
        myself.send_interval(SWEEP_EVERY, || ToJobsActor::Sweep);
        if state.args.db.shared() {
            myself.send_interval(POLL_EVERY, || ToJobsActor::Poll);
        }
        pump(&mut state);
        Ok(state)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut JobsState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ToJobsActor::Create { job, reply } => {
                let result = create(state, job).await;
                if result.is_ok() {
                    wake(state);
                }
                let _ = reply.send(result);
            }
            ToJobsActor::Get { owner, id, reply } => {
                let _ = reply.send(owned(state, &owner, &id).await);
            }
            ToJobsActor::Audio { owner, id, reply } => {
                let result = match owned(state, &owner, &id).await {
                    Ok(job) => match job.status {
                        JobStatus::Succeeded => state
                            .args
                            .artifacts
                            .open(&job.id)
                            .await
                            .map_err(|e| audio_error(&id, e)),
                        JobStatus::Failed => Err(JobsError::Failed {
                            id,
                            reason: job.error.unwrap_or_default(),
                        }),
                        status => Err(JobsError::NotReady {
                            id,
                            status: status.as_str(),
                        }),
                    },
                    Err(e) => Err(e),
                };
                let _ = reply.send(result);
            }
            ToJobsActor::Finished {
                claimed,
                generation,
            } => {
                state.running = state.running.saturating_sub(1);
                if !claimed && generation == state.generation {
                    state.waiting = false;
                }
                pump(state);
            }
            ToJobsActor::Sweep => sweep(state).await,
            ToJobsActor::Recover => {
                if recover(&state.args).await {
                    wake(state);
                } else {
                    _myself.send_after(RECOVER_RETRY, || ToJobsActor::Recover);
                }
            }
            ToJobsActor::Poll => {
                if state.args.db.shared() {
                    match state.args.db.requeue_running().await {
                        Ok(0) => {}
                        Ok(requeued) => {
                            tracing::warn!(requeued, "jobs of a replica that stopped queued again")
                        }
                        Err(error) => tracing::warn!(%error, "looking for abandoned jobs failed"),
                    }
                }
                wake(state);
            }
            ToJobsActor::Ping(reply) => {
                let ready = match state.args.db.ping().await {
                    Ok(()) => true,
                    Err(error) => {
                        tracing::error!(%error, "readiness: the storage check failed");
                        false
                    }
                };
                let _ = reply.send(ready);
            }
        }
        Ok(())
    }
}

/// Jobs may be waiting: runners look for them.
fn wake(state: &mut JobsState) {
    state.generation += 1;
    state.waiting = true;
    pump(state);
}

async fn create(state: &JobsState, job: NewJob) -> Result<JobRecord, JobsError> {
    if state
        .args
        .voices
        .get_for(&job.owner, &job.voice_id)
        .is_none()
    {
        return Err(JobsError::UnknownVoice(job.voice_id));
    }
    // A job that could never store its audio is refused now rather than queued.
    if let Some(why) = state.args.artifacts.shortage() {
        return Err(JobsError::NoSpace(why));
    }
    let limit = state.args.settings.max_unfinished_per_key;
    let record = JobRecord::new(&job.owner, &job.text, &job.voice_id, job.settings)
        .with_pronunciation(job.pronunciation);
    let inserted = state
        .args
        .db
        .insert_job_within(&record, limit)
        .await
        .map_err(|e| {
            if crate::storage::space::is_full(&e) {
                JobsError::NoSpace(format!("the database could not store the job: {e}"))
            } else {
                storage(e)
            }
        })?;
    if !inserted {
        return Err(JobsError::TooMany(limit));
    }
    tracing::info!(job_id = %record.id, voice_id = %record.voice_id, chars = record.text.chars().count(), "job queued");
    Ok(record)
}

/// A succeeded job's audio that cannot be read: gone for good when the file is missing, else a storage failure.
fn audio_error(id: &str, error: StorageError) -> JobsError {
    match &error {
        StorageError::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
            tracing::warn!(job_id = id, "a succeeded job's audio file is missing");
            JobsError::AudioGone(id.to_string())
        }
        _ => storage(error),
    }
}

/// A job, if it exists and belongs to `owner` (anyone else is told it does not exist).
async fn owned(state: &JobsState, owner: &str, id: &str) -> Result<JobRecord, JobsError> {
    let job = state.args.db.job(id).await.map_err(storage)?;
    job.filter(|j| j.owner == owner)
        .ok_or_else(|| JobsError::NotFound(id.to_string()))
}

/// Start runners while workers are free and jobs may be waiting; each claims the oldest queued job.
fn pump(state: &mut JobsState) {
    while state.waiting && state.running < state.args.settings.workers {
        state.running += 1;
        let context = JobContext {
            lexicon: Arc::clone(state.args.voices.lexicon()),
            max_chars: state.args.settings.max_chars,
            db: state.args.db.clone(),
            artifacts: state.args.artifacts.clone(),
            tts: state.args.tts.clone(),
            slot: state.args.slot.clone(),
        };
        state.work.run(run_next(context, state.generation));
    }
}

/// Queue again the jobs left running and remove half-written files; false when storage refused (a full disk).
async fn recover(args: &JobsArgs) -> bool {
    let artifacts = args.artifacts.clone();
    let recovered = async {
        // Replicas sharing a store may share the audio folder too: another one's file being written is not
        // an orphan, so only a store of this process's own clears them.
        let orphans = match args.db.shared() {
            true => 0,
            false => artifacts.remove_orphans().await?,
        };
        Ok::<_, StorageError>((args.db.requeue_running().await?, orphans))
    }
    .await;
    match recovered {
        Ok((requeued, orphans)) => {
            if requeued + orphans > 0 {
                tracing::warn!(
                    requeued,
                    orphans,
                    "recovered jobs interrupted by a stop or crash"
                );
            }
            true
        }
        Err(error) => {
            tracing::error!(%error, "jobs left running could not be queued again yet");
            false
        }
    }
}

async fn sweep(state: &JobsState) {
    let cutoff =
        unix_now() - i64::try_from(state.args.settings.retention_hours * 3600).unwrap_or(i64::MAX);
    let artifacts = state.args.artifacts.clone();
    let result = async {
        let expired = state.args.db.delete_expired_jobs(cutoff).await?;
        let deleted = expired.len();
        for id in &expired {
            artifacts.remove(id).await?;
        }
        Ok::<_, StorageError>(deleted)
    }
    .await;
    match result {
        Ok(0) => {}
        Ok(deleted) => tracing::info!(deleted, "expired jobs deleted"),
        Err(error) => tracing::warn!(%error, "job retention sweep failed"),
    }
}
