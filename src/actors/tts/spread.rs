//! One request over several workers: when workers are idle, the sentences of a text are synthesised in
//! parallel and joined in order — the same samples as synthesising the text in one piece, sooner. A worker
//! that waits for helpers also takes unclaimed sentences itself, so the pool can never deadlock on its own tasks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::pool::WorkerPool;
use crate::tts::{Synthesizer, TtsError, VoiceSettings};

type Piece = Option<Result<Vec<f32>, Failure>>;

/// Why a piece gave no audio.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The synthesizer refused the input.
    Invalid(TtsError),
    /// The synthesizer panicked.
    Panicked,
}

struct Shared {
    synthesizer: Arc<dyn Synthesizer>,
    settings: VoiceSettings,
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
            let piece = &self.pieces[index];
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.synthesizer
                    .synthesize_piece(piece, index, &self.settings)
            }));
            let result = match outcome {
                Ok(Ok(samples)) => Ok(samples),
                Ok(Err(invalid)) => Err(Failure::Invalid(invalid)),
                Err(_) => Err(Failure::Panicked),
            };
            let mut results = self.results.lock().unwrap_or_else(|p| p.into_inner());
            results[index] = Some(result);
            self.filled.notify_all();
        }
    }
}

/// Synthesise `text`, spreading its sentences over the idle workers of `pool` when there are any.
pub fn synthesize(
    pool: &WorkerPool,
    synthesizer: &Arc<dyn Synthesizer>,
    text: &str,
    settings: &VoiceSettings,
) -> Result<Vec<f32>, Failure> {
    let pieces = synthesizer
        .pieces(text, settings)
        .map_err(Failure::Invalid)?;
    let helpers = pool.idle().min(pieces.len().saturating_sub(1));
    if helpers == 0 {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            synthesizer.synthesize(text, settings)
        }))
        .map_err(|_| Failure::Panicked)?
        .map_err(Failure::Invalid);
    }
    let count = pieces.len();
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(pieces[i].len()));
    let shared = Arc::new(Shared {
        synthesizer: Arc::clone(synthesizer),
        settings: *settings,
        pieces,
        order,
        next: AtomicUsize::new(0),
        results: Mutex::new(vec![None; count]),
        filled: Condvar::new(),
    });
    for _ in 0..helpers {
        let shared = Arc::clone(&shared);
        pool.run(move || shared.work());
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
        let pool = WorkerPool::new("spread-test", 3).expect("threads");
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(pool.idle(), 3);
        let voice: Arc<dyn Synthesizer> = Arc::new(EmbeddedVoice::zuri());
        let text =
            "Habari ya asubuhi. Salio lako ni shilingi 12,500! Je, unataka kutuma pesa? Asante.";
        let settings = VoiceSettings::default();
        let spread = synthesize(&pool, &voice, text, &settings).expect("audio");
        assert_eq!(spread, voice.synthesize(text, &settings).expect("audio"));
        assert!(matches!(
            synthesize(&pool, &voice, "?!", &settings),
            Err(Failure::Invalid(TtsError::NothingToSay))
        ));
        assert!(matches!(
            synthesize(&pool, &voice, "  ", &settings),
            Err(Failure::Invalid(TtsError::EmptyText))
        ));
    }
}
