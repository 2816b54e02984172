//! Whisper's log-mel features, computed the way Whisper's own front end computes them: 16 kHz audio padded
//! with zeros to a 30 s window, a centred short-time Fourier transform (n_fft 400, hop 160, periodic Hann,
//! reflect padding at the edges), power spectra through Slaney-normalised mel filters on the Slaney mel scale
//! (0–8 kHz), log10 floored at 1e-10, clamped to 8 decades below the window's maximum, then `(x + 4) / 4`.
//! The last STFT frame is dropped, so a window has exactly 3,000 frames.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

/// Samples per second the features assume.
pub const SAMPLE_RATE: usize = 16_000;
/// FFT length (25 ms).
pub const N_FFT: usize = 400;
/// Hop between frames (10 ms).
pub const HOP: usize = 160;
/// Samples in one 30 s window.
pub const WINDOW_SAMPLES: usize = 30 * SAMPLE_RATE;
/// Frames in one window.
pub const FRAMES: usize = WINDOW_SAMPLES / HOP;

const SPECTRUM: usize = N_FFT / 2 + 1;

/// One triangular filter: its first FFT bin and its weights from there.
#[derive(Debug, Clone)]
struct Filter {
    first: usize,
    weights: Vec<f32>,
}

/// A feature extractor for one mel bin count (80 for most Whisper models, 128 for large-v3).
#[derive(Clone)]
pub struct LogMel {
    filters: Vec<Filter>,
    window: Vec<f32>,
    fft: Arc<dyn RealToComplex<f32>>,
}

impl std::fmt::Debug for LogMel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogMel")
            .field("bins", &self.filters.len())
            .finish()
    }
}

impl LogMel {
    /// An extractor with `bins` mel filters.
    pub fn new(bins: usize) -> Self {
        let window = (0..N_FFT)
            .map(|n| {
                (0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / N_FFT as f64).cos()) as f32
            })
            .collect();
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(N_FFT);
        Self {
            filters: slaney_filters(bins),
            window,
            fft,
        }
    }

    /// How many mel bins each frame has.
    pub fn bins(&self) -> usize {
        self.filters.len()
    }

    /// Features of one window: up to 30 s of 16 kHz mono samples (longer input is cut), zero-padded to 30 s.
    /// Row-major `[bins, FRAMES]`, as the encoder's `input_features` takes them.
    pub fn features(&self, samples: &[f32]) -> Vec<f32> {
        self.features_of(samples, WINDOW_SAMPLES)
    }

    /// Features of a window of `window` samples (a multiple of [`HOP`]): `samples` cut or zero-padded to it,
    /// row-major `[bins, window / HOP]`.
    pub fn features_of(&self, samples: &[f32], window: usize) -> Vec<f32> {
        let frames = window / HOP;
        let audio = &samples[..samples.len().min(window)];
        let sample = |i: isize| -> f32 {
            // Reflect at both edges of the zero-padded window (torch.stft's `center=True`).
            let n = window as isize;
            let j = if i < 0 {
                -i
            } else if i >= n {
                2 * (n - 1) - i
            } else {
                i
            };
            audio.get(j as usize).copied().unwrap_or(0.0)
        };
        let bins = self.bins();
        let mut out = vec![0f32; bins * frames];
        let mut frame = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut scratch = self.fft.make_scratch_vec();
        let mut power = [0f32; SPECTRUM];
        let half = (N_FFT / 2) as isize;
        for t in 0..frames {
            let start = (t * HOP) as isize - half;
            // Frames wholly past the audio are silence: every power is zero.
            if start >= audio.len() as isize {
                for b in 0..bins {
                    out[b * frames + t] = 0.0;
                }
                continue;
            }
            for (k, value) in frame.iter_mut().enumerate() {
                *value = sample(start + k as isize) * self.window[k];
            }
            self.fft
                .process_with_scratch(&mut frame, &mut spectrum, &mut scratch)
                .expect("buffers come from the plan");
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = c.re * c.re + c.im * c.im;
            }
            for (b, filter) in self.filters.iter().enumerate() {
                let energy: f32 = filter
                    .weights
                    .iter()
                    .zip(&power[filter.first..])
                    .map(|(w, p)| w * p)
                    .sum();
                out[b * frames + t] = energy;
            }
        }
        let mut top = f32::NEG_INFINITY;
        for value in &mut out {
            *value = value.max(1e-10).log10();
            top = top.max(*value);
        }
        let floor = top - 8.0;
        for value in &mut out {
            *value = (value.max(floor) + 4.0) / 4.0;
        }
        out
    }
}

fn hz_to_mel(hz: f64) -> f64 {
    let log_step = 27.0 / 6.4f64.ln();
    if hz >= 1000.0 {
        15.0 + (hz / 1000.0).ln() * log_step
    } else {
        3.0 * hz / 200.0
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    let log_step = 6.4f64.ln() / 27.0;
    if mel >= 15.0 {
        1000.0 * ((mel - 15.0) * log_step).exp()
    } else {
        200.0 * mel / 3.0
    }
}

/// Triangles between `bins + 2` points equally spaced in mel from 0 to 8 kHz, each scaled to unit area.
fn slaney_filters(bins: usize) -> Vec<Filter> {
    let nyquist = SAMPLE_RATE as f64 / 2.0;
    let fft_hz: Vec<f64> = (0..SPECTRUM)
        .map(|k| nyquist * k as f64 / (SPECTRUM - 1) as f64)
        .collect();
    let (low, high) = (hz_to_mel(0.0), hz_to_mel(8000.0));
    let edges: Vec<f64> = (0..bins + 2)
        .map(|i| mel_to_hz(low + (high - low) * i as f64 / (bins + 1) as f64))
        .collect();
    (0..bins)
        .map(|b| {
            let (left, centre, right) = (edges[b], edges[b + 1], edges[b + 2]);
            let scale = 2.0 / (right - left);
            let dense: Vec<f32> = fft_hz
                .iter()
                .map(|&f| {
                    let down = (f - left) / (centre - left);
                    let up = (right - f) / (right - centre);
                    (down.min(up).max(0.0) * scale) as f32
                })
                .collect();
            let first = dense.iter().position(|&w| w > 0.0).unwrap_or(0);
            let last = dense.iter().rposition(|&w| w > 0.0).unwrap_or(0);
            Filter {
                first,
                weights: dense[first..=last.max(first)].to_vec(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_cover_the_band_with_unit_area_triangles() {
        let filters = slaney_filters(80);
        assert_eq!(filters.len(), 80);
        // Each filter is non-empty and starts no earlier than the one before.
        for pair in filters.windows(2) {
            assert!(pair[1].first >= pair[0].first);
        }
        assert!(filters.iter().all(|f| f.weights.iter().any(|&w| w > 0.0)));
    }

    #[test]
    fn silence_is_one_constant_and_a_tone_peaks_in_its_band() {
        let mel = LogMel::new(80);
        let silence = mel.features(&[]);
        assert_eq!(silence.len(), 80 * FRAMES);
        assert!(silence.iter().all(|&v| v == silence[0]));

        let tone: Vec<f32> = (0..SAMPLE_RATE)
            .map(|i| (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / SAMPLE_RATE as f32).sin())
            .collect();
        let features = mel.features(&tone);
        let frame = 50;
        let loudest = (0..80)
            .max_by(|&a, &b| features[a * FRAMES + frame].total_cmp(&features[b * FRAMES + frame]))
            .unwrap();
        let centre_mel = hz_to_mel(8000.0) * (loudest + 1) as f64 / 81.0;
        assert!(
            (mel_to_hz(centre_mel) - 1000.0).abs() < 60.0,
            "bin {loudest}"
        );
        // After the tone ends the frames fall to the floor.
        assert!(features[loudest * FRAMES + 2000] < features[loudest * FRAMES + frame] - 1.0);
    }
}
