//! A VITS ONNX graph's inputs, recognised by name in the layouts people publish, and one run of it.
//!
//! | input | layouts | fed with |
//! |---|---|---|
//! | `input_ids`, `input`, `x`, `text` (int64 `[1, T]`) | all | token ids |
//! | `input_lengths`, `x_length`, `x_lengths`, `text_lengths` (int64 `[1]`) | Piper, sherpa-onnx | `T` |
//! | `attention_mask` (int64 `[1, T]`) | Hugging Face | ones |
//! | `scales` (float `[3]`) | Piper | noise_scale, length_scale, noise_w |
//! | `noise_scale`, `length_scale`, `noise_scale_w` / `noise_w` (float, `[]` or `[1]`) | MMS exports | each |
//! | `sid`, `speaker_id`, `speaker` (int64 `[1]`) | multi-speaker | the voice's speaker |
//!
//! The waveform is the first output, any shape (`[1, N]`, `[1, 1, N]`, `[1, 1, 1, N]`).

use std::path::Path;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, ValueType};

use crate::models::ModelError;

/// Scale controls as the graph receives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scales {
    /// Noise of the prior (pitch and energy variation).
    pub noise: f32,
    /// Duration multiplier (1 / speaking rate).
    pub length: f32,
    /// Noise of the stochastic duration predictor.
    pub noise_w: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Feed {
    Ids,
    Lengths,
    Mask,
    Scales,
    Noise,
    Length,
    NoiseW,
    Speaker,
}

/// How to feed a graph: each input's name, role and rank.
#[derive(Debug, Clone)]
pub struct Inputs {
    inputs: Vec<(String, Feed, usize)>,
}

impl Inputs {
    /// Recognise every input of `session`, refusing graphs with inputs we cannot feed.
    pub fn recognise(path: &Path, session: &Session) -> Result<Self, ModelError> {
        let mut inputs = Vec::new();
        for outlet in session.inputs() {
            let name = outlet.name();
            let rank = match outlet.dtype() {
                ValueType::Tensor { shape, .. } => shape.len(),
                other => {
                    return Err(ModelError::invalid(
                        path,
                        format!("input `{name}` is a {other:?}, not a tensor"),
                    ))
                }
            };
            let feed = match name {
                "input_ids" | "input" | "x" | "text" | "tokens" => Feed::Ids,
                "input_lengths" | "x_length" | "x_lengths" | "text_lengths" => Feed::Lengths,
                "attention_mask" => Feed::Mask,
                "scales" => Feed::Scales,
                "noise_scale" => Feed::Noise,
                "length_scale" => Feed::Length,
                "noise_scale_w" | "noise_w" | "noise_scale_duration" => Feed::NoiseW,
                "sid" | "speaker_id" | "speaker" | "speaker_ids" => Feed::Speaker,
                _ => {
                    return Err(ModelError::invalid(
                        path,
                        format!("input `{name}` is not one a VITS voice takes"),
                    ))
                }
            };
            inputs.push((name.to_string(), feed, rank));
        }
        if !inputs.iter().any(|(_, feed, _)| *feed == Feed::Ids) {
            return Err(ModelError::invalid(path, "the graph has no token-id input"));
        }
        if session.outputs().is_empty() {
            return Err(ModelError::invalid(path, "the graph has no output"));
        }
        Ok(Self { inputs })
    }

    /// Whether the graph takes a speaker id.
    pub fn takes_speaker(&self) -> bool {
        self.inputs
            .iter()
            .any(|(_, feed, _)| *feed == Feed::Speaker)
    }

    /// Run the graph on `ids`; the waveform at the model's sample rate.
    pub fn run(
        &self,
        session: &mut Session,
        ids: &[i64],
        scales: Scales,
        speaker: i64,
    ) -> Result<Vec<f32>, String> {
        let feeds = self.feeds(ids, scales, speaker)?;
        let outputs = session.run(feeds).map_err(|e| e.to_string())?;
        let (_, samples) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| e.to_string())?;
        Ok(samples.to_vec())
    }

    /// What the graph is fed for `ids`, by input name.
    pub fn feeds(
        &self,
        ids: &[i64],
        scales: Scales,
        speaker: i64,
    ) -> Result<Vec<(String, SessionInputValue<'static>)>, String> {
        let n = ids.len();
        let float = |value: f32, rank: usize| -> Result<SessionInputValue<'static>, String> {
            let tensor = if rank == 0 {
                Tensor::from_array(((), vec![value]))
            } else {
                Tensor::from_array(([1usize], vec![value]))
            };
            tensor.map(Into::into).map_err(|e| e.to_string())
        };
        let mut feeds: Vec<(String, SessionInputValue<'static>)> = Vec::new();
        for (name, feed, rank) in &self.inputs {
            let value: SessionInputValue<'static> = match feed {
                Feed::Ids => Tensor::from_array(([1usize, n], ids.to_vec()))
                    .map_err(|e| e.to_string())?
                    .into(),
                Feed::Lengths => Tensor::from_array(([1usize], vec![n as i64]))
                    .map_err(|e| e.to_string())?
                    .into(),
                Feed::Mask => Tensor::from_array(([1usize, n], vec![1i64; n]))
                    .map_err(|e| e.to_string())?
                    .into(),
                Feed::Scales => Tensor::from_array((
                    [3usize],
                    vec![scales.noise, scales.length, scales.noise_w],
                ))
                .map_err(|e| e.to_string())?
                .into(),
                Feed::Noise => float(scales.noise, *rank)?,
                Feed::Length => float(scales.length, *rank)?,
                Feed::NoiseW => float(scales.noise_w, *rank)?,
                Feed::Speaker => Tensor::from_array(([1usize], vec![speaker]))
                    .map_err(|e| e.to_string())?
                    .into(),
            };
            feeds.push((name.clone(), value));
        }
        Ok(feeds)
    }
}
