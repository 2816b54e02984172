//! The record of a call under way: the session adds to it as the call goes, and a writer beside the session
//! keeps the newest state in the store. The writer holds one pending state at most (a newer one replaces it), so
//! a slow store never delays the call and never piles up copies; when the session ends, the last state is written
//! and the writer stops.

use std::time::Instant;

use tokio::sync::{oneshot, watch};

use super::recording::Recording;
use super::{CallRecord, Channel, RecordTransfer, RecordTurn, Records};
use crate::dialogue::call::CallSettings;
use crate::storage::CallRow;
use crate::telephony::CallInfo;

/// Tries to keep one state before it is given up (a newer state is tried afresh).
const TRIES: usize = 3;

/// A call's record while the call goes on.
pub struct LiveRecord {
    record: CallRecord,
    owner: String,
    started: Instant,
    call: CallSettings,
    max_bytes: usize,
    latest: watch::Sender<Option<CallRow>>,
    /// The call's audio, when recording is on, and where it goes when the call is over.
    recording: Option<(Recording, oneshot::Sender<Vec<u8>>)>,
}

impl LiveRecord {
    /// The record of call `id` starting now, written to `records`' store as it changes.
    pub fn start(
        records: &Records,
        owner: &str,
        id: &str,
        scenario: &str,
        channel: Channel,
        call: CallSettings,
    ) -> Self {
        let (latest, rows) = watch::channel(None);
        let (audio, wav) = oneshot::channel();
        tokio::spawn(write(records.clone(), rows, wav));
        let settings = &records.settings;
        let recording = (settings.recording && channel != Channel::Http)
            .then(|| (Recording::new(settings.max_recording_seconds), audio));
        let mut live = Self {
            record: CallRecord::new(id.to_string(), scenario.to_string(), channel),
            owner: owner.to_string(),
            started: Instant::now(),
            call,
            max_bytes: records.settings.max_record_bytes,
            latest,
            recording,
        };
        live.save();
        live
    }

    fn at(&self) -> f64 {
        (self.started.elapsed().as_secs_f64() * 100.0).round() / 100.0
    }

    fn save(&mut self) {
        self.record.duration_secs = self.record.duration_secs.max(self.at());
        self.record.judge(&self.call);
        self.latest.send_replace(Some(self.record.row(&self.owner)));
    }

    /// What the client said of the call: the caller's number and the carrier's call id.
    pub fn call(&mut self, call: &CallInfo) {
        self.record.caller = call.caller.clone();
        self.record.call_sid = call.call_sid.clone();
        self.save();
    }

    /// The caller said (or keyed) this, secrets masked.
    pub fn heard(&mut self, text: &str) {
        let turn = super::user_turn(text.to_string(), self.at());
        self.record.push(turn, self.max_bytes);
        self.save();
    }

    /// The agent answered (its intent, slots and actions already in `turn`).
    pub fn answered(&mut self, mut turn: RecordTurn) {
        turn.at_secs = self.at();
        self.record.push(turn, self.max_bytes);
        self.save();
    }

    /// The caller cut the last reply: the record keeps what they heard of it.
    pub fn cut(&mut self, heard: &str) {
        let last = self
            .record
            .turns
            .iter_mut()
            .rev()
            .find(|t| t.role == super::Speaker::Agent);
        if let Some(turn) = last {
            turn.text = heard.to_string();
            turn.interrupted = true;
        }
        self.save();
    }

    /// A transfer was made, or failed.
    pub fn transfer(&mut self, mut transfer: RecordTransfer) {
        transfer.at_secs = self.at();
        self.record.transfers.push(transfer);
        self.save();
    }

    /// Whether the call's audio is recorded (the session then hands it the agent's speech at 8 kHz).
    pub fn recording(&self) -> bool {
        self.recording.is_some()
    }

    /// The caller's audio (16 kHz), for the recording.
    pub fn caller_audio(&mut self, samples: &[f32]) {
        if let Some((recording, _)) = self.recording.as_mut() {
            recording.caller(samples);
        }
    }

    /// A piece of the agent's speech (8 kHz), for the recording.
    pub fn agent_audio(&mut self, samples: &[i16]) {
        if let Some((recording, _)) = self.recording.as_mut() {
            recording.agent(samples);
        }
    }

    /// The caller talked over the agent: the recording's agent side stops where the reply did.
    pub fn agent_cut(&mut self) {
        if let Some((recording, _)) = self.recording.as_mut() {
            recording.cut_agent();
        }
    }

    /// The call ended, and why (the first reason given is kept).
    pub fn end(&mut self, reason: &str) {
        if self.record.ended_unix.is_some() {
            return;
        }
        self.record.ended_unix = Some(crate::storage::unix_now());
        self.record.end_reason = Some(reason.to_string());
        self.save();
    }
}

impl Drop for LiveRecord {
    fn drop(&mut self) {
        // A session that stops without a reason: the caller's side went away.
        self.end("disconnected");
        if let Some((recording, kept)) = self.recording.take() {
            let _ = kept.send(recording.wav());
        }
    }
}

/// Keep the newest state of a record until its session has gone and the last state is kept; then the
/// recording, if there is one, and the record again, now saying it has one; then the record goes to the key's
/// webhook.
async fn write(
    records: Records,
    mut rows: watch::Receiver<Option<CallRow>>,
    mut wav: oneshot::Receiver<Vec<u8>>,
) {
    let mut kept: Option<CallRow> = None;
    loop {
        let open = rows.changed().await.is_ok();
        let row = rows.borrow_and_update().clone();
        if let Some(row) = row.filter(|row| kept.as_ref().is_none_or(|k| k.body != row.body)) {
            if keep(&records, &row).await {
                kept = Some(row);
            }
        }
        if !open {
            break;
        }
    }
    let Some(row) = kept else {
        return;
    };
    let Ok(mut record) = CallRecord::from_row(&row) else {
        return;
    };
    if let Ok(wav) = wav.try_recv() {
        match records.keep_audio(&row.id, wav.into()).await {
            Ok(()) => {
                record.audio = true;
                keep(&records, &record.row(&row.owner)).await;
            }
            Err(error) => {
                tracing::warn!(%error, call = row.id, "a call's recording could not be kept")
            }
        }
    }
    let data = super::shape::conversation(&record);
    let kind = crate::webhooks::POST_CALL_TRANSCRIPTION;
    records.webhooks.send(&row.owner, kind, data).await;
}

/// Keep one state of a record, trying again a little later if the store fails; whether it was kept.
async fn keep(records: &Records, row: &CallRow) -> bool {
    for attempt in 1..=TRIES {
        match records.store.put_call(row).await {
            Ok(()) => return true,
            Err(error) if attempt == TRIES => {
                tracing::warn!(%error, call = row.id, "a call record could not be kept");
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
    false
}
