//! One job's synthesis, sentence by sentence, as the JobsActor's work. A panic while a job runs fails that
//! job alone, with a reason.

use std::time::Duration;

use super::actor::ToJobsActor;
use crate::actors::tts::{SynthesisError, TtsHandle};
use crate::actors::work;
use crate::actors::{ActorError, ActorSlot};
use crate::audio;
use crate::storage::{space, ArtifactStore, JobRecord, Storage, StorageError};
use crate::tts::normalize::{split_pieces, PIECE_CHARS};
use crate::tts::TtsError;

/// How often a piece is retried while the synthesizer is busy or restarting.
const RETRIES: u32 = 60;
/// How often storing a job's audio on a full disk is tried again (after 2, 4 and 8 s) before the job fails.
const FULL_DISK_RETRIES: u32 = 3;
/// How often (every 50 ms) a runner tries to tell the actor it finished before giving up.
const REPORT_TRIES: u32 = 200;
/// How often a job's failure is written before it is left to the next start.
const RECORD_TRIES: u32 = 5;

/// What a runner needs.
pub struct JobContext {
    /// The server's lexicon, which a job's pronunciation rules are laid over.
    pub lexicon: std::sync::Arc<crate::tts::lexicon::Lexicon>,
    /// The longest a job's text may read with its rules (`jobs.max_chars`).
    pub max_chars: usize,
    pub db: Storage,
    pub artifacts: ArtifactStore,
    pub tts: TtsHandle,
    pub slot: ActorSlot<ToJobsActor>,
}

/// Claim the oldest queued job and run it to `succeeded` or `failed`, then tell the actor (which started this
/// runner for wake `generation`).
pub async fn run_next(context: JobContext, generation: u64) {
    let claimed = match context.db.claim_job().await {
        Ok(Some(job)) => {
            run_job(job, &context).await;
            true
        }
        Ok(None) => false,
        Err(error) => {
            tracing::warn!(%error, "could not claim a queued job");
            false
        }
    };
    // The actor counts its runners: it must hear of this one's end, also when it is just starting (its slot
    // not yet filled) or restarting.
    for _ in 0..REPORT_TRIES {
        let finished = ToJobsActor::Finished {
            claimed,
            generation,
        };
        if context.slot.cast(finished).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tracing::warn!(
        "jobs actor unavailable while a job finished; the queue resumes when it restarts"
    );
}

async fn run_job(job: JobRecord, context: &JobContext) {
    let id = job.id.clone();
    let run = async {
        work::caught("jobs", execute(job, context))
            .await
            .unwrap_or_else(|_| {
                Err(Outcome::Failed(
                    "the service failed unexpectedly while running the job; the server log names it by its id"
                        .into(),
                ))
            })
    };
    let outcome = match context.db.lease() {
        // While it runs, the job's lease is renewed; if another replica took it over, the work stops here.
        Some(lease) => tokio::select! {
            outcome = run => outcome,
            lost = keep_lease(context, &id, lease) => Err(lost),
        },
        None => run.await,
    };
    match outcome {
        Ok(()) => {}
        Err(Outcome::Skipped) => {}
        Err(Outcome::Failed(reason)) => {
            tracing::warn!(job_id = %id, %reason, "job failed");
            // A full disk may refuse the database too for a while: try a few times before leaving it to the
            // next start (which queues the job again).
            for attempt in 1..=RECORD_TRIES {
                match context.db.job_failed(&id, &reason).await {
                    Ok(_) => break,
                    Err(error) if attempt == RECORD_TRIES => {
                        tracing::error!(job_id = %id, %error, "could not record the failure");
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(2)).await,
                }
            }
        }
        Err(Outcome::Interrupted(error)) => {
            // Storage is failing: leave the job running; it is queued again at the next start (or, shared,
            // once its lease lapses).
            tracing::error!(job_id = %id, %error, "job interrupted by a storage error");
        }
    }
}

/// Renew `id`'s lease every third of it; returns only when the lease is lost.
async fn keep_lease(context: &JobContext, id: &str, lease: Duration) -> Outcome {
    let mut tick = tokio::time::interval(lease / 3);
    tick.tick().await;
    loop {
        tick.tick().await;
        match context.db.renew_job(id).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    job_id = id,
                    "job lease lost to another replica; its work here stops"
                );
                return Outcome::Skipped;
            }
            // The database is away: keep working; completion is fenced if the lease lapses meanwhile.
            Err(error) => tracing::warn!(job_id = id, %error, "job lease not renewed"),
        }
    }
}

enum Outcome {
    /// Someone else has it (it was not queued).
    Skipped,
    Failed(String),
    Interrupted(StorageError),
}

impl From<StorageError> for Outcome {
    fn from(e: StorageError) -> Self {
        Outcome::Interrupted(e)
    }
}

async fn execute(job: JobRecord, context: &JobContext) -> Result<(), Outcome> {
    let started = std::time::Instant::now();
    tracing::info!(job_id = %job.id, "job running");
    #[cfg(feature = "fault-injection")]
    crate::actors::faults::maybe_abort_job(&job.text);
    #[cfg(feature = "fault-injection")]
    crate::actors::faults::maybe_panic("job");

    // The rules were checked when the job was created; a job whose rules no longer read, or whose text reads
    // longer than its limit with them, fails with why.
    let lexicon = if job.pronunciation.is_empty() {
        None
    } else {
        let (base, rules, text) = (&context.lexicon, &job.pronunciation, &job.text);
        let layered =
            crate::tts::pronunciation::expand::layered_within(base, rules, text, context.max_chars)
                .map_err(|e| Outcome::Failed(format!("its pronunciation rules: {e}")))?;
        Some(std::sync::Arc::new(layered))
    };
    let pieces = split_pieces(&job.text, PIECE_CHARS);
    let mut samples: Vec<f32> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let reading = lexicon.clone();
        match synthesize_with_retry(&context.tts, &job, piece, reading).await {
            Ok(audio) => samples.extend(audio),
            Err(SynthesisError::Invalid(TtsError::NothingToSay)) => {}
            Err(error) => return Err(Outcome::Failed(error.to_string())),
        }
        let progress = (i + 1) as f64 / pieces.len() as f64;
        // Progress is for display: a database that cannot take it (a full disk) does not stop the job.
        if let Err(error) = context.db.job_progress(&job.id, progress).await {
            tracing::warn!(job_id = %job.id, %error, "job progress not recorded");
        }
    }
    if samples.is_empty() {
        return Err(Outcome::Failed(
            "the text contains nothing that can be spoken".into(),
        ));
    }

    let seconds = samples.len() as f64 / f64::from(audio::SAMPLE_RATE);
    store_audio(context, &job.id, audio::encode_wav_16k(&samples)).await?;
    if !context.db.job_succeeded(&job.id, seconds).await? {
        tracing::warn!(job_id = %job.id, "job finished here after another replica took it over");
        return Ok(());
    }
    tracing::info!(job_id = %job.id, audio_seconds = seconds, elapsed_ms = started.elapsed().as_millis() as u64, "job succeeded");
    Ok(())
}

/// Write the job's WAV; a full disk is tried again a bounded number of times, then fails the job with a reason
/// (nothing half-written is left behind).
async fn store_audio(context: &JobContext, id: &str, wav: Vec<u8>) -> Result<(), Outcome> {
    let wav = bytes::Bytes::from(wav);
    let mut attempt = 0;
    loop {
        match context.artifacts.publish(id, wav.clone()).await {
            Ok(()) => return Ok(()),
            Err(error) if space::is_full(&error) && attempt < FULL_DISK_RETRIES => {
                attempt += 1;
                tracing::warn!(job_id = id, attempt, %error, "disk full while storing job audio; trying again");
                tokio::time::sleep(Duration::from_secs(1 << attempt)).await;
            }
            Err(error) if space::is_full(&error) => {
                return Err(Outcome::Failed(format!(
                    "the server's disk is full: the audio ({} MB) could not be stored",
                    wav.len().div_ceil(1 << 20)
                )))
            }
            Err(error) => return Err(Outcome::Interrupted(error)),
        }
    }
}

/// Synthesise a piece of `job`, waiting out a busy or restarting synthesizer.
async fn synthesize_with_retry(
    tts: &TtsHandle,
    job: &crate::storage::JobRecord,
    text: &str,
    lexicon: Option<std::sync::Arc<crate::tts::lexicon::Lexicon>>,
) -> Result<Vec<f32>, SynthesisError> {
    let mut attempt = 0;
    loop {
        let reading = lexicon.clone();
        match tts
            .synthesize(&job.owner, &job.voice_id, text, job.settings, reading)
            .await
        {
            Err(SynthesisError::Actor(
                ActorError::Busy { .. }
                | ActorError::Restarting(_)
                | ActorError::Crashed(_)
                | ActorError::Timeout(_),
            )) if attempt < RETRIES => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt.min(8)))).await;
            }
            other => return other,
        }
    }
}
