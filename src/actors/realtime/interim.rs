//! Recognition while the caller speaks, where the language is recognised by a CTC model (cheap enough to run on
//! pieces of a turn): each second of the turn is recognised with a second before it and a quarter after it as
//! context, and its words are settled: those that start within it and end before the last tenth of a second of
//! what was read (a word running into the end of the audio may be cut short, so it waits for the next piece,
//! which starts in the gap before it). What was settled goes to the client as a tentative transcript, and at the end of
//! the turn only the rest is recognised (with the same second of context before it): the turn's transcript is
//! the settled words and the rest's. A piece reads more than it settles (its context again), so pieces run only
//! while a recognition worker is free: on busy recognisers the turns themselves go first.

use std::sync::Arc;
use std::time::Duration;

use super::actor::{State, ToSession};
use crate::actors::asr::{AsrHandle, RecognitionError};
use crate::actors::work::OwnedTask;
use crate::asr::Word;

const RATE: usize = crate::audio::SAMPLE_RATE as usize;
/// Audio before a piece that is read with it.
const CONTEXT: usize = RATE;
/// Audio after a piece that is read with it, so a word starting at its end is heard whole.
const AHEAD: usize = RATE / 4;
/// A word ending this close to the end of what was read may be cut short: it is left for the next piece.
const GUARD: f64 = 0.1;
/// How far before a piece's start a word may be placed and still be its own: the same word read with other
/// context may be placed a frame or two earlier.
const SLACK: f64 = 0.06;

/// What interim recognition has settled of a turn: its first `done` samples, heard as `heard`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settled {
    /// Samples of the turn settled.
    pub done: usize,
    /// The words heard in them.
    pub heard: String,
}

/// Interim recognition of the turn under way.
#[derive(Default)]
pub struct Interim {
    /// Which stretch of speech (a count of speech starts): answers for an earlier one are dropped.
    speech: u64,
    /// What has been settled.
    settled: Settled,
    /// The next piece reads two pieces' length: a word longer than a piece left nothing settled.
    longer: bool,
    /// A piece could not be recognised: no more for this turn.
    failed: bool,
    /// The piece being recognised.
    running: Option<OwnedTask>,
}

/// The words of a piece read from `from` seconds (the context before it left out) whose own second ends at
/// `until` and whose audio ends at `end`: how many seconds past `from` are settled, and the words heard in them.
/// Nothing is settled when the first word runs into the end of the audio: the next piece must read longer. A
/// piece that already reads longer (`last`) settles every word that starts within it, as read.
pub fn settle(words: &[Word], from: f64, until: f64, end: f64, last: bool) -> (f64, Vec<String>) {
    let mut heard = Vec::new();
    let mut reached = None;
    for word in words
        .iter()
        .filter(|w| w.start >= from - SLACK && w.start < until)
    {
        // A word that may be cut short waits for the next piece, which starts halfway between it and the word
        // before (or, when it is the first, reads longer).
        if word.end > end - GUARD && !last {
            let before = reached.unwrap_or(from).min(word.start);
            return (((before + word.start) / 2.0 - from).max(0.0), heard);
        }
        heard.push(word.word.clone());
        reached = Some(word.end);
    }
    let settled = match reached {
        Some(reached) if last => reached.max(until),
        Some(reached) => reached,
        None => until,
    };
    (settled - from, heard)
}

/// The words of `transcript`, read from `from` seconds, that are the rest of a turn.
fn rest(transcript: &crate::asr::Transcript, from: f64) -> impl Iterator<Item = &str> {
    transcript
        .words
        .iter()
        .filter(move |w| w.start >= from - SLACK)
        .map(|w| w.word.as_str())
}

/// Recognise a turn's `audio`, only past what interim recognition `settled` of it (with a second of context
/// before): the settled words and the rest's, and how long the recognition waited for a worker.
pub async fn hear_rest(
    asr: &AsrHandle,
    owner: &str,
    audio: Arc<Vec<f32>>,
    settled: Option<Settled>,
) -> Result<(String, Duration), RecognitionError> {
    let language = crate::asr::DEFAULT_LANGUAGE;
    let Some(settled) = settled.filter(|s| s.done > 0) else {
        let (transcript, queued) = asr.transcribe_queued(owner, audio, language).await?;
        return Ok((transcript.text.trim().to_string(), queued));
    };
    if settled.done >= audio.len() {
        return Ok((settled.heard, Duration::ZERO));
    }
    let start = settled.done.saturating_sub(CONTEXT);
    let from = (settled.done - start) as f64 / RATE as f64;
    let piece = Arc::new(audio[start..].to_vec());
    let (transcript, queued) = asr.transcribe_queued(owner, piece, language).await?;
    let words: Vec<&str> = std::iter::once(settled.heard.as_str())
        .chain(rest(&transcript, from))
        .filter(|w| !w.is_empty())
        .collect();
    Ok((words.join(" "), queued))
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

    /// What interim recognition has settled of the turn under way, for a recognition of the rest; a piece being
    /// recognised is dropped (that recognition reads its audio), so every tentative transcript sent is a prefix
    /// of the turn's.
    pub(super) fn interim_settled(&mut self) -> Settled {
        self.interim.running = None;
        self.interim.settled.clone()
    }

    /// Recognise the next piece of the turn under way, if it is long enough, none is being recognised, the turn
    /// as it stands is not already being recognised (the caller has fallen quiet) and a recognition worker is
    /// free.
    pub(super) fn interim_next(&mut self) {
        let piece = self.args.options.interim;
        let interim = &self.interim;
        if piece == 0 || interim.running.is_some() || interim.failed || self.early.is_some() {
            return;
        }
        // Only with a recognition worker to spare: a piece costs more than the audio it settles (its context is
        // read again), so on busy recognisers the turns' own recognitions go first, and a turn whose pieces
        // were skipped is recognised whole at its end.
        if !self.args.services.asr.has_spare(&self.args.options.owner) {
            return;
        }
        // Read longer once when a word ran past a piece; no word is longer than two.
        let last = self.interim.longer;
        let piece = if last { 2 * piece } else { piece };
        let Some(turn) = self.vad.turn_so_far() else {
            return;
        };
        let done = self.interim.settled.done;
        if turn.len() < done + piece + AHEAD {
            return;
        }
        let start = done.saturating_sub(CONTEXT);
        let audio = Arc::new(turn[start..done + piece + AHEAD].to_vec());
        // In seconds from the start of what is recognised: the piece's own second, and the audio's end.
        let from = (done - start) as f64 / RATE as f64;
        let until = from + piece as f64 / RATE as f64;
        let end = audio.len() as f64 / RATE as f64;
        let (services, owner) = (self.args.services.clone(), self.args.options.owner.clone());
        let (myself, speech) = (self.myself.clone(), self.interim.speech);
        self.interim.running = Some(OwnedTask::spawn("realtime", async move {
            let heard = services
                .asr
                .transcribe(&owner, audio, crate::asr::DEFAULT_LANGUAGE)
                .await
                .map(|transcript| settle(&transcript.words, from, until, end, last));
            let (settled, heard) = match heard {
                Ok((seconds, heard)) => (Some((seconds * RATE as f64).round() as usize), heard),
                Err(_) => (None, Vec::new()),
            };
            let _ = myself.send_message(ToSession::Interim {
                speech,
                settled,
                heard: heard.join(" "),
            });
        }));
    }

    /// A piece was recognised: tell the client what has been heard so far, and go on. A piece that could not
    /// be recognised (the recognisers busy) ends interim recognition of this turn: its end recognises the rest.
    pub(super) fn interim_heard(&mut self, speech: u64, settled: Option<usize>, heard: String) {
        if speech != self.interim.speech || self.interim.running.take().is_none() {
            return;
        }
        let Some(settled) = settled else {
            self.interim.failed = true;
            return;
        };
        self.interim.longer = settled == 0 && !self.interim.longer;
        let so_far = &mut self.interim.settled;
        so_far.done += settled;
        if !heard.is_empty() {
            if !so_far.heard.is_empty() {
                so_far.heard.push(' ');
            }
            so_far.heard.push_str(&heard);
            let shown = self.args.services.dialogue.shareable(&so_far.heard);
            self.send(super::Outbound::Tentative(shown));
        }
        self.interim_next();
    }

    /// The turn ended: no more interim transcripts for it. What they settled of it.
    pub(super) fn interim_stop(&mut self) -> Settled {
        self.interim.running = None;
        self.interim.speech += 1;
        std::mem::take(&mut self.interim.settled)
    }
}

#[cfg(test)]
mod tests;
