//! Jobs, engine-neutral: the lifecycle queued → running → succeeded | failed as a record, its stored text form
//! (shared by both engines' tables), and the rule for jobs that stop the server. The SQL lies in
//! [`super::sqlite`] and [`super::postgres`].

use super::{now_rfc3339, StorageError};
use crate::tts::pronunciation::Rule;
use crate::tts::VoiceSettings;

/// Where a job is in its lifecycle (spec §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting for a worker.
    Queued,
    /// Being synthesised.
    Running,
    /// Audio ready to download.
    Succeeded,
    /// Ended without audio; `error` says why.
    Failed,
}

impl JobStatus {
    /// The stored and reported name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self, StorageError> {
        match s {
            "queued" => Ok(JobStatus::Queued),
            "running" => Ok(JobStatus::Running),
            "succeeded" => Ok(JobStatus::Succeeded),
            "failed" => Ok(JobStatus::Failed),
            other => Err(StorageError::Corrupt(format!("job status {other:?}"))),
        }
    }
}

/// One job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    /// `job_` + 32 hex digits.
    pub id: String,
    /// Id of the key that created it; no other key can see it.
    pub owner: String,
    /// Lifecycle state.
    pub status: JobStatus,
    /// The text to speak.
    pub text: String,
    /// The voice to speak it with.
    pub voice_id: String,
    /// Voice settings.
    pub settings: VoiceSettings,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Completion time, once succeeded or failed.
    pub completed_at: Option<String>,
    /// Fraction of sentences synthesised (0–1).
    pub progress: f64,
    /// Why a failed job failed.
    pub error: Option<String>,
    /// Seconds of audio, once succeeded.
    pub audio_seconds: Option<f64>,
    /// The pronunciation rules of the dictionaries the job was created with, in order (kept with the job, so
    /// a dictionary deleted later does not change what a queued job says).
    pub pronunciation: Vec<Rule>,
}

impl JobRecord {
    /// A new queued job created now.
    pub fn new(owner: &str, text: &str, voice_id: &str, settings: VoiceSettings) -> Self {
        Self {
            id: format!("job_{}", uuid::Uuid::new_v4().simple()),
            owner: owner.to_string(),
            status: JobStatus::Queued,
            text: text.to_string(),
            voice_id: voice_id.to_string(),
            settings,
            created_at: now_rfc3339(),
            completed_at: None,
            progress: 0.0,
            error: None,
            audio_seconds: None,
            pronunciation: Vec::new(),
        }
    }

    /// The same job, read with these pronunciation rules.
    pub fn with_pronunciation(mut self, rules: Vec<Rule>) -> Self {
        self.pronunciation = rules;
        self
    }
}

/// The jobs table's columns, in the order both engines read them.
pub(super) const COLUMNS: &str = "id, owner, status, text, voice_id, settings, created_at, completed_at, progress, error, audio_seconds, pronunciation";

/// A job as read, with its status, settings and pronunciation still as stored text.
pub(super) type Row = (JobRecord, String, String, Option<String>);

/// A job as read: its status, settings and pronunciation decoded.
pub(super) fn decode(
    (mut record, status, settings, pronunciation): Row,
) -> Result<JobRecord, StorageError> {
    record.status = JobStatus::parse(&status)?;
    record.settings =
        serde_json::from_str(&settings).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    if let Some(rules) = pronunciation {
        record.pronunciation =
            serde_json::from_str(&rules).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    }
    Ok(record)
}

/// A job's settings and pronunciation rules as stored text.
pub(super) fn encode(job: &JobRecord) -> Result<(String, Option<String>), StorageError> {
    let settings =
        serde_json::to_string(&job.settings).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let pronunciation = if job.pronunciation.is_empty() {
        None
    } else {
        Some(
            serde_json::to_string(&job.pronunciation)
                .map_err(|e| StorageError::Corrupt(e.to_string()))?,
        )
    };
    Ok((settings, pronunciation))
}

/// Count a state change for `/metrics`.
pub(super) fn entered(state: &'static str) {
    metrics::counter!(crate::telemetry::metrics::JOBS, "state" => state).increment(1);
}

/// How many starts of a job may end with the process stopping under it (a crash, an out-of-memory kill)
/// before the job is failed rather than queued again: a job whose work kills the server must not kill it on
/// every start.
pub const MAX_INTERRUPTED_STARTS: i32 = 2;

/// Why a job that stopped the server [`MAX_INTERRUPTED_STARTS`] times was failed.
pub const QUARANTINED: &str =
    "the job stopped the server twice while running; it will not be retried";

/// Log and count jobs failed because the process stopped under them too often.
pub(super) fn quarantined(ids: &[String]) {
    for id in ids {
        entered("failed");
        tracing::error!(job_id = %id, "{QUARANTINED}");
    }
}
