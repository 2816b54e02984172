//! CTC beam search with hotwords and an optional n-gram language model, the search pyctcdecode defines: frame by
//! frame every beam is extended by each token whose log probability reaches `token_min_logp` (and the frame's
//! best), beams with the same text merge (their probabilities summed), each is scored by its acoustic score plus
//! the language model's and the hotwords', those more than `beam_prune_logp` behind the best are dropped and the
//! best `beam_width` kept. At the end the last word is scored as the sentence's last.
//!
//! Hotwords (ElevenLabs' `keyterms`, the words of OpenAI's `prompt`) add `weight` for every whole word of the
//! text that is one, and while a word is being spelled, `weight` × its length / the length of the shortest
//! hotword it begins; so a hotword the audio nearly says wins over the spelling the acoustics slightly prefer.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::align::{FrameWord, Vocabulary};
use super::lm::{LanguageModel, State};

/// How wide and how deep the search looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Beams kept after each frame.
    pub beam_width: usize,
    /// Beams further than this behind the best are dropped.
    pub beam_prune_logp: f64,
    /// Tokens less likely than this (log probability) are not tried, except the frame's best.
    pub token_min_logp: f32,
    /// What a hotword is worth.
    pub hotword_weight: f64,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            beam_width: 100,
            beam_prune_logp: -10.0,
            token_min_logp: -5.0,
            hotword_weight: 10.0,
        }
    }
}

/// The unknown token as the search writes it (dropped from the words it returns).
const UNKNOWN: &str = "\u{2047}";
/// The lowest log probability a token is given (as pyctcdecode clips them).
const MIN_LOG_PROBABILITY: f32 = -34.538_776; // ln(1e-15)

/// The words to favour.
#[derive(Debug, Clone, Default)]
pub struct Hotwords {
    /// Single words (phrases are split).
    words: HashSet<String>,
    /// Every beginning of a word (the words themselves included) → the length of the shortest word it begins.
    prefixes: HashMap<String, usize>,
    weight: f64,
}

impl Hotwords {
    /// Hotwords from `phrases` (each may hold several words), worth `weight` each.
    pub fn new<S: AsRef<str>>(phrases: &[S], weight: f64) -> Self {
        let words: HashSet<String> = phrases
            .iter()
            .flat_map(|p| p.as_ref().split_whitespace().map(str::to_string))
            .collect();
        let mut prefixes: HashMap<String, usize> = HashMap::new();
        for word in &words {
            let length = word.chars().count();
            let ends = word.char_indices().skip(1).map(|(i, _)| i);
            for end in ends.chain([word.len()]) {
                let shortest = prefixes.entry(word[..end].to_string()).or_insert(length);
                *shortest = (*shortest).min(length);
            }
        }
        Self {
            words,
            prefixes,
            weight,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn is_hotword(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    /// Whether some hotword begins with `partial`.
    fn begins(&self, partial: &str) -> bool {
        self.prefixes.contains_key(partial)
    }

    /// The bonus for a word being spelled: the weight × how much of the shortest hotword it begins it spells.
    fn partial(&self, partial: &str) -> f64 {
        match self.prefixes.get(partial) {
            Some(&shortest) => self.weight * partial.chars().count() as f64 / shortest as f64,
            None => 0.0,
        }
    }
}

/// What the search needs of the vocabulary: each id's text, the blank and the word delimiter.
#[derive(Debug, Clone)]
struct Labels {
    text: Vec<String>,
    blank: u32,
    delimiter: Option<u32>,
}

impl Labels {
    fn of(vocabulary: &Vocabulary) -> Self {
        let text = vocabulary
            .tokens
            .iter()
            .enumerate()
            .map(|(id, token)| match Some(id as u32) == vocabulary.unknown {
                true => UNKNOWN.to_string(),
                false => token.clone(),
            })
            .collect();
        Self {
            text,
            blank: vocabulary.blank,
            delimiter: vocabulary.delimiter,
        }
    }
}

/// Frames as (first, one past the last); `(-1, -1)` before a word has any.
type Frames = (i64, i64);
const NO_FRAMES: Frames = (-1, -1);

#[derive(Debug, Clone)]
struct Beam {
    /// Finished words, one space between each two.
    text: Rc<str>,
    /// A word finished this frame, not yet joined to `text`.
    next_word: Rc<str>,
    /// The word being spelled.
    partial: Rc<str>,
    /// The last token taken (`None` at the start and once the search ends).
    last: Option<u32>,
    words: Rc<Vec<Frames>>,
    partial_frames: Frames,
    logit: f64,
}

/// A beam with its full score.
struct Scored {
    beam: Beam,
    score: f64,
}

fn joined(text: &str, word: &str) -> Rc<str> {
    match (text.is_empty(), word.is_empty()) {
        (_, true) => Rc::from(text),
        (true, false) => Rc::from(word),
        (false, false) => Rc::from(format!("{text} {word}")),
    }
}

fn log_sum(a: f64, b: f64) -> f64 {
    let (high, low) = if a >= b { (a, b) } else { (b, a) };
    high + (1.0 + (low - high).exp()).ln()
}

/// One row of logits as clipped log probabilities (a log-softmax).
pub fn log_probabilities(row: &[f32]) -> Vec<f32> {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let max = if max.is_finite() { max } else { 0.0 };
    let sum: f32 = row.iter().map(|&x| (x - max).exp()).sum();
    let log_sum = sum.ln();
    row.iter()
        .map(|&x| ((x - max) - log_sum).clamp(MIN_LOG_PROBABILITY, 0.0))
        .collect()
}

/// The search over one utterance's logits.
pub struct Search<'a> {
    labels: Labels,
    hotwords: &'a Hotwords,
    lm: Option<&'a LanguageModel>,
    options: SearchOptions,
    /// Text (and whether it ended the sentence) → its score with the hotwords', without them, and the state after
    /// it.
    text_scores: HashMap<(Rc<str>, bool), (f64, f64, State)>,
    partial_scores: HashMap<Rc<str>, f64>,
}

/// The best transcript and its words' frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The words, each with the frames it spans (the unknown token dropped from them).
    pub words: Vec<FrameWord>,
    /// The acoustic score of the best beam.
    pub logit_score: f64,
    /// Its score with the language model and hotwords.
    pub score: f64,
}

impl<'a> Search<'a> {
    /// A search over `vocabulary` favouring `hotwords`, weighed by `lm` if given.
    pub fn new(
        vocabulary: &Vocabulary,
        hotwords: &'a Hotwords,
        lm: Option<&'a LanguageModel>,
        options: SearchOptions,
    ) -> Self {
        let mut text_scores = HashMap::new();
        if let Some(lm) = lm {
            text_scores.insert((Rc::from(""), false), (0.0, 0.0, lm.start()));
        }
        Self {
            labels: Labels::of(vocabulary),
            hotwords,
            lm,
            options,
            text_scores,
            partial_scores: HashMap::new(),
        }
    }

    /// The best transcript of `logits` (`width` scores per frame, row-major, as the model gives them).
    pub fn decode(mut self, logits: &[f32], width: usize) -> Decoded {
        let mut beams = vec![Beam {
            text: Rc::from(""),
            next_word: Rc::from(""),
            partial: Rc::from(""),
            last: None,
            words: Rc::new(Vec::new()),
            partial_frames: NO_FRAMES,
            logit: 0.0,
        }];
        if width == self.labels.text.len() {
            for (frame, row) in logits.chunks_exact(width).enumerate() {
                beams = self.step(frame as i64, &log_probabilities(row), &beams);
            }
        }
        let ended: Vec<Beam> = beams
            .into_iter()
            .map(|beam| {
                let mut words = beam.words;
                if !beam.partial.is_empty() {
                    Rc::make_mut(&mut words).push(beam.partial_frames);
                }
                Beam {
                    next_word: beam.partial,
                    partial: Rc::from(""),
                    last: None,
                    words,
                    partial_frames: NO_FRAMES,
                    ..beam
                }
            })
            .collect();
        let merged = merge(ended);
        let scored = self.scored(merged, true);
        let best = self.prune(scored).into_iter().next();
        match best {
            Some(Scored { beam, score }) => Decoded {
                words: frame_words(&beam.text, &beam.words),
                logit_score: beam.logit,
                score,
            },
            None => Decoded {
                words: Vec::new(),
                logit_score: 0.0,
                score: 0.0,
            },
        }
    }

    fn step(&mut self, frame: i64, row: &[f32], beams: &[Beam]) -> Vec<Beam> {
        let best = row
            .iter()
            .enumerate()
            .fold(0, |best, (i, &p)| if p > row[best] { i } else { best });
        let mut next = Vec::new();
        for (id, &p) in row.iter().enumerate() {
            if p < self.options.token_min_logp && id != best {
                continue;
            }
            let id = id as u32;
            let p = f64::from(p);
            for beam in beams {
                next.push(self.extend(beam, id, p, frame));
            }
        }
        let scored = self.scored(merge(next), false);
        self.prune(scored).into_iter().map(|s| s.beam).collect()
    }

    fn extend(&self, beam: &Beam, id: u32, p: f64, frame: i64) -> Beam {
        let logit = beam.logit + p;
        if id == self.labels.blank || beam.last == Some(id) {
            let partial_frames = match id == self.labels.blank {
                true => beam.partial_frames,
                false => (beam.partial_frames.0, frame + 1),
            };
            return Beam {
                last: Some(id),
                partial_frames,
                logit,
                ..beam.clone()
            };
        }
        if Some(id) == self.labels.delimiter {
            let mut words = Rc::clone(&beam.words);
            if !beam.partial.is_empty() {
                Rc::make_mut(&mut words).push(beam.partial_frames);
            }
            return Beam {
                text: Rc::clone(&beam.text),
                next_word: Rc::clone(&beam.partial),
                partial: Rc::from(""),
                last: Some(id),
                words,
                partial_frames: NO_FRAMES,
                logit,
            };
        }
        let partial_frames = match beam.partial_frames.0 < 0 {
            true => (frame, frame + 1),
            false => (beam.partial_frames.0, frame + 1),
        };
        Beam {
            partial: Rc::from(format!("{}{}", beam.partial, self.labels.text[id as usize])),
            last: Some(id),
            partial_frames,
            logit,
            ..beam.clone()
        }
    }

    /// Each beam's text joined with its finished word, scored.
    fn scored(&mut self, beams: Vec<Beam>, last: bool) -> Vec<Scored> {
        beams
            .into_iter()
            .map(|beam| {
                let text = joined(&beam.text, &beam.next_word);
                let score = self.score(&beam, &text, last);
                Scored {
                    beam: Beam {
                        text,
                        next_word: Rc::from(""),
                        ..beam
                    },
                    score,
                }
            })
            .collect()
    }

    fn score(&mut self, beam: &Beam, text: &Rc<str>, last: bool) -> f64 {
        let Some(lm) = self.lm else {
            return beam.logit + self.hotword_score(text) + self.hotwords.partial(&beam.partial);
        };
        let key = (Rc::clone(text), last);
        if !self.text_scores.contains_key(&key) {
            let (_, before, state) = self
                .text_scores
                .get(&(Rc::clone(&beam.text), false))
                .cloned()
                .unwrap_or((0.0, 0.0, lm.start()));
            let (word, after) = lm.score(&state, &beam.next_word, last);
            let raw = before + word;
            let total = raw + self.hotword_score(text);
            self.text_scores.insert(key.clone(), (total, raw, after));
        }
        let mut score = self.text_scores[&key].0;
        if !beam.partial.is_empty() {
            let partial = Rc::clone(&beam.partial);
            let hotwords = self.hotwords;
            score += *self.partial_scores.entry(partial).or_insert_with_key(|p| {
                match hotwords.begins(p) {
                    true => hotwords.partial(p),
                    false => lm.score_partial(p),
                }
            });
        }
        beam.logit + score
    }

    fn hotword_score(&self, text: &str) -> f64 {
        if self.hotwords.is_empty() {
            return 0.0;
        }
        let hits = text
            .split(' ')
            .filter(|w| self.hotwords.is_hotword(w))
            .count();
        self.hotwords.weight * hits as f64
    }

    /// Drop beams too far behind the best, then keep the best `beam_width` (equals in their order).
    fn prune(&self, mut scored: Vec<Scored>) -> Vec<Scored> {
        let max = scored
            .iter()
            .map(|s| s.score)
            .fold(f64::NEG_INFINITY, f64::max);
        scored.retain(|s| s.score >= max + self.options.beam_prune_logp);
        scored.sort_by(|a, b| b.score.total_cmp(&a.score));
        scored.truncate(self.options.beam_width.max(1));
        scored
    }
}

/// What makes two beams one: their text, partial word and last token.
type MergeKey = (Rc<str>, Rc<str>, Option<u32>);

/// Beams with the same text, partial word and last token as one, their probabilities summed (the last one's
/// frames kept, in the first one's place).
fn merge(beams: Vec<Beam>) -> Vec<Beam> {
    let mut index: HashMap<MergeKey, usize> = HashMap::new();
    let mut merged: Vec<Beam> = Vec::with_capacity(beams.len());
    for beam in beams {
        let key = (
            joined(&beam.text, &beam.next_word),
            Rc::clone(&beam.partial),
            beam.last,
        );
        match index.get(&key) {
            Some(&i) => {
                let logit = log_sum(merged[i].logit, beam.logit);
                merged[i] = Beam { logit, ..beam };
            }
            None => {
                index.insert(key, merged.len());
                merged.push(beam);
            }
        }
    }
    merged
}

/// The text's words with their frames, the unknown token dropped and words left empty by it removed.
fn frame_words(text: &str, frames: &[Frames]) -> Vec<FrameWord> {
    text.split_whitespace()
        .zip(frames)
        .filter_map(|(word, &(start, end))| {
            let word = word.replace(UNKNOWN, "");
            (!word.is_empty()).then(|| FrameWord {
                text: word,
                start: start.max(0) as usize,
                end: end.max(0) as usize,
            })
        })
        .collect()
}
