//! Interim transcripts while the caller speaks, where the language is recognised by a CTC model (cheap enough to
//! run on pieces of a turn): every second of the turn is recognised with a second before it and a quarter after
//! it as context, and its words (those starting within that second) are added to what was heard so far, which
//! goes to the client as a tentative transcript. The final transcript is the whole turn's and may correct them.

use std::sync::Arc;

use super::actor::{State, ToSession};
use crate::actors::work::OwnedTask;

const RATE: usize = crate::audio::SAMPLE_RATE as usize;
/// Audio before a piece that is read with it.
const CONTEXT: usize = RATE;
/// Audio after a piece that is read with it, so a word starting at its end is heard whole.
const AHEAD: usize = RATE / 4;

/// Interim recognition of the turn under way.
#[derive(Default)]
pub struct Interim {
    /// Which stretch of speech (a count of speech starts): answers for an earlier one are dropped.
    speech: u64,
    /// Samples of the turn recognised so far.
    done: usize,
    /// What was heard in them.
    heard: String,
    /// The piece being recognised.
    running: Option<OwnedTask>,
}

impl State {
    /// The caller started speaking: interim transcripts start afresh.
    pub(super) fn interim_restart(&mut self) {
        let speech = self.interim.speech + 1;
        self.interim = Interim {
            speech,
            ..Interim::default()
        };
    }

    /// Recognise the next piece of the turn under way, if it is long enough and none is being recognised.
    pub(super) fn interim_next(&mut self) {
        let piece = self.args.options.interim;
        if piece == 0 || self.interim.running.is_some() {
            return;
        }
        let Some(turn) = self.vad.turn_so_far() else {
            return;
        };
        let done = self.interim.done;
        if turn.len() < done + piece + AHEAD {
            return;
        }
        let start = done.saturating_sub(CONTEXT);
        let audio = Arc::new(turn[start..done + piece + AHEAD].to_vec());
        // The words of this piece: those that start in it, in seconds from the start of what is recognised.
        let from = (done - start) as f64 / RATE as f64;
        let until = from + piece as f64 / RATE as f64;
        let (services, owner) = (self.args.services.clone(), self.args.options.owner.clone());
        let (myself, speech) = (self.myself.clone(), self.interim.speech);
        self.interim.running = Some(OwnedTask::spawn("realtime", async move {
            let heard = services
                .asr
                .transcribe(&owner, audio, crate::asr::DEFAULT_LANGUAGE)
                .await
                .map(|transcript| {
                    let words: Vec<&str> = transcript
                        .words
                        .iter()
                        .filter(|w| w.start >= from && w.start < until)
                        .map(|w| w.word.as_str())
                        .collect();
                    words.join(" ")
                })
                .unwrap_or_default();
            let _ = myself.send_message(ToSession::Interim {
                speech,
                piece,
                heard,
            });
        }));
    }

    /// A piece was recognised: tell the client what has been heard so far, and go on.
    pub(super) fn interim_heard(&mut self, speech: u64, piece: usize, heard: String) {
        if speech != self.interim.speech || self.interim.running.take().is_none() {
            return;
        }
        self.interim.done += piece;
        if !heard.is_empty() {
            if !self.interim.heard.is_empty() {
                self.interim.heard.push(' ');
            }
            self.interim.heard.push_str(&heard);
            let shown = self.args.services.dialogue.shareable(&self.interim.heard);
            self.send(super::Outbound::Tentative(shown));
        }
        self.interim_next();
    }

    /// The turn ended: no more interim transcripts for it.
    pub(super) fn interim_stop(&mut self) {
        self.interim.running = None;
        self.interim.speech += 1;
    }
}
