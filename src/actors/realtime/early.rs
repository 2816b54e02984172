//! Recognition ahead of the end of a turn. Once the caller has been quiet for the silence a turn keeps at its
//! end (200 ms), the turn's audio is what it will be if the silence goes on to end it; recognising it then
//! gives the transcript the turn would get, while the rest of the end-of-turn silence runs. A turn that ends
//! with that audio takes the transcript; a caller who speaks again makes it stale, and it is dropped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::actor::State;
use crate::actors::work::OwnedTask;
use crate::telemetry::metrics::REALTIME_EARLY_RECOGNITIONS;

/// A recognition started before its turn ended.
pub struct Early {
    /// Samples of the audio being recognised.
    length: usize,
    /// The transcript's text and how long it waited for a worker, or why there is none, once known.
    result: Heard,
    /// The recognition; dropping it stops the work.
    _task: OwnedTask,
}

/// Where an early recognition's outcome appears.
pub type Heard = watch::Receiver<Option<Result<(String, Duration), String>>>;

impl Early {
    /// The transcript, once recognised, and how long it waited for a worker; an error when the recognition
    /// failed (the turn then recognises anew).
    pub async fn text(mut self) -> Result<(String, Duration), String> {
        match self.result.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone().unwrap_or_else(|| Err("no outcome".into())),
            Err(_) => Err("the early recognition stopped".into()),
        }
    }

    /// A view of the outcome for another reader.
    pub fn watch(&self) -> Heard {
        self.result.clone()
    }
}

/// The text an early recognition heard, once it has; `None` if it failed or stopped.
pub async fn text_of(mut heard: Heard) -> Option<String> {
    let outcome = heard.wait_for(Option::is_some).await.ok()?.clone()?;
    outcome.ok().map(|(text, _)| text)
}

impl State {
    /// The caller fell quiet: recognise the turn as it stands.
    pub(super) fn settled(&mut self, audio: Vec<f32>) {
        if self.early.take().is_some() {
            metrics::counter!(REALTIME_EARLY_RECOGNITIONS, "outcome" => "discarded").increment(1);
        }
        let length = audio.len();
        let (send, result) = watch::channel(None);
        let asr = self.args.services.asr.clone();
        let owner = self.args.options.owner.clone();
        let audio = Arc::new(audio);
        // Only what interim recognition has not settled is left to recognise.
        let settled = Some(self.interim_settled());
        let task = OwnedTask::spawn("realtime", async move {
            let transcript = super::interim::hear_rest(&asr, &owner, audio, settled)
                .await
                .map_err(|e| e.to_string());
            let _ = send.send(Some(transcript));
        });
        self.early = Some(Early {
            length,
            result,
            _task: task,
        });
    }

    /// The caller speaks again: a recognition of the turn as it stood is stale.
    pub(super) fn resumed(&mut self) {
        if self.early.is_some() && self.vad.speaking() {
            self.early = None;
            metrics::counter!(REALTIME_EARLY_RECOGNITIONS, "outcome" => "discarded").increment(1);
        }
    }

    /// The recognition already under way for a turn that ended with `audio`, if there is one.
    pub(super) fn early_for(&mut self, audio: &[f32]) -> Option<Early> {
        let early = self.early.take()?;
        let used = early.length == audio.len();
        let outcome = if used { "used" } else { "discarded" };
        metrics::counter!(REALTIME_EARLY_RECOGNITIONS, "outcome" => outcome).increment(1);
        used.then_some(early)
    }
}
