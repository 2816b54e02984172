//! Speaker embeddings from an ONNX speaker encoder (WeSpeaker / 3D-Speaker style exports: `feats` `[1, T, 80]`
//! Kaldi filter banks in, one embedding out), used to report how close a cloned voice's speech is to its
//! reference: the cosine similarity of their embeddings.
//!
//! Features are Kaldi's `fbank` as those toolkits compute them: 16-bit-scaled samples, 25 ms povey-windowed
//! frames every 10 ms (edges snipped), DC removed, pre-emphasis 0.97, a 512-point power spectrum, 80
//! triangular filters on the HTK mel scale from 20 Hz to 8 kHz, natural log, then the mean over time removed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ort::session::Session;
use ort::value::Tensor;
use realfft::{RealFftPlanner, RealToComplex};

use crate::models::{self, ModelError, ModelSettings, SessionPool};

const FRAME: usize = 400;
const SHIFT: usize = 160;
const FFT: usize = 512;
const BINS: usize = 80;
const LOW_HZ: f64 = 20.0;
const HIGH_HZ: f64 = 8000.0;

/// Kaldi-compatible log mel filter banks, `[frames, 80]` row-major, with the mean over time removed.
pub fn fbank(samples: &[f32]) -> Vec<f32> {
    if samples.len() < FRAME {
        return Vec::new();
    }
    let frames = 1 + (samples.len() - FRAME) / SHIFT;
    let window: Vec<f32> = (0..FRAME)
        .map(|n| {
            let hann =
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / (FRAME - 1) as f64).cos();
            hann.powf(0.85) as f32
        })
        .collect();
    let filters = mel_filters();
    let fft: Arc<dyn RealToComplex<f32>> = RealFftPlanner::<f32>::new().plan_fft_forward(FFT);
    let mut input = fft.make_input_vec();
    let mut output = fft.make_output_vec();
    let mut frame = [0f32; FRAME];
    let mut features = vec![0f32; frames * BINS];
    for t in 0..frames {
        for (k, value) in frame.iter_mut().enumerate() {
            *value = samples[t * SHIFT + k] * 32768.0;
        }
        let mean = frame.iter().sum::<f32>() / FRAME as f32;
        frame.iter_mut().for_each(|v| *v -= mean);
        for k in (1..FRAME).rev() {
            frame[k] -= 0.97 * frame[k - 1];
        }
        frame[0] -= 0.97 * frame[0];
        input.fill(0.0);
        for k in 0..FRAME {
            input[k] = frame[k] * window[k];
        }
        if fft.process(&mut input, &mut output).is_err() {
            continue;
        }
        for (b, (first, weights)) in filters.iter().enumerate() {
            let energy: f32 = weights
                .iter()
                .zip(&output[*first..])
                .map(|(w, c)| w * c.norm_sqr())
                .sum();
            features[t * BINS + b] = energy.max(f32::EPSILON).ln();
        }
    }
    for b in 0..BINS {
        let mean = (0..frames).map(|t| features[t * BINS + b]).sum::<f32>() / frames as f32;
        for t in 0..frames {
            features[t * BINS + b] -= mean;
        }
    }
    features
}

fn mel(hz: f64) -> f64 {
    1127.0 * (1.0 + hz / 700.0).ln()
}

/// Triangles equally spaced on the HTK mel scale, weights computed in mel (as Kaldi does): first bin, weights.
fn mel_filters() -> Vec<(usize, Vec<f32>)> {
    let (low, high) = (mel(LOW_HZ), mel(HIGH_HZ));
    let delta = (high - low) / (BINS + 1) as f64;
    let bin_hz = 16_000.0 / FFT as f64;
    (0..BINS)
        .map(|b| {
            let (left, centre, right) = (
                low + b as f64 * delta,
                low + (b + 1) as f64 * delta,
                low + (b + 2) as f64 * delta,
            );
            let weights: Vec<f32> = (0..FFT / 2)
                .map(|k| {
                    let m = mel(k as f64 * bin_hz);
                    if m > left && m < right {
                        if m <= centre {
                            ((m - left) / (centre - left)) as f32
                        } else {
                            ((right - m) / (right - centre)) as f32
                        }
                    } else {
                        0.0
                    }
                })
                .collect();
            let first = weights.iter().position(|&w| w > 0.0).unwrap_or(0);
            let last = weights.iter().rposition(|&w| w > 0.0).unwrap_or(first);
            (first, weights[first..=last].to_vec())
        })
        .collect()
}

/// A loaded speaker encoder.
pub struct SpeakerEncoder {
    pool: SessionPool,
    input: String,
}

impl SpeakerEncoder {
    /// Load an encoder graph (a `.onnx` file, or the first `.onnx` in a folder).
    pub fn load(path: &Path, settings: &ModelSettings) -> Result<Self, ModelError> {
        let graph = graph_file(path)?;
        let threads = models::intra_threads(settings);
        let (file, settings) = (graph.clone(), settings.clone());
        let pool = SessionPool::new(2, move || models::session(&file, &settings, threads))?;
        let input = pool.inspect(|session: &Session| {
            session
                .inputs()
                .first()
                .map(|i| i.name().to_string())
                .unwrap_or_default()
        })?;
        if input.is_empty() {
            return Err(ModelError::invalid(&graph, "the graph has no input"));
        }
        Ok(Self { pool, input })
    }

    /// The embedding of 16 kHz speech.
    pub fn embed(&self, samples: &[f32]) -> Result<Vec<f32>, String> {
        let features = fbank(samples);
        if features.is_empty() {
            return Err("too little audio for a speaker embedding".into());
        }
        let frames = features.len() / BINS;
        let tensor =
            Tensor::from_array(([1usize, frames, BINS], features)).map_err(|e| e.to_string())?;
        self.pool
            .with(|session| -> Result<Vec<f32>, String> {
                let outputs = session
                    .run(vec![(self.input.as_str(), tensor)])
                    .map_err(|e| e.to_string())?;
                let (_, embedding) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                Ok(embedding.to_vec())
            })
            .map_err(|e| e.to_string())?
    }
}

fn graph_file(path: &Path) -> Result<PathBuf, ModelError> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    let missing = || ModelError::Missing {
        path: path.to_path_buf(),
    };
    let mut graphs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|_| missing())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    graphs.sort();
    graphs.into_iter().next().ok_or_else(missing)
}

/// Cosine similarity of two embeddings (0 when either is empty or zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if a.len() != b.len() || na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na * nb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_have_kaldi_framing_and_zero_mean() {
        let tone: Vec<f32> = (0..16_000)
            .map(|i| 0.3 * (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / 16_000.0).sin())
            .collect();
        let features = fbank(&tone);
        // snip_edges: 1 + (16000 - 400) / 160 frames.
        assert_eq!(features.len(), 98 * BINS);
        for b in 0..BINS {
            let mean: f32 = (0..98).map(|t| features[t * BINS + b]).sum::<f32>() / 98.0;
            assert!(mean.abs() < 1e-3);
        }
        assert!(fbank(&[0.0; 100]).is_empty());
    }

    #[test]
    fn cosine_of_equal_and_opposite_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[], &[]), 0.0);
    }
}
