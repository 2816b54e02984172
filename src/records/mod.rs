//! Call records: what a bank or a clinic keeps of every agent conversation — an HTTP conversation, a realtime
//! socket, a phone call. Each record holds who called and when, how the call ended, every turn (the caller's
//! words with secrets masked, keyed digits never), the intent, slots, actions and safety class of each reply, the
//! transfers, and an outcome the scenario's rules decide. Records are written as the call goes ([`live`]), so a
//! process killed mid-call leaves everything said before the cut; they are private to the key that made them,
//! bounded in size, and kept for `records.retention_days`.

pub mod live;
pub mod recording;
pub mod shape;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::RecordSettings;
use crate::dialogue::call::CallSettings;
use crate::dialogue::transfer::CallSummary;
use crate::storage::{ArtifactStore, Blob, CallRow, Storage, StorageError};

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The caller.
    User,
    /// The agent.
    Agent,
}

/// An action a reply called.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionDone {
    /// Its name in the scenario.
    pub name: String,
    /// Whether it answered with success.
    pub ok: bool,
}

/// One turn of a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordTurn {
    /// Who spoke.
    pub role: Speaker,
    /// What was said (secrets masked; keys as `(vitufe) ****`).
    pub text: String,
    /// Seconds from the start of the call.
    pub at_secs: f64,
    /// The reply's outcome: its intent, or `emergency`, `crisis`, `fallback`… (agent turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// The slots filled after the reply, secrets as `****` (agent turns).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slots: BTreeMap<String, String>,
    /// The actions the reply called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionDone>,
    /// `emergency` or `crisis` when the safety layer answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<String>,
    /// The caller talked over the reply: `text` is what they heard of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A transfer of the call to people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordTransfer {
    /// Where to.
    pub to: String,
    /// Seconds from the start of the call.
    pub at_secs: f64,
    /// Whether the call was put through.
    pub ok: bool,
    /// Why it was not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The call so far, as the person taking it was told.
    pub summary: CallSummary,
}

/// Where a conversation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// `POST /v1/agent/converse` turns.
    Http,
    /// The realtime socket.
    Realtime,
    /// A Twilio phone call.
    Twilio,
}

/// A conversation's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// `conv_…` (a realtime or phone call) or the dialogue session's `ses_…` (HTTP turns).
    pub id: String,
    /// The scenario.
    pub scenario: String,
    /// Where it came from.
    pub channel: Channel,
    /// The caller's number, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The carrier's id of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_sid: Option<String>,
    /// When it started, seconds since the epoch.
    pub started_unix: i64,
    /// When it ended (none while it goes on; an HTTP conversation never ends, its last turn is when it was
    /// last used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_unix: Option<i64>,
    /// Seconds from start to end (or to the last turn).
    pub duration_secs: f64,
    /// How it ended: `silence`, `max_duration`, `farewell`, `transferred`, `caller_hung_up`, `server_stopped`…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// Every turn, oldest first.
    pub turns: Vec<RecordTurn>,
    /// Transfers, oldest first.
    #[serde(default)]
    pub transfers: Vec<RecordTransfer>,
    /// `success`, `failure` or `unknown`, by the scenario's `[call]` rules.
    pub outcome: String,
    /// Turns were left out: the record reached `records.max_record_bytes`.
    #[serde(default)]
    pub truncated: bool,
    /// A recording of the call is kept.
    #[serde(default)]
    pub audio: bool,
}

impl CallRecord {
    /// A record of a call starting now.
    pub fn new(id: String, scenario: String, channel: Channel) -> Self {
        Self {
            id,
            scenario,
            channel,
            caller: None,
            call_sid: None,
            started_unix: crate::storage::unix_now(),
            ended_unix: None,
            duration_secs: 0.0,
            end_reason: None,
            turns: Vec::new(),
            transfers: Vec::new(),
            outcome: "unknown".into(),
            truncated: false,
            audio: false,
        }
    }

    /// Add a turn, unless the record has reached `max_bytes` (then it is marked truncated).
    pub fn push(&mut self, turn: RecordTurn, max_bytes: usize) {
        let size = serde_json::to_vec(self).map_or(0, |b| b.len())
            + serde_json::to_vec(&turn).map_or(0, |b| b.len());
        if size > max_bytes {
            self.truncated = true;
            return;
        }
        self.duration_secs = self.duration_secs.max(turn.at_secs);
        self.turns.push(turn);
    }

    /// The outcome by the scenario's rules: `failure` when anything of the call is in `failure_on`, else
    /// `success` when anything is in `success_on`, else `unknown`. What happened in a call: each reply's intent,
    /// `done:ACTION` and `failed:ACTION` for its actions, how the call ended, `transferred` and
    /// `transfer_failed`.
    pub fn judge(&mut self, call: &CallSettings) {
        let mut marks: Vec<String> = Vec::new();
        for turn in &self.turns {
            marks.extend(turn.intent.clone());
            for action in &turn.actions {
                let done = if action.ok { "done" } else { "failed" };
                marks.push(format!("{done}:{}", action.name));
            }
        }
        marks.extend(self.end_reason.clone());
        for transfer in &self.transfers {
            marks.push(
                if transfer.ok {
                    "transferred"
                } else {
                    "transfer_failed"
                }
                .into(),
            );
        }
        let any = |names: &[String]| marks.iter().any(|m| names.contains(m));
        self.outcome = if any(&call.failure_on) {
            "failure"
        } else if any(&call.success_on) {
            "success"
        } else {
            "unknown"
        }
        .into();
    }

    /// The row that keeps it for `owner`.
    pub fn row(&self, owner: &str) -> CallRow {
        let mut search = String::new();
        for turn in &self.turns {
            search.push_str(&turn.text.to_lowercase());
            search.push('\n');
        }
        CallRow {
            id: self.id.clone(),
            owner: owner.to_string(),
            scenario: self.scenario.clone(),
            started_unix: self.started_unix,
            outcome: self.outcome.clone(),
            search,
            body: serde_json::to_string(self).unwrap_or_default(),
        }
    }

    /// The record a row keeps.
    pub fn from_row(row: &CallRow) -> Result<Self, StorageError> {
        serde_json::from_str(&row.body).map_err(|e| StorageError::Corrupt(e.to_string()))
    }
}

/// The records of a service: where they are kept and how.
#[derive(Clone)]
pub struct Records {
    /// The store.
    pub store: Storage,
    /// Where recordings are kept (beside job audio: the data directory or the object store).
    pub blobs: ArtifactStore,
    /// `[records]`.
    pub settings: Arc<RecordSettings>,
    /// Where a call's record goes when it ends.
    pub webhooks: crate::webhooks::Webhooks,
}

/// The name a call's recording is kept under.
fn audio_name(id: &str) -> String {
    format!("recording-{id}")
}

impl Records {
    /// Records in `store`, recordings in `blobs`; each call's record goes to `webhooks` when it ends.
    pub fn new(
        store: Storage,
        blobs: ArtifactStore,
        settings: RecordSettings,
        webhooks: crate::webhooks::Webhooks,
    ) -> Self {
        Self {
            store,
            blobs,
            settings: Arc::new(settings),
            webhooks,
        }
    }

    /// Keep a call's recording (a WAV).
    pub async fn keep_audio(&self, id: &str, wav: bytes::Bytes) -> Result<(), StorageError> {
        self.blobs.publish(&audio_name(id), wav).await
    }

    /// A call's recording, opened; none when it is not kept.
    pub async fn audio(&self, id: &str) -> Result<Option<Blob>, StorageError> {
        match self.blobs.open(&audio_name(id)).await {
            Ok(blob) => Ok(Some(blob)),
            Err(StorageError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Remove a call's recording, if any (a record deleted or expired).
    pub async fn forget_audio(&self, id: &str) {
        match self.blobs.remove(&audio_name(id)).await {
            Ok(()) => {}
            Err(StorageError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => tracing::warn!(%error, "a call's recording could not be removed"),
        }
    }

    /// Delete, once an hour, the records (and recordings) older than `records.retention_days`.
    pub async fn expire_loop(self) {
        let days = i64::try_from(self.settings.retention_days).unwrap_or(i64::MAX / 86_400);
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            tick.tick().await;
            let cutoff = crate::storage::unix_now().saturating_sub(days.saturating_mul(86_400));
            match self.store.delete_expired_calls(cutoff).await {
                Ok(expired) => {
                    for id in &expired {
                        self.forget_audio(id).await;
                    }
                    if !expired.is_empty() {
                        tracing::info!(deleted = expired.len(), "expired call records deleted");
                    }
                }
                Err(error) => tracing::warn!(%error, "call record expiry failed"),
            }
        }
    }

    /// An HTTP turn of `owner`'s conversation `session_id`: the caller's words and the agent's reply are added to
    /// its record (made on the first turn). Called while the conversation's turn lock is held, so two turns of one
    /// conversation never race here.
    pub async fn http_turn(&self, owner: &str, session_id: &str, turn: HttpTurn<'_>) {
        let kept = match self.store.call(owner, session_id).await {
            Ok(kept) => kept,
            Err(error) => return tracing::warn!(%error, "a call record could not be read"),
        };
        let mut record = match kept.as_ref().map(CallRecord::from_row) {
            Some(Ok(record)) => record,
            _ => CallRecord::new(
                session_id.to_string(),
                turn.scenario.to_string(),
                Channel::Http,
            ),
        };
        let at = (crate::storage::unix_now() - record.started_unix).max(0) as f64;
        let max = self.settings.max_record_bytes;
        record.push(user_turn(turn.said.to_string(), at), max);
        record.push(agent_turn(turn.reply, turn.summary, at), max);
        record.judge(turn.call);
        if let Err(error) = self.store.put_call(&record.row(owner)).await {
            tracing::warn!(%error, "a call record could not be kept");
        }
    }
}

/// What an HTTP turn adds to its conversation's record.
pub struct HttpTurn<'a> {
    /// The scenario.
    pub scenario: &'a str,
    /// Its `[call]` rules for the outcome.
    pub call: &'a CallSettings,
    /// What the caller said, secrets masked.
    pub said: &'a str,
    /// The reply.
    pub reply: &'a crate::dialogue::Reply,
    /// The conversation after the reply.
    pub summary: &'a CallSummary,
}

/// The caller's turn.
pub fn user_turn(text: String, at_secs: f64) -> RecordTurn {
    RecordTurn {
        role: Speaker::User,
        text,
        at_secs,
        intent: None,
        slots: BTreeMap::new(),
        actions: Vec::new(),
        safety: None,
        interrupted: false,
    }
}

/// The agent's reply.
pub fn agent_turn(
    reply: &crate::dialogue::Reply,
    summary: &CallSummary,
    at_secs: f64,
) -> RecordTurn {
    RecordTurn {
        role: Speaker::Agent,
        text: reply.text.clone(),
        at_secs,
        intent: Some(reply.outcome.clone()).filter(|o| !o.is_empty()),
        slots: summary.slots.clone(),
        actions: reply
            .actions
            .iter()
            .map(|name| ActionDone {
                name: name.clone(),
                ok: !reply.failed.contains(name),
            })
            .collect(),
        safety: summary.safety.clone(),
        interrupted: false,
    }
}
