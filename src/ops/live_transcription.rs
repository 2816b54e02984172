//! Live transcription (OpenAI's realtime transcription sessions): each committed turn of a caller's audio is
//! recognised as an upload is — charged its seconds first, the same recognizer, so the same audio gives the same
//! transcript — and while the caller is still speaking, engines that time their words (the CTC models) are asked
//! for the turn so far, and the words that stay put are sent ahead as deltas.

use std::sync::Arc;

use super::usage::{self, Usage};
use super::Service;
use crate::asr::{Hints, Task, Transcript};
use crate::problem::ApiError;
use crate::storage::usage::UsageKind;

/// The text of one turn sent ahead of its transcript, and what to send next.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deltas {
    sent: String,
}

impl Deltas {
    /// What a partial transcript adds: its words but the last (which may still change), when what was sent is
    /// where it starts; `None` when it adds nothing.
    pub fn partial(&mut self, transcript: &str) -> Option<String> {
        let words: Vec<&str> = transcript.split_whitespace().collect();
        let settled = words.len().checked_sub(1)?;
        let text = words[..settled].join(" ");
        self.advance(&text)
    }

    /// What the final transcript adds to what was sent (all of it when nothing was); `None` when nothing, or
    /// when the final transcript no longer starts with what was sent (its `completed` event says it whole).
    pub fn finish(&mut self, transcript: &str) -> Option<String> {
        let text = transcript.split_whitespace().collect::<Vec<_>>().join(" ");
        self.advance(&text)
    }

    fn advance(&mut self, text: &str) -> Option<String> {
        let rest = text.strip_prefix(self.sent.as_str())?;
        if rest.trim().is_empty() {
            return None;
        }
        let delta = match self.sent.is_empty() || rest.starts_with(' ') {
            true => rest.to_string(),
            // The last word sent grew ("habar" → "habari"): not a settled word after all.
            false => return None,
        };
        self.sent = text.to_string();
        Some(delta)
    }
}

impl Service {
    /// Recognise one committed turn of `owner`'s live session (16 kHz samples in `language`): its seconds
    /// charged first (429 past the key's limit).
    pub async fn transcribe_turn(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
        hints: &Hints,
    ) -> Result<Transcript, ApiError> {
        let seconds = samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
        let seconds = (seconds * 1000.0).round() / 1000.0;
        self.charge(owner, UsageKind::AudioSeconds, "", seconds)
            .await?;
        let asr = &self.graph.asr;
        match asr
            .recognise(owner, samples, language, Task::Transcribe, hints.clone())
            .await
        {
            Ok(transcript) => {
                usage::record(Usage::RecognisedSeconds(seconds));
                Ok(transcript)
            }
            Err(error) => {
                self.refund(owner, UsageKind::AudioSeconds, "", seconds)
                    .await;
                Err(error.into())
            }
        }
    }

    /// The turn so far, recognised for its deltas (not charged: the turn is, once committed).
    pub async fn transcribe_partial(
        &self,
        owner: &str,
        samples: Arc<Vec<f32>>,
        language: &str,
        hints: &Hints,
    ) -> Result<Transcript, ApiError> {
        let asr = &self.graph.asr;
        Ok(asr
            .recognise(owner, samples, language, Task::Transcribe, hints.clone())
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_words_go_ahead_and_the_rest_follows_once() {
        let mut deltas = Deltas::default();
        assert_eq!(deltas.partial("habari"), None, "one word may still change");
        assert_eq!(deltas.partial("habari ya"), Some("habari".into()));
        assert_eq!(deltas.partial("habari ya asu"), Some(" ya".into()));
        assert_eq!(deltas.partial("habari ya asubuhi"), None);
        assert_eq!(
            deltas.finish("habari ya asubuhi rafiki"),
            Some(" asubuhi rafiki".into())
        );
        assert_eq!(deltas.finish("habari ya asubuhi rafiki"), None);
        // A final transcript that departs from what was sent adds nothing: `completed` carries it.
        let mut deltas = Deltas::default();
        deltas.partial("salio lako ni");
        assert_eq!(deltas.finish("salama lako ni"), None);
        let mut whole = Deltas::default();
        assert_eq!(
            whole.finish("  nataka  salio "),
            Some("nataka salio".into())
        );
    }
}
