//! One request over several workers: when workers are idle, the sentences of a text are synthesised in
//! parallel and joined in order — the same samples as synthesising the text in one piece, sooner. A worker
//! that waits for helpers also takes unclaimed sentences itself, so the pool can never deadlock on its own tasks.
//! Pieces are bounded ([`crate::tts::normalize::PIECE_CHARS`]), and the caller's [`Cancel`] is checked before
//! each one: a request whose client has gone stops within one piece.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::actors::fair::WorkerPool;
use crate::cancel::Cancel;
use crate::tts::lexicon::Lexicon;
use crate::tts::{SpokenWord, Synthesizer, Timed, TtsError, VoiceSettings};

type Piece = Option<Result<Vec<f32>, Failure>>;

/// Why a piece gave no audio.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The synthesizer refused the input.
    Invalid(TtsError),
    /// The synthesizer panicked.
    Panicked,
    /// The caller went away or its deadline passed.
    Cancelled,
    /// Word times were asked of a voice that cannot tell them.
    Untimed,
}

struct Shared {
    synthesizer: Arc<dyn Synthesizer>,
    settings: VoiceSettings,
    lexicon: Option<Arc<Lexicon>>,
    cancel: Cancel,
    pieces: Vec<String>,
    /// Indices of `pieces`, longest first: the last piece claimed is a short one, so the workers finish close
    /// together (a long last sentence claimed in text order would leave one worker finishing it alone).
    order: Vec<usize>,
    next: AtomicUsize,
    results: Mutex<Vec<Piece>>,
    filled: Condvar,
}

impl Shared {
    /// Claim and synthesise pieces until none is left unclaimed.
    fn work(&self) {
        loop {
            let claimed = self.next.fetch_add(1, Ordering::AcqRel);
            let Some(&index) = self.order.get(claimed) else {
                return;
            };
            let result = piece(
                &*self.synthesizer,
                &self.pieces[index],
                index,
                &self.settings,
                self.lexicon.as_deref(),
                &self.cancel,
            );
            let mut results = self.results.lock().unwrap_or_else(|p| p.into_inner());
            results[index] = Some(result);
            self.filled.notify_all();
        }
    }
}

/// One piece, unless the caller has gone; a panic in the synthesizer is this piece's failure alone.
fn piece(
    synthesizer: &dyn Synthesizer,
    text: &str,
    index: usize,
    settings: &VoiceSettings,
    lexicon: Option<&Lexicon>,
    cancel: &Cancel,
) -> Result<Vec<f32>, Failure> {
    if cancel.is_cancelled() {
        return Err(Failure::Cancelled);
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        synthesizer.synthesize_piece(text, index, settings, lexicon)
    }))
    .map_err(|_| Failure::Panicked)?
    .map_err(Failure::Invalid)
}

/// Synthesise `text` (read with `lexicon` when given, else the voice's own), spreading its pieces over the idle
/// workers of `pool` when there are any, and stopping at the next piece once `cancel` is set.
pub fn synthesize(
    pool: &WorkerPool,
    owner: &str,
    synthesizer: &Arc<dyn Synthesizer>,
    text: &str,
    settings: &VoiceSettings,
    lexicon: Option<&Arc<Lexicon>>,
    cancel: &Cancel,
) -> Result<Vec<f32>, Failure> {
    let pieces = synthesizer
        .pieces(text, settings)
        .map_err(Failure::Invalid)?;
    let helpers = pool.idle_for(owner).min(pieces.len().saturating_sub(1));
    if helpers == 0 {
        let mut samples = Vec::new();
        for (index, text) in pieces.iter().enumerate() {
            samples.extend(piece(
                &**synthesizer,
                text,
                index,
                settings,
                lexicon.map(|l| &**l),
                cancel,
            )?);
        }
        return spoken(samples);
    }
    let count = pieces.len();
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(pieces[i].len()));
    let shared = Arc::new(Shared {
        synthesizer: Arc::clone(synthesizer),
        settings: *settings,
        lexicon: lexicon.cloned(),
        cancel: cancel.clone(),
        pieces,
        order,
        next: AtomicUsize::new(0),
        results: Mutex::new(vec![None; count]),
        filled: Condvar::new(),
    });
    for _ in 0..helpers {
        let shared = Arc::clone(&shared);
        pool.run(owner, move || shared.work());
    }
    shared.work();
    let mut results = shared.results.lock().unwrap_or_else(|p| p.into_inner());
    while results.iter().any(Option::is_none) {
        results = shared
            .filled
            .wait(results)
            .unwrap_or_else(|p| p.into_inner());
    }
    let mut samples = Vec::new();
    for result in results.iter_mut() {
        samples.extend(result.take().unwrap_or(Err(Failure::Panicked))?);
    }
    spoken(samples)
}

/// Synthesise `text` piece by piece on this worker, with when each word was spoken (seconds from the start of
/// the whole); `Ok(None)` when the voice cannot tell.
pub fn synthesize_timed(
    synthesizer: &Arc<dyn Synthesizer>,
    text: &str,
    settings: &VoiceSettings,
    lexicon: Option<&Arc<Lexicon>>,
    cancel: &Cancel,
) -> Result<Option<Timed>, Failure> {
    let pieces = synthesizer
        .pieces(text, settings)
        .map_err(Failure::Invalid)?;
    let mut samples = Vec::new();
    let mut words = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(Failure::Cancelled);
        }
        let timed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            synthesizer.synthesize_piece_timed(piece, index, settings, lexicon.map(|l| &**l))
        }))
        .map_err(|_| Failure::Panicked)?
        .map_err(Failure::Invalid)?;
        let Some((audio, spoken)) = timed else {
            return Ok(None);
        };
        let offset = samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
        words.extend(spoken.into_iter().map(|w| SpokenWord {
            start: w.start + offset,
            end: w.end + offset,
            ..w
        }));
        samples.extend(audio);
    }
    Ok(Some((spoken(samples)?, words)))
}

/// Audio with nothing in it means the text held nothing the voice could read.
fn spoken(samples: Vec<f32>) -> Result<Vec<f32>, Failure> {
    if samples.is_empty() {
        return Err(Failure::Invalid(TtsError::NothingToSay));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::EmbeddedVoice;

    #[test]
    fn spread_synthesis_equals_one_piece() {
        let pool = WorkerPool::new("spread-test", 3, 3).expect("threads");
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(pool.idle(), 3);
        let voice: Arc<dyn Synthesizer> = Arc::new(EmbeddedVoice::zuri());
        let text =
            "Habari ya asubuhi. Salio lako ni shilingi 12,500! Je, unataka kutuma pesa? Asante.";
        let settings = VoiceSettings::default();
        let go = Cancel::new();
        let spread = synthesize(&pool, "key", &voice, text, &settings, None, &go).expect("audio");
        assert_eq!(spread, voice.synthesize(text, &settings).expect("audio"));
        // A request's lexicon changes what is said.
        let lexicon = Arc::new(
            crate::tts::pronunciation::layered(
                crate::tts::lexicon::Lexicon::embedded(),
                &[crate::tts::pronunciation::Rule::alias(
                    "asubuhi",
                    "jioni njema sana",
                )],
            )
            .expect("valid rules"),
        );
        let read = synthesize(&pool, "key", &voice, text, &settings, Some(&lexicon), &go);
        assert_ne!(read.expect("audio"), spread);
        assert!(matches!(
            synthesize(&pool, "key", &voice, "?!", &settings, None, &go),
            Err(Failure::Invalid(TtsError::NothingToSay))
        ));
        assert!(matches!(
            synthesize(&pool, "key", &voice, "  ", &settings, None, &go),
            Err(Failure::Invalid(TtsError::EmptyText))
        ));
    }

    #[test]
    fn cancelled_work_stops_before_the_next_piece() {
        let voice: Arc<dyn Synthesizer> = Arc::new(EmbeddedVoice::zuri());
        let text = "tisini na tisa ".repeat(400);
        let settings = VoiceSettings::default();
        for workers in [1, 3] {
            let pool = WorkerPool::new("cancel-test", workers, 0).expect("threads");
            std::thread::sleep(std::time::Duration::from_millis(50));
            let stop = Cancel::new();
            stop.cancel();
            assert!(matches!(
                synthesize(&pool, "key", &voice, &text, &settings, None, &stop),
                Err(Failure::Cancelled)
            ));
        }
    }

    #[test]
    fn a_text_without_punctuation_is_synthesised_in_bounded_pieces() {
        let voice = EmbeddedVoice::zuri();
        let text = "99.999.999 ".repeat(200);
        let pieces = voice.pieces(&text, &VoiceSettings::default()).unwrap();
        assert!(pieces.len() > 1);
        assert!(pieces
            .iter()
            .all(|p| p.chars().count() <= crate::tts::normalize::PIECE_CHARS));
    }
}
