//! The converter's input: the linear magnitude spectrogram OpenVoice reads. The signal is reflected by
//! (n_fft − hop) / 2 samples at each end, cut into n_fft-sample frames every `hop` samples (no centring), each
//! weighted by a periodic Hann window of `win` samples and transformed; a bin's value is
//! √(re² + im² + 10⁻⁶). The result is `[bins, frames]` row-major, `bins` = n_fft / 2 + 1.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

/// A spectrogram plan for one FFT size, hop and window.
pub struct Spectrum {
    fft: Arc<dyn RealToComplex<f64>>,
    n_fft: usize,
    hop: usize,
    window: Vec<f64>,
}

impl Spectrum {
    /// A plan for `n_fft`-point frames every `hop` samples, windowed by `win` samples (centred in the frame).
    pub fn new(n_fft: usize, hop: usize, win: usize) -> Self {
        let win = win.clamp(1, n_fft.max(1));
        let offset = (n_fft - win) / 2;
        let mut window = vec![0.0; n_fft];
        for n in 0..win {
            window[offset + n] =
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / win as f64).cos();
        }
        Self {
            fft: RealFftPlanner::<f64>::new().plan_fft_forward(n_fft.max(2)),
            n_fft: n_fft.max(2),
            hop: hop.max(1),
            window,
        }
    }

    /// Frequency bins per frame.
    pub fn bins(&self) -> usize {
        self.n_fft / 2 + 1
    }

    /// Frames for `samples` samples (none when the reflection would be longer than the signal).
    pub fn frames_for(&self, samples: usize) -> usize {
        let pad = self.pad();
        if samples <= pad {
            return 0;
        }
        (samples + 2 * pad).saturating_sub(self.n_fft) / self.hop + 1
    }

    /// Samples reflected at each end.
    fn pad(&self) -> usize {
        (self.n_fft - self.hop) / 2
    }

    /// The magnitudes of `samples`, `[bins, frames]` row-major, and the number of frames.
    pub fn magnitudes(&self, samples: &[f32]) -> (Vec<f32>, usize) {
        let frames = self.frames_for(samples.len());
        let bins = self.bins();
        let mut out = vec![0f32; bins * frames];
        for (t, column) in self.columns(samples, 0, frames).into_iter().enumerate() {
            for (b, value) in column.into_iter().enumerate() {
                out[b * frames + t] = value;
            }
        }
        (out, frames)
    }

    /// Frames of a signal still growing, `len` samples so far, that no later sample changes: those whose window
    /// ends inside it (the reflection at the end is only known once the signal is whole).
    pub fn settled(&self, len: usize) -> usize {
        match (len + self.pad()).checked_sub(self.n_fft) {
            Some(room) if len > self.pad() => room / self.hop + 1,
            _ => 0,
        }
    }

    /// Frames `from..to` of `samples` (reflected at both ends as the whole signal is), each `bins` magnitudes.
    pub fn columns(&self, samples: &[f32], from: usize, to: usize) -> Vec<Vec<f32>> {
        if samples.len() <= self.pad() || to <= from {
            return Vec::new();
        }
        let pad = self.pad() as isize;
        let last = samples.len() as isize - 1;
        // Reflection without repeating the edge sample: index −1 is sample 1, index n is sample n − 2.
        let at = |i: isize| -> f64 {
            let mut i = i;
            if i < 0 {
                i = -i;
            }
            if i > last {
                i = 2 * last - i;
            }
            f64::from(samples[i.clamp(0, last) as usize])
        };
        let mut input = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut scratch = self.fft.make_scratch_vec();
        (from..to)
            .map(|t| {
                let start = (t * self.hop) as isize - pad;
                for (k, value) in input.iter_mut().enumerate() {
                    *value = at(start + k as isize) * self.window[k];
                }
                match self
                    .fft
                    .process_with_scratch(&mut input, &mut spectrum, &mut scratch)
                {
                    Ok(()) => spectrum
                        .iter()
                        .take(self.bins())
                        .map(|c| (c.norm_sqr() + 1e-6).sqrt() as f32)
                        .collect(),
                    Err(_) => vec![1e-3; self.bins()],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_follow_the_reflected_uncentred_layout() {
        let plan = Spectrum::new(1024, 256, 1024);
        assert_eq!(plan.bins(), 513);
        assert_eq!(
            plan.frames_for(384),
            0,
            "the reflection needs more than 384 samples"
        );
        assert_eq!(plan.frames_for(385), 1);
        assert_eq!(plan.frames_for(22_050), 22_050 / 256);
        assert_eq!(plan.frames_for(256 * 40), 40);
        // A growing signal: frames whose window lies inside it, never more than the whole would have.
        assert_eq!(plan.settled(500), 0);
        assert_eq!(plan.settled(1_000), 2);
        assert_eq!(plan.settled(640), 1);
        for len in [2_000, 10_000, 22_050] {
            assert!(plan.settled(len) <= plan.frames_for(len));
            assert!(plan.settled(len) + 3 >= plan.frames_for(len));
        }
    }

    #[test]
    fn a_tone_peaks_in_its_bin_and_silence_is_the_floor() {
        let plan = Spectrum::new(1024, 256, 1024);
        let rate = 22_050.0;
        let bin = 40.0;
        let tone: Vec<f32> = (0..8_192)
            .map(|n| {
                (2.0 * std::f64::consts::PI * bin * rate / 1024.0 * n as f64 / rate).sin() as f32
            })
            .collect();
        let (mags, frames) = plan.magnitudes(&tone);
        let column: Vec<f32> = (0..513).map(|b| mags[b * frames + frames / 2]).collect();
        let peak = column
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
        assert_eq!(peak, 40);
        // A sine of amplitude 1 through a Hann window of 1024: half the window's sum, 256.
        assert!((column[40] - 256.0).abs() < 1.0, "{}", column[40]);
        let (quiet, _) = plan.magnitudes(&vec![0.0; 4_096]);
        assert!(quiet.iter().all(|&m| (m - 1e-3).abs() < 1e-9));
    }
}
