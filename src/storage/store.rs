//! What the service keeps, behind one trait: API keys, jobs, cloned voices, pronunciation dictionaries, agent
//! conversations, and (through [`super::CallStore`] and [`super::WebhookStore`], which every store also is) call
//! records and post-call webhooks. One
//! implementation per engine — SQLite in the data directory (the default, one machine) and PostgreSQL (many
//! replicas sharing one database) — and one conformance suite (`tests/engines/storage_conformance.rs`) that both pass.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::sessions::{SessionClaim, SessionLimits, SessionRecord};
use super::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};
use super::{ClonedVoiceRecord, DictionaryRecord, JobRecord, KeyRecord, KeySecret, StorageError};

/// A handle to the store the service was configured with; cheap to clone.
pub type Storage = Arc<dyn Store>;

/// What [`Store::job_listener`] calls when jobs may be waiting.
pub type JobsWaker = Arc<dyn Fn() + Send + Sync>;

/// A loop that listens for jobs queued by other processes, for the caller to run (and start again should it end).
pub type JobListener = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Everything durable. Each call is one transaction: a refusal or an error changes nothing.
#[async_trait]
pub trait Store: super::CallStore + super::WebhookStore + Send + Sync + 'static {
    /// The engine's name, for `/readyz` and logs: `sqlite` or `postgres`.
    fn engine(&self) -> &'static str;

    /// Whether other replicas may share this store (their jobs appear in it, and jobs left running are
    /// another replica's until their lease lapses).
    fn shared(&self) -> bool {
        false
    }

    /// How long a running job stays this process's without a sign of life, when other replicas could take it
    /// over (`None`: the store is this process's alone).
    fn lease(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether the store answers and its tables can be read (the readiness probe; cheap).
    async fn ping(&self) -> Result<(), StorageError>;

    /// Leave the store tidy at shutdown (SQLite folds its write-ahead log back into the file).
    async fn close(&self);

    // API keys: only their hashes are kept.

    /// Keep a new key's hash under `name`; its record.
    async fn insert_key(&self, name: &str, key: &str) -> Result<KeyRecord, StorageError>;
    /// Every key, revoked ones included, oldest first.
    async fn keys(&self) -> Result<Vec<KeyRecord>, StorageError>;
    /// Revoke a key by id; whether an active key was revoked.
    async fn revoke_key(&self, id: &str) -> Result<bool, StorageError>;
    /// Whether any key (revoked or not) was ever stored.
    async fn any_key(&self) -> Result<bool, StorageError>;
    /// The secret key ids are derived under: made once per store and kept in it, so that every process and
    /// replica using the store derives the same id for the same key.
    async fn key_secret(&self) -> Result<KeySecret, StorageError>;
    /// Hand everything kept under each `(old, new)` key id to the new id (jobs, voices, dictionaries,
    /// conversations and the key's own record), in one transaction; how many rows moved.
    async fn adopt_key_ids(&self, moves: &[(String, String)]) -> Result<usize, StorageError>;
    /// A number that changes whenever the keys may have changed (from any process or replica); cheap.
    async fn keys_version(&self) -> Result<i64, StorageError>;

    // Jobs: queued → running → succeeded | failed.

    /// Keep a new job unless its owner already has `max` queued or running; whether it was kept. Concurrent
    /// calls never pass the limit together.
    async fn insert_job_within(&self, job: &JobRecord, max: usize) -> Result<bool, StorageError>;
    /// A job by id.
    async fn job(&self, id: &str) -> Result<Option<JobRecord>, StorageError>;
    /// queued → running: the job as it now stands, or `None` if it was not queued (so it never runs twice
    /// at once).
    async fn start_job(&self, id: &str) -> Result<Option<JobRecord>, StorageError>;
    /// The oldest queued job, claimed (queued → running) for this process; `None` when none is queued. With
    /// several replicas each claims a different job without waiting on the others.
    async fn claim_job(&self) -> Result<Option<JobRecord>, StorageError>;
    /// A sign of life from the process running `id`: its lease is extended. False when the job is no longer
    /// this process's to finish (its lease lapsed and another took it): the work should stop.
    async fn renew_job(&self, id: &str) -> Result<bool, StorageError>;
    /// At shutdown: the jobs this process is running go back to the queue for another replica (or the next
    /// start), the start they were given taken back (a stop asked for is not held against a job); how many.
    async fn release_jobs(&self) -> Result<usize, StorageError>;
    /// A loop that calls `wake` whenever another process may have queued a job (PostgreSQL's `LISTEN`); none
    /// for a store that only this process writes.
    fn job_listener(&self, wake: JobsWaker) -> Option<JobListener> {
        drop(wake);
        None
    }
    /// A running job's progress (0–1).
    async fn job_progress(&self, id: &str, progress: f64) -> Result<(), StorageError>;
    /// running → succeeded, its audio already in place; whether it changed.
    async fn job_succeeded(&self, id: &str, audio_seconds: f64) -> Result<bool, StorageError>;
    /// running → failed with a reason; whether it changed.
    async fn job_failed(&self, id: &str, error: &str) -> Result<bool, StorageError>;
    /// Jobs left running by a process that stopped go back to the queue; how many. A store that is not
    /// shared takes back every running job (it is called at start); a shared one those whose lease lapsed. A
    /// job the process stopped under `MAX_INTERRUPTED_STARTS` (2) times is failed instead, with a reason that
    /// says so, so that a job whose work kills the server cannot kill it on every start.
    async fn requeue_running(&self) -> Result<usize, StorageError>;
    /// Ids of queued jobs, oldest first.
    async fn queued_jobs(&self) -> Result<Vec<String>, StorageError>;
    /// Delete finished jobs completed before `before_unix`; their ids (for removing their audio).
    async fn delete_expired_jobs(&self, before_unix: i64) -> Result<Vec<String>, StorageError>;

    // Cloned voices.

    /// Keep a new voice unless its owner already has `max`; whether it was kept.
    async fn insert_voice_within(
        &self,
        voice: &ClonedVoiceRecord,
        max: usize,
    ) -> Result<bool, StorageError>;
    /// Every cloned voice.
    async fn voices(&self) -> Result<Vec<ClonedVoiceRecord>, StorageError>;
    /// `owner`'s cloned voices, oldest first.
    async fn voices_of(&self, owner: &str) -> Result<Vec<ClonedVoiceRecord>, StorageError>;
    /// `owner`'s voice by id (another key's is not found).
    async fn voice(
        &self,
        owner: &str,
        voice_id: &str,
    ) -> Result<Option<ClonedVoiceRecord>, StorageError>;
    /// Delete `owner`'s voice; whether it existed.
    async fn delete_voice(&self, owner: &str, voice_id: &str) -> Result<bool, StorageError>;

    // Pronunciation dictionaries.

    /// Keep a new dictionary unless its owner already has `max`; whether it was kept.
    async fn insert_dictionary_within(
        &self,
        dictionary: &DictionaryRecord,
        max: usize,
    ) -> Result<bool, StorageError>;
    /// `owner`'s dictionary by id (another key's is not found).
    async fn dictionary(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<DictionaryRecord>, StorageError>;
    /// `owner`'s dictionaries, newest first: `limit` of them after skipping `offset`.
    async fn dictionaries(
        &self,
        owner: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<DictionaryRecord>, StorageError>;
    /// Delete `owner`'s dictionary; whether it existed.
    async fn delete_dictionary(&self, owner: &str, id: &str) -> Result<bool, StorageError>;

    // Usage and limits.

    /// Count `charge` unless it would take the month's total of its kind past the key's limit, in which case
    /// nothing changes. Charges of one key, month and kind are counted one after the other, from every replica.
    async fn charge(&self, charge: &Charge) -> Result<Charged, StorageError>;
    /// The month's (`YYYY-MM`) total of each kind `owner` used.
    async fn usage_totals(
        &self,
        owner: &str,
        period: &str,
    ) -> Result<Vec<(UsageKind, f64)>, StorageError>;
    /// `owner`'s use per day, kind and voice from day `from` to day `to` (`YYYY-MM-DD`, inclusive), oldest first.
    async fn usage(&self, owner: &str, from: &str, to: &str)
        -> Result<Vec<UsageRow>, StorageError>;
    /// `owner`'s monthly limits (unlimited when none are set).
    async fn key_limits(&self, owner: &str) -> Result<KeyLimits, StorageError>;
    /// Set a stored key's monthly limits; whether the key exists.
    async fn set_key_limits(&self, id: &str, limits: &KeyLimits) -> Result<bool, StorageError>;

    // Agent conversations.

    /// Keep a new, unlocked session, first making room for it under `limits`: idle sessions go, then the
    /// least recently used of its owner's (when the owner holds `per_owner`) or of all (at `capacity`).
    async fn insert_session(
        &self,
        session: &SessionRecord,
        limits: &SessionLimits,
    ) -> Result<(), StorageError>;
    /// The scenario of `owner`'s session `id`, if it was used within `idle`.
    async fn session_scenario(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
    ) -> Result<Option<String>, StorageError>;
    /// Take `owner`'s live session `id` for one turn under `token`, until it is released or `hold` passes
    /// (so a process that dies mid-turn holds it no longer); `Busy` while another turn has it.
    async fn claim_session(
        &self,
        owner: &str,
        id: &str,
        idle: Duration,
        token: &str,
        hold: Duration,
    ) -> Result<SessionClaim, StorageError>;
    /// Write back the session `token` took — its new `state`, or unchanged when `None` — and let it go;
    /// whether `token` still held it.
    async fn release_session(
        &self,
        id: &str,
        token: &str,
        state: Option<&str>,
    ) -> Result<bool, StorageError>;
}
