//! A split voice's sentence made part by part ([`split`](super::split)): the prior once, then the decoder window
//! by window, each window's samples handed on as soon as they exist, with the words timed from the model's own
//! token durations.

use super::split::{windows, Latent};
use super::{Engine, Front, VitsVoice, SENTENCE_PAUSE_SECONDS};
use crate::audio::resample::to_16k;
use crate::audio::SAMPLE_RATE;
use crate::tts::lexicon::Lexicon;
use crate::tts::{SpokenWord, Synthesizer, TtsError, VoiceSettings};

/// Frames in the first window: about a third of a second of speech, decoded in well under that.
const FIRST_WINDOW: usize = 20;

/// Where each handed-on part goes; `false` back means nobody listens any more.
pub type PartSink<'a> = &'a mut dyn FnMut(Vec<f32>, Vec<SpokenWord>) -> bool;

impl VitsVoice {
    /// Sentence `index` of a text in parts at 16 kHz (after the pause that comes before every sentence but the
    /// first). The words, when `timed`, come with the first part. `Ok(false)`: timed words were asked of a voice
    /// without split graphs or one that reads phonemes, which cannot place them (nothing was handed on).
    pub(super) fn sentence_parts(
        &self,
        sentence: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
        timed: bool,
        part: PartSink<'_>,
    ) -> Result<bool, TtsError> {
        let split = match &self.engine {
            Engine::Split(split) => split,
            Engine::Whole { .. } if timed => return Ok(false),
            Engine::Whole { .. } => {
                part(
                    self.synthesize_piece(sentence, index, settings, lexicon)?,
                    Vec::new(),
                );
                return Ok(true);
            }
        };
        let lexicon = lexicon.unwrap_or(&self.lexicon);
        let (ids, words) = match &self.front {
            Front::Characters(vocab) => {
                let normalized = lexicon.normalize(sentence);
                let (ids, words) = vocab.encode_words(&lexicon.spell_phoneme_words(&normalized));
                let readable = ids.iter().any(|&id| id != 0);
                (if readable { ids } else { Vec::new() }, Some(words))
            }
            Front::Phonemes(_) => {
                let ids = self.token_ids_with(sentence, lexicon);
                (if ids.len() > 3 { ids } else { Vec::new() }, None)
            }
        };
        if timed && words.is_none() {
            return Ok(false);
        }
        if ids.is_empty() {
            return Ok(true);
        }
        let latent = split
            .latent(&ids, self.scales(settings))
            .map_err(TtsError::Engine)?;
        let lead = match index {
            0 => 0,
            _ => (SENTENCE_PAUSE_SECONDS * SAMPLE_RATE as f32) as usize,
        };
        let lead_seconds = lead as f64 / f64::from(SAMPLE_RATE);
        let timing = |hop: usize| -> Vec<SpokenWord> {
            match (&words, timed) {
                (Some(words), true) => spoken(words, &latent, hop, self.sample_rate, lead_seconds),
                _ => Vec::new(),
            }
        };
        let mut pause = vec![0.0; lead];
        if self.sample_rate != SAMPLE_RATE {
            // Resampled whole: windows resampled apart would not join seamlessly.
            let samples = split
                .decode(&latent, 0..latent.frames())
                .map_err(TtsError::Engine)?;
            let hop = samples.len() / latent.frames().max(1);
            pause.extend(to_16k(&samples, self.sample_rate));
            part(pause, timing(hop));
            return Ok(true);
        }
        // Only the first part carries the pause and the words.
        let mut first = true;
        for window in windows(latent.frames(), FIRST_WINDOW) {
            let frames = window.len();
            let samples = split.decode(&latent, window).map_err(TtsError::Engine)?;
            let (mut out, words) = match std::mem::replace(&mut first, false) {
                true => (std::mem::take(&mut pause), timing(samples.len() / frames)),
                false => (Vec::new(), Vec::new()),
            };
            out.extend(samples);
            if !part(out, words) {
                break;
            }
        }
        Ok(true)
    }
}

/// When each word is spoken: its tokens' frames at `hop` samples a frame, after `lead` seconds.
fn spoken(
    words: &[(String, std::ops::Range<usize>)],
    latent: &Latent,
    hop: usize,
    rate: u32,
    lead: f64,
) -> Vec<SpokenWord> {
    let seconds_per_frame = hop as f64 / f64::from(rate);
    let mut before = Vec::with_capacity(latent.durations.len() + 1);
    before.push(0usize);
    for &frames in &latent.durations {
        before.push(before.last().copied().unwrap_or(0) + frames);
    }
    let at = |token: usize| lead + before[token.min(before.len() - 1)] as f64 * seconds_per_frame;
    words
        .iter()
        .map(|(text, tokens)| SpokenWord {
            text: text.clone(),
            start: at(tokens.start),
            end: at(tokens.end),
        })
        .collect()
}
