//! Streamed synthesis: the pieces (sentences) of a text are handed on in order as each is ready, so a caller
//! can send the first sentence's audio while the rest is still being made. When workers are idle they take
//! later pieces in parallel; a piece finished early waits for those before it. Words are timed from the start
//! of the whole. A piece whose audio is empty (punctuation alone) is passed over; a text with nothing to say is
//! refused before anything is sent.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use super::spread::Failure;
use super::SynthesisError;
use crate::actors::fair::WorkerPool;
use crate::cancel::Cancel;
use crate::tts::lexicon::Lexicon;
use crate::tts::{SpokenWord, Synthesizer, TtsError, VoiceSettings};

/// One piece of a streamed synthesis.
#[derive(Debug, Clone)]
pub struct Piece {
    /// 16 kHz mono samples (never empty).
    pub samples: Vec<f32>,
    /// When each word in it was spoken, in seconds from the start of the whole (timed streams only).
    pub words: Vec<SpokenWord>,
    /// The written text the piece was made from; empty when this is more audio of the piece before (a voice
    /// that hands on a sentence in parts).
    pub text: String,
}

/// Where the pieces go, in order; a failure after the first piece ends the stream with the error.
pub type PieceSender = UnboundedSender<Result<Piece, SynthesisError>>;

type Made = Result<(Vec<f32>, Option<Vec<SpokenWord>>), Failure>;

struct Progress {
    made: Vec<Option<Made>>,
    /// Pieces handed on (or passed over) so far.
    sent: usize,
    /// Samples handed on so far.
    samples: usize,
    failure: Option<Failure>,
}

struct Ordered {
    synthesizer: Arc<dyn Synthesizer>,
    settings: VoiceSettings,
    lexicon: Option<Arc<Lexicon>>,
    cancel: Cancel,
    timed: bool,
    pieces: Vec<String>,
    next: AtomicUsize,
    stopped: AtomicBool,
    progress: Mutex<Progress>,
    changed: Condvar,
    out: PieceSender,
    started: Instant,
}

impl Ordered {
    /// Claim pieces in text order and make them until none is left or the stream has stopped.
    fn work(&self) {
        while !self.stopped.load(Ordering::Acquire) {
            let index = self.next.fetch_add(1, Ordering::AcqRel);
            let Some(text) = self.pieces.get(index) else {
                return;
            };
            let made = self.make(text, index);
            let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
            progress.made[index] = Some(made);
            self.hand_on(&mut progress);
            self.changed.notify_all();
        }
    }

    fn make(&self, text: &str, index: usize) -> Made {
        if self.cancel.is_cancelled() {
            return Err(Failure::Cancelled);
        }
        let lexicon = self.lexicon.as_deref();
        if index == 0 {
            return self.make_first(text, lexicon);
        }
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.timed {
            true => self
                .synthesizer
                .synthesize_piece_timed(text, index, &self.settings, lexicon)
                .map(|timed| timed.map(|(samples, words)| (samples, Some(words)))),
            false => self
                .synthesizer
                .synthesize_piece(text, index, &self.settings, lexicon)
                .map(|samples| Some((samples, None))),
        }))
        .map_err(|_| Failure::Panicked)?
        .map_err(Failure::Invalid)?
        .ok_or(Failure::Untimed)
    }

    /// The first piece, handed on part by part as the voice makes it (a split neural voice decodes it window
    /// by window), so the first audio goes out before the first sentence is done. Nothing is left to hand on
    /// once it is made.
    fn make_first(&self, text: &str, lexicon: Option<&Lexicon>) -> Made {
        let mut hand = |samples: Vec<f32>, words: Vec<SpokenWord>| {
            let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
            // The piece's text goes with its first audio; the parts after it are more of the same piece.
            let text = match progress.samples {
                0 => self.pieces[0].clone(),
                _ => String::new(),
            };
            self.send(&mut progress, samples, words, text) && !self.cancel.is_cancelled()
        };
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.synthesizer.synthesize_piece_parts(
                text,
                0,
                &self.settings,
                lexicon,
                self.timed,
                &mut hand,
            )
        }))
        .map_err(|_| Failure::Panicked)?
        .map_err(Failure::Invalid)?;
        match made {
            true => Ok((Vec::new(), None)),
            false => Err(Failure::Untimed),
        }
    }

    /// Hand on every made piece that follows those already handed on.
    fn hand_on(&self, progress: &mut Progress) {
        while progress.failure.is_none() {
            let Some(made) = progress.made.get_mut(progress.sent).and_then(Option::take) else {
                return;
            };
            let text = self.pieces[progress.sent].clone();
            progress.sent += 1;
            let (samples, words) = match made {
                Ok(made) => made,
                Err(failure) => {
                    self.stop(progress, failure);
                    return;
                }
            };
            self.send(progress, samples, words.unwrap_or_default(), text);
        }
    }

    /// Hand on one piece (or part of one: empty text) whose words are timed from its own start; false when
    /// nobody listens any more. Empty audio is passed over.
    fn send(
        &self,
        progress: &mut Progress,
        samples: Vec<f32>,
        words: Vec<SpokenWord>,
        text: String,
    ) -> bool {
        if samples.is_empty() {
            return true;
        }
        let offset = progress.samples as f64 / f64::from(crate::audio::SAMPLE_RATE);
        let words = words
            .into_iter()
            .map(|w| SpokenWord {
                start: w.start + offset,
                end: w.end + offset,
                ..w
            })
            .collect();
        if progress.samples == 0 {
            metrics::histogram!(crate::telemetry::metrics::TTS_FIRST_AUDIO, "engine" => self.synthesizer.engine())
                .record(self.started.elapsed().as_secs_f64());
        }
        progress.samples += samples.len();
        let piece = Piece {
            samples,
            words,
            text,
        };
        if self.out.send(Ok(piece)).is_err() {
            self.stop(progress, Failure::Cancelled);
            return false;
        }
        true
    }

    fn stop(&self, progress: &mut Progress, failure: Failure) {
        progress.failure.get_or_insert(failure);
        self.stopped.store(true, Ordering::Release);
    }
}

/// Synthesise `text` into `out` piece by piece, in order, spreading pieces over the idle workers of `pool`;
/// stops at the next piece once `cancel` is set or `out` is closed. The number of samples handed on.
#[allow(clippy::too_many_arguments)]
pub fn stream(
    pool: &WorkerPool,
    owner: &str,
    synthesizer: &Arc<dyn Synthesizer>,
    text: &str,
    settings: &VoiceSettings,
    lexicon: Option<&Arc<Lexicon>>,
    cancel: &Cancel,
    timed: bool,
    out: &PieceSender,
) -> Result<usize, Failure> {
    let pieces = first_clause_apart(
        synthesizer
            .pieces(text, settings)
            .map_err(Failure::Invalid)?,
    );
    let count = pieces.len();
    let helpers = pool.idle_for(owner).min(count.saturating_sub(1));
    let ordered = Arc::new(Ordered {
        synthesizer: Arc::clone(synthesizer),
        settings: *settings,
        lexicon: lexicon.cloned(),
        cancel: cancel.clone(),
        timed,
        pieces,
        next: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        progress: Mutex::new(Progress {
            made: vec![None; count],
            sent: 0,
            samples: 0,
            failure: None,
        }),
        changed: Condvar::new(),
        out: out.clone(),
        started: Instant::now(),
    });
    for _ in 0..helpers {
        let ordered = Arc::clone(&ordered);
        pool.run(owner, move || ordered.work());
    }
    ordered.work();
    let mut progress = ordered.progress.lock().unwrap_or_else(|p| p.into_inner());
    // Helpers still making a piece finish it (or see the stop) and hand on what follows.
    while progress.sent < count && progress.failure.is_none() {
        progress = ordered
            .changed
            .wait(progress)
            .unwrap_or_else(|p| p.into_inner());
    }
    match (progress.failure.take(), progress.samples) {
        (Some(failure), _) => Err(failure),
        (None, 0) => Err(Failure::Invalid(TtsError::NothingToSay)),
        (None, samples) => Ok(samples),
    }
}

/// A first sentence longer than this is sent clause by clause (its first clause alone, then the rest), so the
/// first audio waits only for the first clause.
const FIRST_PIECE_CHARS: usize = 60;
/// The shortest first clause worth sending alone.
const FIRST_CLAUSE_CHARS: usize = 12;

/// The pieces, with a long first sentence cut after its first clause.
fn first_clause_apart(mut pieces: Vec<String>) -> Vec<String> {
    let Some(first) = pieces.first() else {
        return pieces;
    };
    if first.chars().count() <= FIRST_PIECE_CHARS {
        return pieces;
    }
    let cut = first
        .char_indices()
        .filter(|&(at, c)| {
            matches!(c, ',' | ';' | ':') && first[..at].chars().count() >= FIRST_CLAUSE_CHARS
        })
        .map(|(at, c)| at + c.len_utf8())
        .find(|&end| !first[end..].trim().is_empty());
    if let Some(end) = cut {
        let rest = first[end..].trim().to_string();
        let head = first[..end].trim().to_string();
        pieces.splice(0..1, [head, rest]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::EmbeddedVoice;

    fn collect(pool: &WorkerPool, text: &str, timed: bool) -> (Result<usize, Failure>, Vec<Piece>) {
        let voice: Arc<dyn Synthesizer> = Arc::new(EmbeddedVoice::zuri());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let settings = VoiceSettings::default();
        let outcome = stream(
            pool,
            "key",
            &voice,
            text,
            &settings,
            None,
            &Cancel::new(),
            timed,
            &tx,
        );
        let mut pieces = Vec::new();
        while let Ok(piece) = rx.try_recv() {
            pieces.push(piece.expect("a piece"));
        }
        (outcome, pieces)
    }

    #[test]
    fn pieces_come_in_order_and_join_into_the_whole() {
        let text = "Habari ya asubuhi. Salio lako ni shilingi 12,500! ... Je, unataka kutuma pesa? Asante sana.";
        let voice = EmbeddedVoice::zuri();
        let whole = voice.synthesize(text, &VoiceSettings::default()).unwrap();
        for workers in [1, 4] {
            let pool = WorkerPool::new("stream-test", workers, 0).expect("threads");
            std::thread::sleep(std::time::Duration::from_millis(50));
            let (outcome, pieces) = collect(&pool, text, false);
            assert_eq!(outcome.ok(), Some(whole.len()));
            assert_eq!(pieces.len(), 4, "the bare `...` is passed over");
            assert_eq!(pieces[0].text, "Habari ya asubuhi.");
            let joined: Vec<f32> = pieces.iter().flat_map(|p| p.samples.clone()).collect();
            assert_eq!(joined, whole, "{workers} workers");
        }
    }

    #[test]
    fn a_long_first_sentence_goes_clause_by_clause() {
        let cut =
            |pieces: &[&str]| first_clause_apart(pieces.iter().map(|p| p.to_string()).collect());
        assert_eq!(
            cut(&[
                "Habari ya asubuhi, karibu kwenye huduma ya benki yetu ya kisasa leo.",
                "Asante."
            ]),
            [
                "Habari ya asubuhi,",
                "karibu kwenye huduma ya benki yetu ya kisasa leo.",
                "Asante."
            ]
        );
        // Short first sentences, and first clauses too short to stand alone, are left whole.
        assert_eq!(cut(&["Habari, karibu."]), ["Habari, karibu."]);
        assert_eq!(
            cut(&["Ndiyo, karibu kwenye huduma ya benki yetu ya kisasa leo asubuhi sana."]),
            ["Ndiyo, karibu kwenye huduma ya benki yetu ya kisasa leo asubuhi sana."]
        );
        assert!(cut(&[]).is_empty());
    }

    #[test]
    fn timed_pieces_count_from_the_start_of_the_whole() {
        let pool = WorkerPool::new("stream-timed", 2, 0).expect("threads");
        let (outcome, pieces) = collect(&pool, "Habari yako. Karibu benki.", true);
        let total = outcome.expect("audio") as f64 / 16_000.0;
        let words: Vec<&SpokenWord> = pieces.iter().flat_map(|p| &p.words).collect();
        assert_eq!(
            words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(),
            ["habari", "yako", "karibu", "benki"]
        );
        let first_piece = pieces[0].samples.len() as f64 / 16_000.0;
        assert!(words[2].start >= first_piece - 1e-9, "{words:?}");
        assert!(words.windows(2).all(|w| w[0].end <= w[1].start + 1e-9));
        assert!(words[3].end <= total + 1e-9);
    }

    #[test]
    fn nothing_to_say_is_refused_before_anything_is_sent() {
        let pool = WorkerPool::new("stream-empty", 2, 0).expect("threads");
        let (outcome, pieces) = collect(&pool, "?! ... !", false);
        assert!(matches!(
            outcome,
            Err(Failure::Invalid(TtsError::NothingToSay))
        ));
        assert!(pieces.is_empty());
    }

    #[test]
    fn a_closed_receiver_stops_the_work() {
        let pool = WorkerPool::new("stream-closed", 1, 0).expect("threads");
        let voice: Arc<dyn Synthesizer> = Arc::new(EmbeddedVoice::zuri());
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        drop(rx);
        let text = "Habari. ".repeat(50);
        let settings = VoiceSettings::default();
        let outcome = stream(
            &pool,
            "key",
            &voice,
            &text,
            &settings,
            None,
            &Cancel::new(),
            false,
            &tx,
        );
        assert!(matches!(outcome, Err(Failure::Cancelled)));
    }
}
