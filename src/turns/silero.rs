//! Silero VAD (MIT) through ONNX Runtime: a small recurrent network that gives, for each 32 ms of 16 kHz audio
//! (512 samples, read with the 64 samples before them), the probability that it is speech. The network's state
//! (`[2, 1, 128]`) and the 64-sample context belong to one stream; the graph itself is shared by every session.

use std::path::Path;

use ort::value::Tensor;

use crate::models::{ModelError, ModelSettings, SessionPool};

/// Samples the model reads at a time (32 ms at 16 kHz).
pub const CHUNK: usize = 512;
/// Samples of the previous chunk read with each chunk.
const CONTEXT: usize = 64;
/// The recurrent state's size.
const STATE: usize = 2 * 128;

/// The loaded graph, shared by every stream.
pub struct Silero {
    pool: SessionPool,
}

impl std::fmt::Debug for Silero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Silero")
    }
}

impl Silero {
    /// Load `silero_vad.onnx` (the file, or the folder it is in), checking that it is the graph it claims.
    pub fn load(path: &Path, settings: &ModelSettings) -> Result<Self, ModelError> {
        let (pool, file) = super::graph(
            path,
            "silero_vad.onnx",
            2,
            &["input", "state", "sr"],
            "Silero VAD",
            settings,
        )?;
        let vad = Self { pool };
        // A graph that loads but does not run as Silero does is refused now, not on the first call.
        vad.stream()
            .probability(&[0.0; CHUNK], &vad)
            .map_err(|e| ModelError::invalid(&file, e))?;
        Ok(vad)
    }

    /// A fresh stream's state.
    pub fn stream(&self) -> SileroStream {
        SileroStream::default()
    }
}

/// One stream's recurrent state and context.
#[derive(Debug, Clone)]
pub struct SileroStream {
    state: Vec<f32>,
    context: Vec<f32>,
}

impl Default for SileroStream {
    fn default() -> Self {
        Self {
            state: vec![0.0; STATE],
            context: vec![0.0; CONTEXT],
        }
    }
}

impl SileroStream {
    /// The speech probability of the next [`CHUNK`] samples of the stream.
    pub fn probability(&mut self, chunk: &[f32], model: &Silero) -> Result<f32, String> {
        if chunk.len() != CHUNK {
            return Err(format!(
                "Silero reads {CHUNK} samples at a time, not {}",
                chunk.len()
            ));
        }
        let mut input = Vec::with_capacity(CONTEXT + CHUNK);
        input.extend_from_slice(&self.context);
        input.extend_from_slice(chunk);
        let (probability, state) = model
            .pool
            .with(|session| -> Result<(f32, Vec<f32>), String> {
                let input = Tensor::from_array(([1usize, CONTEXT + CHUNK], input))
                    .map_err(|e| e.to_string())?;
                let state = Tensor::from_array(([2usize, 1, 128], self.state.clone()))
                    .map_err(|e| e.to_string())?;
                let rate = Tensor::from_array(((), vec![16_000i64])).map_err(|e| e.to_string())?;
                let outputs = session
                    .run(ort::inputs!["input" => input, "state" => state, "sr" => rate])
                    .map_err(|e| e.to_string())?;
                let (_, probability) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                let (_, state) = outputs[1]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                let probability = probability.first().copied().ok_or("no probability")?;
                Ok((probability, state.to_vec()))
            })
            .map_err(|e| e.to_string())??;
        if state.len() != STATE {
            return Err(format!("the state came back with {} values", state.len()));
        }
        self.state = state;
        self.context.copy_from_slice(&chunk[CHUNK - CONTEXT..]);
        Ok(probability)
    }
}
