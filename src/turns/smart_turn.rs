//! Smart Turn v3 (BSD-2) through ONNX Runtime: a classifier on the audio of a turn so far that says whether the
//! speaker sounds finished. It reads the last 8 s of 16 kHz audio (zeros before a shorter turn), normalised to
//! zero mean and unit variance, as 80-bin Whisper log-mel features (`[1, 80, 800]`), and gives the probability
//! that the turn is complete.

use std::path::Path;

use ort::value::Tensor;

use crate::asr::mel::{LogMel, HOP};
use crate::models::{ModelError, ModelSettings, SessionPool};

/// Audio the model reads: the last 8 s of the turn.
pub const WINDOW: usize = 8 * 16_000;
const BINS: usize = 80;

/// The loaded classifier, shared by every session.
pub struct SmartTurn {
    pool: SessionPool,
    mel: LogMel,
}

impl std::fmt::Debug for SmartTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SmartTurn")
    }
}

impl SmartTurn {
    /// Load the graph (a `.onnx` file, or the folder with `smart-turn-v3.2-cpu.onnx`).
    pub fn load(path: &Path, settings: &ModelSettings) -> Result<Self, ModelError> {
        let (pool, file) = super::graph(
            path,
            "smart-turn-v3.2-cpu.onnx",
            1,
            &["input_features"],
            "Smart Turn",
            settings,
        )?;
        let model = Self {
            pool,
            mel: LogMel::new(BINS),
        };
        model
            .complete(&[0.0; 1600])
            .map_err(|e| ModelError::invalid(&file, e))?;
        Ok(model)
    }

    /// The probability that a turn whose audio (16 kHz) is `turn` is complete.
    pub fn complete(&self, turn: &[f32]) -> Result<f32, String> {
        let features = self.features(turn);
        let frames = features.len() / BINS;
        self.pool
            .with(|session| -> Result<f32, String> {
                let input = Tensor::from_array(([1usize, BINS, frames], features))
                    .map_err(|e| e.to_string())?;
                let outputs = session
                    .run(ort::inputs!["input_features" => input])
                    .map_err(|e| e.to_string())?;
                let (_, probability) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                probability
                    .first()
                    .copied()
                    .ok_or_else(|| "no probability".to_string())
            })
            .map_err(|e| e.to_string())?
    }

    /// The model's input: the last [`WINDOW`] samples (zeros before a shorter turn), normalised, as log-mel.
    pub fn features(&self, turn: &[f32]) -> Vec<f32> {
        let tail = &turn[turn.len().saturating_sub(WINDOW)..];
        let mut window = vec![0f32; WINDOW - tail.len()];
        window.extend_from_slice(tail);
        // Zero mean and unit variance over the whole window, padding included.
        let n = WINDOW as f64;
        let mean = window.iter().map(|&s| f64::from(s)).sum::<f64>() / n;
        let variance = window
            .iter()
            .map(|&s| (f64::from(s) - mean).powi(2))
            .sum::<f64>()
            / n;
        let (mean, scale) = (mean as f32, (1.0 / (variance + 1e-7).sqrt()) as f32);
        window.iter_mut().for_each(|s| *s = (*s - mean) * scale);
        debug_assert_eq!(WINDOW % HOP, 0);
        self.mel.features_of(&window, WINDOW)
    }
}
