//! CTC acoustic models through ONNX Runtime: wav2vec2, XLS-R, MMS and other encoders that read raw 16 kHz audio
//! and give one row of token scores per frame (Hugging Face's `Wav2Vec2ForCTC` exported by `tools/export_ctc.py`).
//!
//! The waveform is normalised as the model's `preprocessor_config.json` asks. Long audio is read in overlapping
//! windows that start on frame boundaries; each frame is taken from the window in which it lies furthest from an
//! edge, so the windows join without a seam. The frames' best tokens are decoded greedily ([`align`]); with
//! hints (key terms, a prompt's words) or an n-gram model ([`lm`]) a beam search ([`beam`]) decodes them instead.
//! Either way every word gets its start and end time.

pub mod align;
pub mod beam;
mod files;
pub mod force;
pub mod lm;

use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::Tensor;

use self::align::{FrameWord, Vocabulary};
use self::beam::{Hotwords, Search, SearchOptions};
use self::files::CtcFiles;
use self::lm::{LanguageModel, Weights};
use super::{AsrError, Hints, Recognizer, Segment, Task, Transcript, Word};
use crate::models::batch::{Batcher, Batching};
use crate::models::{self, ModelError, ModelSettings, SessionPool};

/// Sample rate the models read.
pub const SAMPLE_RATE: usize = 16_000;

/// Words further apart than this start a new segment.
const SEGMENT_PAUSE_SECONDS: f64 = 1.0;

/// How to load a model.
#[derive(Debug, Clone)]
pub struct CtcOptions {
    /// Recognitions run at once (each gets its own session).
    pub sessions: usize,
    /// Runtime library, threads, optimisation.
    pub models: ModelSettings,
    /// Graph file suffix: `""` for `model.onnx`, `"_quantized"` for `model_quantized.onnx`.
    pub variant: String,
    /// Longest stretch read at once, in seconds.
    pub window_seconds: f64,
    /// How much neighbouring windows share, in seconds.
    pub overlap_seconds: f64,
    /// An n-gram model (ARPA) the beam search weighs words with, and how.
    pub lm: Option<(PathBuf, Weights)>,
    /// The beam search's width and thresholds.
    pub search: SearchOptions,
}

/// A loaded CTC model.
pub struct Ctc {
    pool: SessionPool<Session>,
    /// Stretches of the same length from concurrent recognitions, run as one batch.
    batcher: Batcher<Vec<f32>, (Vec<f32>, usize)>,
    input: String,
    vocabulary: Vocabulary,
    normalize: bool,
    /// Samples per output frame (the product of the feature encoder's strides).
    stride: usize,
    /// The feature encoder's layers as (kernel, stride): how many frames a length gives.
    convolutions: Vec<(usize, usize)>,
    window: usize,
    overlap: usize,
    lm: Option<LanguageModel>,
    search: SearchOptions,
}

impl Ctc {
    /// Load the model in `dir` (see [`files`] for the layout).
    pub fn load(dir: &Path, options: &CtcOptions) -> Result<Self, ModelError> {
        let files = CtcFiles::find(dir, &options.variant)?;
        let described = files.describe()?;
        let threads = models::intra_threads(&options.models);
        let (graph, settings) = (files.graph.clone(), options.models.clone());
        let pool = SessionPool::new(options.sessions, move || {
            models::session(&graph, &settings, threads)
        })?;
        let input = pool
            .inspect(|s| s.inputs().first().map(|i| i.name().to_string()))?
            .ok_or_else(|| ModelError::invalid(&files.graph, "the graph has no input"))?;
        let stride = described.stride();
        // Windows and their overlap are whole frames (the overlap an even number of them), so every window's
        // frames fall on the same grid and the middle of an overlap is a frame boundary.
        let frames = |seconds: f64| (seconds * SAMPLE_RATE as f64) as usize / stride;
        let window_frames = frames(options.window_seconds).max(2);
        let overlap_frames = (frames(options.overlap_seconds) / 2 * 2).min(window_frames / 4 * 2);
        let (window, overlap) = (window_frames * stride, overlap_frames * stride);
        let lm = match &options.lm {
            Some((path, weights)) => Some(
                LanguageModel::load(path, *weights).map_err(|e| ModelError::invalid(path, e))?,
            ),
            None => None,
        };
        Ok(Self {
            lm,
            search: options.search,
            pool,
            batcher: Batcher::new("ctc", Batching::alone(options.sessions)),
            input,
            vocabulary: described.vocabulary,
            normalize: described.normalize,
            stride,
            convolutions: described.convolutions,
            window,
            overlap,
        })
    }

    /// Frames the model gives for `samples` samples.
    pub fn frames_for(&self, samples: usize) -> usize {
        self.convolutions
            .iter()
            .try_fold(samples, |length, &(kernel, stride)| {
                length.checked_sub(kernel).map(|rest| rest / stride + 1)
            })
            .unwrap_or(0)
    }

    /// Run stretches of audio of the same length from concurrent recognitions as one batch of up to `max`, the
    /// first waiting up to `window` for company. A stretch gives the same scores batched as alone: the model
    /// reads each row of a batch on its own, and only stretches of one length share a run, so none is padded.
    pub fn batched(mut self, max: usize, window: std::time::Duration) -> Self {
        let leaders = self.batcher.batching().leaders;
        self.batcher = Batcher::new(
            "ctc",
            Batching {
                max,
                window,
                leaders,
            },
        );
        self
    }

    /// Batched runs so far and the stretches they held.
    pub fn batch_counts(&self) -> (u64, u64) {
        self.batcher.counts()
    }

    /// The token scores of one stretch of audio: `[frames, vocabulary]` row-major, and the row width.
    pub fn logits(&self, samples: &[f32]) -> Result<(Vec<f32>, usize), AsrError> {
        let input = self.prepare(samples);
        self.batcher
            .run(input.len(), input, |inputs| self.run_batch(inputs))
            .map_err(AsrError::Engine)
    }

    /// The token scores of stretches of one length, run as one batch.
    fn run_batch(&self, inputs: Vec<Vec<f32>>) -> Result<Vec<(Vec<f32>, usize)>, String> {
        let (rows, n) = (inputs.len(), inputs.first().map_or(0, Vec::len));
        let name = self.input.clone();
        self.pool
            .with(|session| -> Result<Vec<(Vec<f32>, usize)>, String> {
                let tensor =
                    Tensor::from_array(([rows, n], inputs.concat())).map_err(|e| e.to_string())?;
                let outputs = session
                    .run(ort::inputs![name => tensor])
                    .map_err(|e| e.to_string())?;
                let (shape, scores) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                let width = shape.last().copied().unwrap_or(0).max(0) as usize;
                let each = scores.len() / rows.max(1);
                if each == 0 {
                    return Ok(vec![(Vec::new(), width); rows]);
                }
                Ok(scores
                    .chunks_exact(each)
                    .take(rows)
                    .map(|row| (row.to_vec(), width))
                    .collect())
            })
            .map_err(|e| e.to_string())?
    }

    /// The waveform as the model reads it: zero mean and unit variance when the model was trained so.
    fn prepare(&self, samples: &[f32]) -> Vec<f32> {
        if !self.normalize || samples.is_empty() {
            return samples.to_vec();
        }
        let n = samples.len() as f64;
        let mean = samples.iter().map(|&s| f64::from(s)).sum::<f64>() / n;
        let variance = samples
            .iter()
            .map(|&s| (f64::from(s) - mean).powi(2))
            .sum::<f64>()
            / n;
        let scale = 1.0 / (variance + 1e-7).sqrt();
        samples
            .iter()
            .map(|&s| ((f64::from(s) - mean) * scale) as f32)
            .collect()
    }

    /// The best token of every frame of `samples`, window by window.
    pub fn best_path(
        &self,
        samples: &[f32],
        cancel: &crate::cancel::Cancel,
    ) -> Result<Vec<u32>, AsrError> {
        let (logits, width) = self.frame_logits(samples, cancel)?;
        Ok(align::best_per_frame(&logits, width))
    }

    /// The token scores of every frame of `samples` (`[frames, width]` row-major) and the row width, window by
    /// window.
    pub fn frame_logits(
        &self,
        samples: &[f32],
        cancel: &crate::cancel::Cancel,
    ) -> Result<(Vec<f32>, usize), AsrError> {
        let mut kept: Vec<f32> = Vec::new();
        let mut width = self.vocabulary.tokens.len();
        let mut frames_kept = 0usize;
        let step = self.window - self.overlap;
        let mut start = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(AsrError::Cancelled);
            }
            let end = (start + self.window).min(samples.len());
            let last = end == samples.len();
            let frames = self.frames_for(end - start);
            if frames > 0 {
                let (logits, row) = self.logits(&samples[start..end])?;
                width = row;
                let count = logits.len() / row.max(1);
                // This window's own frames: from the middle of the overlap with the one before to the middle
                // of the overlap with the one after.
                let first = (frames_kept * self.stride).saturating_sub(start) / self.stride;
                let until = match last {
                    true => count,
                    false => (step + self.overlap / 2) / self.stride,
                }
                .min(count);
                if until > first {
                    kept.extend_from_slice(&logits[first * row..until * row]);
                    frames_kept += until - first;
                }
            }
            if last {
                return Ok((kept, width));
            }
            start += step;
        }
    }

    /// The words of `samples` with their times in seconds.
    pub fn words(
        &self,
        samples: &[f32],
        cancel: &crate::cancel::Cancel,
    ) -> Result<Vec<Word>, AsrError> {
        self.words_with(samples, &Hints::default(), cancel)
    }

    /// The words of `samples` with their times in seconds, favouring the words of `hints`: greedily without
    /// hints or a language model, by beam search with them.
    pub fn words_with(
        &self,
        samples: &[f32],
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Vec<Word>, AsrError> {
        let (logits, width) = self.frame_logits(samples, cancel)?;
        let hotwords = Hotwords::new(&self.spelled(hints), self.search.hotword_weight);
        let words = match hotwords.is_empty() && self.lm.is_none() {
            true => align::words(&align::best_per_frame(&logits, width), &self.vocabulary),
            false => {
                Search::new(&self.vocabulary, &hotwords, self.lm.as_ref(), self.search)
                    .decode(&logits, width)
                    .words
            }
        };
        let seconds = |frame: usize| (frame * self.stride) as f64 / SAMPLE_RATE as f64;
        let audio = samples.len() as f64 / SAMPLE_RATE as f64;
        Ok(words
            .into_iter()
            .map(|FrameWord { text, start, end }| Word {
                word: text,
                start: seconds(start).min(audio),
                end: seconds(end).min(audio),
            })
            .collect())
    }

    /// The words of `segments` (another engine's transcript of `samples`) timed against this model's frames,
    /// each segment's within its own stretch of the audio; a segment too short for its text spreads its words
    /// over its time by their lengths.
    pub fn align(
        &self,
        samples: &[f32],
        segments: &[Segment],
        cancel: &crate::cancel::Cancel,
    ) -> Result<Vec<Word>, AsrError> {
        let (logits, width) = self.frame_logits(samples, cancel)?;
        let frames = logits.len() / width.max(1);
        let frame_seconds = self.stride as f64 / SAMPLE_RATE as f64;
        let audio = samples.len() as f64 / SAMPLE_RATE as f64;
        let mut words = Vec::new();
        for segment in segments {
            let first = ((segment.start / frame_seconds) as usize).min(frames);
            let last = ((segment.end / frame_seconds).ceil() as usize).clamp(first, frames);
            let log_probs: Vec<f32> = logits[first * width..last * width]
                .chunks_exact(width)
                .flat_map(beam::log_probabilities)
                .collect();
            let seconds = |frame: usize| ((first + frame) as f64 * frame_seconds).min(audio);
            match force::align(&segment.text, &log_probs, width, &self.vocabulary) {
                Some(aligned) => words.extend(aligned.into_iter().map(|w| Word {
                    word: w.word,
                    start: seconds(w.start),
                    end: seconds(w.end),
                })),
                None => words.extend(segment.words_by_length()),
            }
        }
        Ok(words)
    }

    /// The words of `hints` (key terms, then the prompt's) as this model spells them: lower case, characters it
    /// has no token for taken as spaces between words.
    fn spelled(&self, hints: &Hints) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        for text in hints.keyterms.iter().chain([&hints.prompt]) {
            let spelled: String = text
                .to_lowercase()
                .chars()
                .map(|c| match self.vocabulary.letter(c) {
                    Some(_) => c,
                    None => ' ',
                })
                .collect();
            for word in spelled.split_whitespace() {
                if !words.iter().any(|w| w == word) && words.len() < MAX_HOTWORDS {
                    words.push(word.to_string());
                }
            }
        }
        words
    }
}

/// At most this many distinct words are favoured (key terms first, then the prompt's).
const MAX_HOTWORDS: usize = 2_000;

impl Recognizer for Ctc {
    fn recognise(
        &self,
        samples: &[f32],
        language: &str,
        task: Task,
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        if task == Task::Translate {
            return Err(super::transcribes_only(self.engine(), language));
        }
        let words = self.words_with(samples, hints, cancel)?;
        Ok(Transcript::from_words(words, SEGMENT_PAUSE_SECONDS))
    }

    fn engine(&self) -> &'static str {
        "ctc"
    }
}
