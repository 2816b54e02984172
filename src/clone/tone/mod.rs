//! Neural tone-colour conversion: OpenVoice V2's reference encoder and converter through ONNX Runtime (the graphs
//! `tools/export_openvoice.py` writes). The reference encoder turns a few seconds of speech into a tone-colour
//! embedding; the converter re-voices speech from one tone colour to another (its posterior encoder, a flow
//! forward with the source's tone and back with the target's, and a HiFi-GAN decoder), so any voice's output
//! can be made to sound like a cloned speaker.
//!
//! Both read the linear spectrogram of 22,050 Hz audio ([`spectrum`]). The converter's posterior sample is its
//! mean plus `tau` times noise sauti draws from a seed, so a conversion is reproducible.

pub mod spectrum;

use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::Tensor;
use rand::SeedableRng as _;
use serde::Deserialize;

use self::spectrum::Spectrum;
use crate::models::{self, ModelError, ModelSettings, SessionPool};

/// `openvoice.json`: the audio and shapes the graphs were exported with.
#[derive(Debug, Clone, Deserialize)]
pub struct ToneSettings {
    /// Sample rate the graphs read and write.
    pub sample_rate: u32,
    /// FFT size of the spectrogram.
    pub fft_size: usize,
    /// Hop between frames; each frame gives this many output samples.
    pub hop_length: usize,
    /// Window length.
    pub win_length: usize,
    /// The posterior's channels (the noise input's rows).
    pub channels: usize,
    /// Size of a tone-colour embedding.
    pub tone_size: usize,
    /// Scale of the posterior's noise.
    pub tau: f32,
}

/// A loaded OpenVoice converter.
pub struct ToneConverter {
    encoder: SessionPool<Session>,
    converter: SessionPool<Session>,
    settings: ToneSettings,
    spectrum: Spectrum,
}

/// The files of an installed converter.
fn files(dir: &Path) -> Result<[PathBuf; 3], ModelError> {
    let all = ["tone_encoder.onnx", "converter.onnx", "openvoice.json"].map(|f| dir.join(f));
    match all.iter().find(|f| !f.is_file()) {
        Some(missing) => Err(ModelError::Missing {
            path: missing.clone(),
        }),
        None => Ok(all),
    }
}

impl ToneConverter {
    /// Load the converter in `dir`, with up to `sessions` conversions at once.
    pub fn load(dir: &Path, settings: &ModelSettings, sessions: usize) -> Result<Self, ModelError> {
        let [encoder, converter, described] = files(dir)?;
        let text =
            std::fs::read_to_string(&described).map_err(|e| ModelError::invalid(&described, e))?;
        let tone: ToneSettings =
            serde_json::from_str(&text).map_err(|e| ModelError::invalid(&described, e))?;
        if tone.fft_size < 16 || tone.hop_length == 0 || tone.hop_length > tone.fft_size {
            return Err(ModelError::invalid(
                &described,
                "impossible spectrogram settings",
            ));
        }
        let threads = models::intra_threads(settings);
        let pool = |graph: PathBuf| {
            let settings = settings.clone();
            SessionPool::new(sessions, move || {
                models::session(&graph, &settings, threads)
            })
        };
        let (encoder, converter) = (pool(encoder.clone())?, pool(converter.clone())?);
        for (pool, graph, inputs) in [
            (
                &encoder,
                dir.join("tone_encoder.onnx"),
                &["spectrogram"][..],
            ),
            (
                &converter,
                dir.join("converter.onnx"),
                &["spectrogram", "noise", "source_tone", "target_tone"][..],
            ),
        ] {
            let names: Vec<String> =
                pool.inspect(|s| s.inputs().iter().map(|i| i.name().to_string()).collect())?;
            if let Some(missing) = inputs.iter().find(|n| !names.iter().any(|m| m == *n)) {
                return Err(ModelError::invalid(
                    &graph,
                    format!("the graph has no input {missing:?}"),
                ));
            }
        }
        Ok(Self {
            spectrum: Spectrum::new(tone.fft_size, tone.hop_length, tone.win_length),
            encoder,
            converter,
            settings: tone,
        })
    }

    /// The audio and shapes the graphs use.
    pub fn settings(&self) -> &ToneSettings {
        &self.settings
    }

    /// The spectrogram the graphs read, `[bins, frames]` row-major, and its frames.
    pub fn spectrogram(&self, samples: &[f32]) -> (Vec<f32>, usize) {
        self.spectrum.magnitudes(samples)
    }

    /// Frames of a growing signal of `len` samples that no later sample changes.
    pub fn spectrum_settled(&self, len: usize) -> usize {
        self.spectrum.settled(len)
    }

    /// Frames of a whole signal of `len` samples.
    pub fn spectrum_frames(&self, len: usize) -> usize {
        self.spectrum.frames_for(len)
    }

    /// Spectrogram frames `from..to` of `samples`, one column of magnitudes each.
    pub fn spectrum_columns(&self, samples: &[f32], from: usize, to: usize) -> Vec<Vec<f32>> {
        self.spectrum.columns(samples, from, to)
    }

    /// The tone-colour embedding of speech at the converter's sample rate.
    pub fn tone(&self, samples: &[f32]) -> Result<Vec<f32>, String> {
        let (spec, frames) = self.spectrogram(samples);
        if frames == 0 {
            return Err("too little audio for a tone colour".into());
        }
        let bins = self.spectrum.bins();
        // The encoder reads frames by rows: [1, frames, bins].
        let mut rows = vec![0f32; spec.len()];
        for b in 0..bins {
            for t in 0..frames {
                rows[t * bins + b] = spec[b * frames + t];
            }
        }
        let input =
            Tensor::from_array(([1usize, frames, bins], rows)).map_err(|e| e.to_string())?;
        self.encoder
            .with(|session| -> Result<Vec<f32>, String> {
                let outputs = session
                    .run(ort::inputs!["spectrogram" => input])
                    .map_err(|e| e.to_string())?;
                let (_, tone) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                Ok(tone.to_vec())
            })
            .map_err(|e| e.to_string())?
    }

    /// `samples` re-voiced from the tone `from` to the tone `to`; the posterior's noise is drawn from `seed`.
    /// The output has a hop's worth of samples per spectrogram frame (the tail under one hop is dropped).
    pub fn convert(
        &self,
        samples: &[f32],
        from: &[f32],
        to: &[f32],
        seed: u64,
    ) -> Result<Vec<f32>, String> {
        let (spec, frames) = self.spectrogram(samples);
        if frames == 0 {
            return Ok(Vec::new());
        }
        let noise = self.noise(frames, seed);
        self.convert_spectrogram(spec, frames, noise, from, to)
    }

    /// Noise for `frames` frames, already scaled by tau: `[channels, frames]` row-major. Frame by frame the
    /// draws are those of [`ToneConverter::noise_draws`], so a stream converted as it grows gets the same.
    pub fn noise(&self, frames: usize, seed: u64) -> Vec<f32> {
        let mut draws = self.noise_draws(seed);
        let columns: Vec<Vec<f32>> = (0..frames).map(|_| draws.next_frame()).collect();
        rows(&columns, self.settings.channels)
    }

    /// The noise of successive frames drawn from `seed`.
    pub fn noise_draws(&self, seed: u64) -> Noise {
        Noise {
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            channels: self.settings.channels,
            tau: self.settings.tau,
        }
    }

    /// The converter on a spectrogram (`[bins, frames]`) with the given noise (`[channels, frames]`, scaled).
    pub fn convert_spectrogram(
        &self,
        spec: Vec<f32>,
        frames: usize,
        noise: Vec<f32>,
        from: &[f32],
        to: &[f32],
    ) -> Result<Vec<f32>, String> {
        let size = self.settings.tone_size;
        if from.len() != size || to.len() != size {
            return Err(format!("a tone colour has {size} values"));
        }
        let bins = self.spectrum.bins();
        let channels = self.settings.channels;
        if spec.len() != bins * frames || noise.len() != channels * frames {
            return Err("the spectrogram and the noise differ in length".into());
        }
        if frames == 0 {
            return Ok(Vec::new());
        }
        let e = |e: ort::Error| e.to_string();
        let spectrogram = Tensor::from_array(([1usize, bins, frames], spec)).map_err(e)?;
        let noise = Tensor::from_array(([1usize, channels, frames], noise)).map_err(e)?;
        let source = Tensor::from_array(([1usize, size, 1], from.to_vec())).map_err(e)?;
        let target = Tensor::from_array(([1usize, size, 1], to.to_vec())).map_err(e)?;
        self.converter
            .with(|session| -> Result<Vec<f32>, String> {
                let outputs = session
                    .run(ort::inputs![
                        "spectrogram" => spectrogram,
                        "noise" => noise,
                        "source_tone" => source,
                        "target_tone" => target,
                    ])
                    .map_err(|e| e.to_string())?;
                let (_, waveform) = outputs[0]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| e.to_string())?;
                Ok(waveform.to_vec())
            })
            .map_err(|e| e.to_string())?
    }
}

/// The posterior's noise, frame after frame, scaled by tau.
pub struct Noise {
    rng: rand::rngs::StdRng,
    channels: usize,
    tau: f32,
}

impl Noise {
    /// The next frame's values, one per channel.
    pub fn next_frame(&mut self) -> Vec<f32> {
        (0..self.channels)
            .map(|_| normal(&mut self.rng) * self.tau)
            .collect()
    }
}

/// Columns (one per frame, `height` values each) laid out as rows: `[height, frames]` row-major.
pub fn rows(columns: &[Vec<f32>], height: usize) -> Vec<f32> {
    let frames = columns.len();
    let mut out = vec![0f32; height * frames];
    for (t, column) in columns.iter().enumerate() {
        for (r, value) in column.iter().take(height).enumerate() {
            out[r * frames + t] = *value;
        }
    }
    out
}

/// A standard normal draw (Box–Muller over two uniform values).
fn normal(rng: &mut impl rand::Rng) -> f32 {
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let v: f64 = rng.random();
    ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
}
