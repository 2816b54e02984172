//! A VITS voice split in two graphs beside its `model.onnx` (written by `tools/export_mms_tts.py`, see
//! `tools/vits_split.py`):
//!
//! - `model.prior.onnx`: the same inputs as the whole graph → `latents` `[1, C, F]` (what the decoder reads) and
//!   `durations` `[1, T]` (how many frames each token lasts, the model's own duration predictor);
//! - `model.decoder.onnx`: `latents` `[1, C, F]` → the waveform, `hop` samples a frame.
//!
//! With them the voice times its words from its own durations, and decodes the latent in windows: each window
//! is decoded with [`CONTEXT`] frames either side, which the decoder's receptive field (about a dozen frames)
//! never reaches past, so a window's samples are the whole's (equal on the test fixtures; 1.3e-5 at most where
//! the convolution kernels differ by input length).

use std::ops::Range;
use std::path::{Path, PathBuf};

use ort::value::Tensor;

use super::graph::{Inputs, Scales};
use crate::models::{self, ModelError, ModelSettings, SessionPool};

/// Frames of latent decoded on each side of a window and thrown away.
pub const CONTEXT: usize = 16;

/// The prior's output for one sentence.
pub struct Latent {
    /// `[channels × frames]`, channel by channel.
    values: Vec<f32>,
    channels: usize,
    frames: usize,
    /// Frames each token lasts; they add up to `frames`.
    pub durations: Vec<usize>,
}

impl Latent {
    /// Frames of audio in it.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Frames `range` of every channel, as a `[1, C, n]` tensor.
    fn window(&self, range: Range<usize>) -> Result<Tensor<f32>, String> {
        let n = range.len();
        let mut values = Vec::with_capacity(self.channels * n);
        for channel in 0..self.channels {
            let start = channel * self.frames;
            values.extend_from_slice(&self.values[start + range.start..start + range.end]);
        }
        Tensor::from_array(([1usize, self.channels, n], values)).map_err(|e| e.to_string())
    }
}

/// The two graphs of a split voice.
pub struct Split {
    prior: SessionPool,
    inputs: Inputs,
    decoder: SessionPool,
}

impl Split {
    /// The split graphs beside `graph` (`model.onnx` → `model.prior.onnx` and `model.decoder.onnx`), when both
    /// are there.
    pub fn beside(graph: &Path) -> Option<(PathBuf, PathBuf)> {
        let stem = graph.file_stem()?.to_str()?;
        let folder = graph.parent()?;
        let prior = folder.join(format!("{stem}.prior.onnx"));
        let decoder = folder.join(format!("{stem}.decoder.onnx"));
        (prior.is_file() && decoder.is_file()).then_some((prior, decoder))
    }

    /// Open both graphs, `sessions` of each.
    pub fn load(
        prior: &Path,
        decoder: &Path,
        sessions: usize,
        settings: &ModelSettings,
    ) -> Result<Self, ModelError> {
        let threads = models::intra_threads(settings);
        let open = |path: &Path| {
            let (path, settings) = (path.to_path_buf(), settings.clone());
            SessionPool::new(sessions, move || models::session(&path, &settings, threads))
        };
        let (prior_pool, decoder_pool) = (open(prior)?, open(decoder)?);
        let inputs = prior_pool.inspect(|session| {
            let named = |name: &str| session.outputs().iter().any(|o| o.name() == name);
            if !named("latents") || !named("durations") {
                return Err(ModelError::invalid(
                    prior,
                    "the prior graph must give `latents` and `durations`",
                ));
            }
            Inputs::recognise(prior, session)
        })??;
        if inputs.takes_speaker() {
            return Err(ModelError::invalid(
                prior,
                "split graphs are for single-speaker voices (the decoder would need the speaker too)",
            ));
        }
        let takes_latents = decoder_pool.inspect(|session| {
            session.inputs().len() == 1 && session.inputs()[0].name() == "latents"
        })?;
        if !takes_latents {
            return Err(ModelError::invalid(
                decoder,
                "the decoder graph must take `latents` alone",
            ));
        }
        Ok(Self {
            prior: prior_pool,
            inputs,
            decoder: decoder_pool,
        })
    }

    /// The latent of one sentence's token ids, and each token's duration.
    pub fn latent(&self, ids: &[i64], scales: Scales) -> Result<Latent, String> {
        self.prior
            .with(|session| -> Result<Latent, String> {
                let feeds = self.inputs.feeds(ids, scales, 0)?;
                let outputs = session.run(feeds).map_err(|e| e.to_string())?;
                let (shape, values) = outputs["latents"]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                let (channels, frames) = match **shape {
                    [1, channels, frames] if channels > 0 => (channels as usize, frames as usize),
                    ref other => return Err(format!("latents of shape {other:?}")),
                };
                let (_, durations) = outputs["durations"]
                    .try_extract_tensor::<i64>()
                    .map_err(|e| e.to_string())?;
                let durations: Vec<usize> = durations.iter().map(|&d| d.max(0) as usize).collect();
                if durations.len() != ids.len() || durations.iter().sum::<usize>() != frames {
                    return Err(format!(
                        "{} durations adding up to {} for {} tokens and {frames} frames",
                        durations.len(),
                        durations.iter().sum::<usize>(),
                        ids.len()
                    ));
                }
                Ok(Latent {
                    values: values.to_vec(),
                    channels,
                    frames,
                    durations,
                })
            })
            .map_err(|e| e.to_string())?
    }

    /// The samples of frames `range` of `latent`, decoded with [`CONTEXT`] frames either side.
    pub fn decode(&self, latent: &Latent, range: Range<usize>) -> Result<Vec<f32>, String> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let low = range.start.saturating_sub(CONTEXT);
        let high = (range.end + CONTEXT).min(latent.frames);
        let window = latent.window(low..high)?;
        self.decoder
            .with(|session| -> Result<Vec<f32>, String> {
                let outputs = session
                    .run(ort::inputs!["latents" => window])
                    .map_err(|e| e.to_string())?;
                let (_, samples) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                let hop = samples.len() / (high - low);
                if hop == 0 || samples.len() % (high - low) != 0 {
                    return Err(format!(
                        "{} samples for {} frames",
                        samples.len(),
                        high - low
                    ));
                }
                let from = (range.start - low) * hop;
                Ok(samples[from..from + range.len() * hop].to_vec())
            })
            .map_err(|e| e.to_string())?
    }
}

/// The windows a latent of `frames` frames is decoded in: a short first one (so the first audio comes soon),
/// each next one three times longer, so that decoding a window takes less time than playing those before it.
pub fn windows(frames: usize, first: usize) -> Vec<Range<usize>> {
    let mut windows = Vec::new();
    let (mut start, mut size) = (0, first.max(1));
    while start < frames {
        let end = (start + size).min(frames);
        windows.push(start..end);
        start = end;
        size *= 3;
    }
    windows
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_cover_the_latent_once_and_grow() {
        let windows = super::windows(1000, 24);
        assert_eq!(windows[0], 0..24);
        assert_eq!(windows[1], 24..96);
        assert_eq!(windows.last().map(|w| w.end), Some(1000));
        assert!(windows.windows(2).all(|w| w[0].end == w[1].start));
        assert!(super::windows(0, 24).is_empty());
        assert_eq!(super::windows(10, 24), vec![0..10]);
    }
}
