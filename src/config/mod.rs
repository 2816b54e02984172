//! Layered configuration: compiled defaults → `config/default.toml` → `config/{RUN_MODE}.toml` →
//! `config/local.toml` → `--config FILE` → environment `SAUTI__SECTION__KEY`. Validated once at start-up; an
//! invalid value stops start-up with one message naming the key.

use std::path::{Path, PathBuf};

use config::{Config, Environment, File, FileFormat};
use serde::{Deserialize, Serialize};

mod realtime;
mod records;
mod server;
mod speech;
mod turns;

pub use realtime::{RealtimeSettings, TelephonySettings, END_OF_TURN_RANGE_MS};
pub use records::{RecordSettings, WebhookSettings};
pub use server::ServerSettings;
pub use speech::{AsrSettings, CloneSettings, CtcRoute, TtsSettings, VoiceSettingsEntry};
pub use turns::{Detector, TurnSettings};

use crate::dialogue::settings::DialogueSettings;
use crate::models::ModelSettings;

/// Everything an operator can set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Listening socket and public URL.
    pub server: ServerSettings,
    /// Where the database and job audio live.
    pub storage: StorageSettings,
    /// API keys.
    pub auth: AuthSettings,
    /// Requests per minute per key and category.
    pub limits: LimitSettings,
    /// Synthesis: voices, workers, admission, text limits.
    pub tts: TtsSettings,
    /// Speech recognition: the Whisper model, workers, upload limit.
    pub asr: AsrSettings,
    /// Voice cloning: upload limit, voices per key, whether references are kept.
    pub clone: CloneSettings,
    /// Asynchronous synthesis jobs.
    pub jobs: JobSettings,
    /// Actor supervision.
    pub supervisor: SupervisorSettings,
    /// The voice agent's dialogue layer.
    pub dialogue: DialogueSettings,
    /// The realtime voice agent's sockets.
    pub realtime: RealtimeSettings,
    /// Speech detection and the end of a caller's turn.
    pub turns: TurnSettings,
    /// Call control on the phone network (Twilio).
    pub telephony: TelephonySettings,
    /// Call records.
    pub records: RecordSettings,
    /// Post-call webhooks.
    pub webhooks: WebhookSettings,
    /// Model files and ONNX Runtime.
    pub models: ModelSettings,
    /// `GET /metrics`.
    pub metrics: MetricsSettings,
    /// Logging.
    pub log: LogSettings,
}

/// `[metrics]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSettings {
    /// Who may read `GET /metrics`.
    pub access: MetricsAccess,
}

impl Default for MetricsSettings {
    fn default() -> Self {
        Self {
            access: MetricsAccess::Open,
        }
    }
}

/// Who may read `GET /metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricsAccess {
    /// Anyone who can reach the port (the default bind is loopback).
    Open,
    /// Callers with a valid API key in `xi-api-key`.
    Key,
    /// Nobody: 404.
    Off,
}

/// `[storage]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageSettings {
    /// Where jobs, keys, cloned voices and dictionaries are kept: empty or `sqlite://` for `sauti.db` in
    /// `data_dir` (one machine), or `postgres://user:password@host:port/database` for a PostgreSQL database
    /// that several replicas share. Migrations run at start-up (and with `sauti migrate`).
    pub url: String,
    /// With PostgreSQL: a running job stays its replica's this long after each sign of life (renewed every
    /// third of it); a replica that dies leaves its jobs to the others after at most this long.
    pub job_lease_seconds: u64,
    /// Where job audio is kept: empty for files under `data_dir/jobs`, or `s3://bucket[/prefix]` for an
    /// S3-compatible object store that every replica shares (credentials, region and endpoint from `AWS_*`
    /// environment variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT`,
    /// `AWS_ALLOW_HTTP`).
    pub blobs_url: String,
    /// Directory for the SQLite database and job audio; created if missing.
    pub data_dir: PathBuf,
    /// Below this many bytes available on the data directory's disk, `/readyz` is not ready and new jobs and
    /// cloned voices are refused with 507.
    pub min_free_bytes: u64,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            job_lease_seconds: 30,
            blobs_url: String::new(),
            data_dir: PathBuf::from("data"),
            min_free_bytes: 64 << 20,
        }
    }
}

/// `[auth]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    /// Plaintext keys for development (comma-separated in the environment). Only their hashes are kept in
    /// memory. When empty and the database holds no key, `serve` creates one development key and prints it once.
    pub api_keys: Vec<String>,
}

/// `[limits]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    /// `POST /v1/text-to-speech/*`, `POST /v1/tts/jobs`.
    pub synthesis_per_minute: u32,
    /// `GET /v1/tts/jobs/*`.
    pub status_per_minute: u32,
    /// Every other `/v1` endpoint.
    pub default_per_minute: u32,
    /// Requests without a valid key, per client IP address.
    pub unauthenticated_per_minute: u32,
    /// `redis://host:port[/db]`: count the limits in this Redis, shared by every replica; empty: in this process.
    pub redis_url: String,
    /// Prefix of the Redis keys (replicas sharing limits use the same).
    pub redis_prefix: String,
    /// How long a request waits for Redis before `redis_unreachable` applies.
    pub redis_timeout_ms: u64,
    /// While Redis does not answer: count in this process (`local`) or refuse with 503 (`refuse`).
    pub redis_unreachable: RedisUnreachable,
}

/// What a replica does while the shared rate limits do not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedisUnreachable {
    /// Count in this process (each replica then allows the whole rate on its own).
    Local,
    /// Refuse with 503 `rate_limits_unavailable`.
    Refuse,
}

impl Default for LimitSettings {
    fn default() -> Self {
        Self {
            synthesis_per_minute: 10,
            status_per_minute: 60,
            default_per_minute: 30,
            unauthenticated_per_minute: 30,
            redis_url: String::new(),
            redis_prefix: "sauti".into(),
            redis_timeout_ms: 250,
            redis_unreachable: RedisUnreachable::Local,
        }
    }
}

/// `[jobs]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobSettings {
    /// Longest text `POST /v1/tts/jobs` accepts, in characters.
    pub max_chars: usize,
    /// Finished jobs (and their audio) are deleted this many hours after completion.
    pub retention_hours: u64,
    /// Jobs synthesised at the same time.
    pub workers: usize,
    /// Unfinished (queued or running) jobs one key may have at once.
    pub max_unfinished_per_key: usize,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            max_chars: 20_000,
            retention_hours: 24,
            workers: 1,
            max_unfinished_per_key: 50,
        }
    }
}

/// `[supervisor]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SupervisorSettings {
    /// Restarts allowed per actor within `restart_window_seconds`; past that the service stops.
    pub max_restarts: u32,
    /// The window over which restarts are counted.
    pub restart_window_seconds: u64,
}

impl Default for SupervisorSettings {
    fn default() -> Self {
        Self {
            max_restarts: 10,
            restart_window_seconds: 60,
        }
    }
}

/// `[log]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `text` for people, `json` for log collectors.
    pub format: LogFormat,
    /// A `RUST_LOG`-style filter; the `RUST_LOG` variable overrides it.
    pub filter: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            filter: "info".into(),
        }
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A source could not be read or a value has the wrong type (the message names the key).
    #[error("invalid configuration: {0}")]
    Load(#[from] config::ConfigError),
    /// A value is of the right type but not acceptable.
    #[error("invalid configuration: {key} {problem}")]
    Invalid {
        /// The dotted key, e.g. `limits.synthesis_per_minute`.
        key: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

impl Settings {
    /// Load every layer, from `config_dir` (normally `config/`), an optional explicit file and the environment.
    pub fn load(config_dir: &Path, explicit: Option<&Path>) -> Result<Self, ConfigError> {
        let run_mode = std::env::var("RUN_MODE").unwrap_or_else(|_| "development".into());
        let layer = |name: &str| {
            File::from(config_dir.join(name))
                .format(FileFormat::Toml)
                .required(false)
        };
        let mut builder = Config::builder()
            .add_source(Config::try_from(&Settings::default())?)
            .add_source(layer("default.toml"))
            .add_source(layer(&format!("{run_mode}.toml")))
            .add_source(layer("local.toml"));
        if let Some(path) = explicit {
            builder = builder.add_source(File::from(path).format(FileFormat::Toml).required(true));
        }
        let settings: Settings = builder
            .add_source(
                Environment::with_prefix("SAUTI")
                    .prefix_separator("__")
                    .separator("__")
                    .list_separator(",")
                    .with_list_parse_key("auth.api_keys")
                    .with_list_parse_key("server.cors_origins")
                    .try_parsing(true),
            )
            .build()?
            .try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Check values the types alone do not constrain.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key, problem: &str| {
            Err(ConfigError::Invalid {
                key,
                problem: problem.to_string(),
            })
        };
        if let Some((key, problem)) = self.server.problem() {
            return invalid(key, &problem);
        }
        if let Some((key, problem)) = self.realtime.problem().or_else(|| self.turns.problem()) {
            return invalid(key, &problem);
        }
        if self.storage.job_lease_seconds < 3 {
            return invalid("storage.job_lease_seconds", "must be at least 3");
        }
        if !(self.storage.blobs_url.is_empty() || self.storage.blobs_url.starts_with("s3://")) {
            return invalid(
                "storage.blobs_url",
                "must be empty (files in storage.data_dir) or an `s3://bucket[/prefix]` URL",
            );
        }
        let url = self.storage.url.as_str();
        if !(url.is_empty()
            || url == "sqlite://"
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://"))
        {
            return invalid(
                "storage.url",
                "must be empty or `sqlite://` (SQLite in storage.data_dir) or a `postgres://` URL",
            );
        }
        for (key, value) in [
            (
                "limits.synthesis_per_minute",
                self.limits.synthesis_per_minute,
            ),
            ("limits.status_per_minute", self.limits.status_per_minute),
            ("limits.default_per_minute", self.limits.default_per_minute),
            (
                "limits.unauthenticated_per_minute",
                self.limits.unauthenticated_per_minute,
            ),
        ] {
            if value == 0 {
                return invalid(key, "must be at least 1");
            }
        }
        if self.tts.workers == 0 {
            return invalid("tts.workers", "must be at least 1");
        }
        let mut ids = std::collections::HashSet::new();
        for voice in &self.tts.voices {
            if voice.id.is_empty()
                || !voice
                    .id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return invalid("tts.voices.id", "must be letters, digits, `-` or `_`");
            }
            if !ids.insert(voice.id.as_str()) || ["zuri", "baraka"].contains(&voice.id.as_str()) {
                return invalid("tts.voices.id", &format!("{:?} is used twice", voice.id));
            }
            if voice.engine != "vits" {
                return invalid(
                    "tts.voices.engine",
                    &format!("{:?} is not an engine (only \"vits\")", voice.engine),
                );
            }
        }
        if self.jobs.workers == 0 {
            return invalid("jobs.workers", "must be at least 1");
        }
        if self.clone.max_upload_bytes < 1024 {
            return invalid("clone.max_upload_bytes", "must be at least 1024");
        }
        if self.clone.queue == 0 {
            return invalid("clone.queue", "must be at least 1");
        }
        if !matches!(self.clone.method.as_str(), "auto" | "dsp") {
            return invalid("clone.method", "must be \"auto\" or \"dsp\"");
        }
        if !(-1.0..=1.0).contains(&self.clone.similarity_floor) {
            return invalid("clone.similarity_floor", "must be -1 to 1");
        }
        if self.asr.workers == 0 {
            return invalid("asr.workers", "must be at least 1");
        }
        if !(1..=64).contains(&self.asr.batch_size) {
            return invalid("asr.batch_size", "must be 1 to 64");
        }
        if self.asr.batch_window_ms > 100 {
            return invalid("asr.batch_window_ms", "must be 0 to 100");
        }
        if self.asr.max_new_tokens == 0 {
            return invalid("asr.max_new_tokens", "must be at least 1");
        }
        if self.asr.max_upload_bytes < 1024 {
            return invalid("asr.max_upload_bytes", "must be at least 1024");
        }
        if let Some((key, problem)) = self.asr.problem() {
            return invalid(key, &problem);
        }
        if self.jobs.max_chars < 1 {
            return invalid("jobs.max_chars", "must be at least 1");
        }
        if let Some((key, problem)) = self.dialogue.problem() {
            return invalid(key, problem);
        }
        if let Some((key, problem)) = self.telephony.problem() {
            return invalid(key, &problem);
        }
        if let Some((key, problem)) = self.records.problem().or_else(|| self.webhooks.problem()) {
            return invalid(key, &problem);
        }
        if self.auth.api_keys.iter().any(|k| k.trim().len() < 8) {
            return invalid("auth.api_keys", "must each be at least 8 characters");
        }
        Ok(())
    }
}
