//! Sample-rate conversion with rubato's FFT resampler (band-limited, so nothing above 8 kHz folds back).

use rubato::{FftFixedIn, Resampler};

use super::SAMPLE_RATE;

/// Input block fed to the resampler; large enough to amortise the FFTs, small enough to stay in cache.
const CHUNK: usize = 2048;

/// Resample mono audio to 16 kHz. The output has `round(len * 16000 / rate)` samples, aligned with the input
/// (the resampler's delay is removed).
pub fn to_16k(samples: &[f32], rate: u32) -> Vec<f32> {
    resample(samples, rate, SAMPLE_RATE)
}

/// Resample mono audio between any two rates; the output length is `round(len * to / from)`.
pub fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    let mut stream = StreamResampler::new(from, to);
    stream.push(samples);
    stream.finish()
}

/// A resampler fed block by block, so a long input never has to be held at its own rate: memory follows the
/// output (16 kHz mono for uploads) whatever rate and channel count the source declares. Pushing the input in
/// any blocks gives exactly what [`resample`] gives for the whole.
pub struct StreamResampler {
    engine: Engine,
    from: u32,
    to: u32,
    /// Input samples pushed so far.
    consumed: u64,
    out: Vec<f32>,
    /// Samples at the front of `out` that are the resampler's delay, still to be dropped.
    delay_left: usize,
    /// Samples handed out by [`StreamResampler::take`] so far.
    taken: usize,
}

enum Engine {
    /// Rates are equal: samples pass through.
    Copy,
    Fft {
        resampler: Box<FftFixedIn<f32>>,
        pending: Vec<f32>,
        block: Vec<Vec<f32>>,
    },
    /// Rate pairs the FFT resampler refuses: linear interpolation over a sliding window.
    Linear {
        window: Vec<f32>,
        /// Input index of `window[0]`.
        base: u64,
        next: u64,
    },
}

impl StreamResampler {
    /// A resampler from `from` Hz to `to` Hz.
    pub fn new(from: u32, to: u32) -> Self {
        Self::with_block(from, to, CHUNK)
    }

    /// A resampler that hands out its output every 20 ms of input (live audio: the detector downstream hears
    /// speech end without waiting for a large block), at some cost in throughput.
    pub fn low_latency(from: u32, to: u32) -> Self {
        Self::with_block(from, to, (from as usize / 50).max(64))
    }

    fn with_block(from: u32, to: u32, block: usize) -> Self {
        let mut delay_left = 0;
        let engine = if from == to || from == 0 || to == 0 {
            Engine::Copy
        } else {
            match FftFixedIn::<f32>::new(from as usize, to as usize, block, 2, 1) {
                Ok(resampler) => {
                    let output = resampler.output_buffer_allocate(true);
                    delay_left = resampler.output_delay();
                    Engine::Fft {
                        resampler: Box::new(resampler),
                        pending: Vec::with_capacity(block),
                        block: output,
                    }
                }
                Err(_) => Engine::Linear {
                    window: Vec::new(),
                    base: 0,
                    next: 0,
                },
            }
        };
        Self {
            engine,
            from,
            to,
            consumed: 0,
            out: Vec::new(),
            delay_left,
            taken: 0,
        }
    }

    /// Output samples made so far (aligned with the input: the resampler's delay is not counted).
    pub fn produced(&self) -> usize {
        self.taken + self.out.len().saturating_sub(self.delay_left)
    }

    /// The output samples ready so far, handed out once (a stream sends them on as they come); what
    /// [`StreamResampler::finish`] returns afterwards is the rest.
    pub fn take(&mut self) -> Vec<f32> {
        let delay = self.delay_left.min(self.out.len());
        self.out.drain(..delay);
        self.delay_left -= delay;
        self.taken += self.out.len();
        std::mem::take(&mut self.out)
    }

    /// Feed the next input samples.
    pub fn push(&mut self, mut samples: &[f32]) {
        self.consumed += samples.len() as u64;
        let step = f64::from(self.from) / f64::from(self.to);
        match &mut self.engine {
            Engine::Copy => self.out.extend_from_slice(samples),
            Engine::Fft {
                resampler,
                pending,
                block,
            } => {
                while !samples.is_empty() {
                    let need = resampler.input_frames_next() - pending.len();
                    let take = need.min(samples.len());
                    pending.extend_from_slice(&samples[..take]);
                    samples = &samples[take..];
                    if pending.len() == resampler.input_frames_next() {
                        process(resampler, Some(pending), block, &mut self.out);
                        pending.clear();
                    }
                }
            }
            Engine::Linear { window, base, next } => {
                window.extend_from_slice(samples);
                let end = *base + window.len() as u64;
                loop {
                    let x = *next as f64 * step;
                    let i0 = x as u64;
                    if i0 + 1 >= end {
                        break;
                    }
                    let at = |i: u64| window[(i - *base) as usize];
                    let frac = (x - i0 as f64) as f32;
                    self.out.push(at(i0) * (1.0 - frac) + at(i0 + 1) * frac);
                    *next += 1;
                }
                let keep_from = ((*next as f64 * step) as u64).min(end).max(*base);
                window.drain(..(keep_from - *base) as usize);
                *base = keep_from;
            }
        }
    }

    /// Flush the input still held and return the rest of the `round(pushed * to / from)` samples, aligned
    /// with the input (all of them when nothing was taken).
    pub fn finish(mut self) -> Vec<f32> {
        let (from, to) = (u64::from(self.from.max(1)), u64::from(self.to.max(1)));
        let expected = ((self.consumed * to + from / 2) / from) as usize;
        match &mut self.engine {
            Engine::Copy => {}
            Engine::Fft {
                resampler,
                pending,
                block,
            } => {
                if !pending.is_empty() {
                    process(resampler, Some(pending), block, &mut self.out);
                }
                while self.taken + self.out.len() < self.delay_left + expected {
                    if process(resampler, None, block, &mut self.out) == 0 {
                        break;
                    }
                }
            }
            Engine::Linear { window, .. } => {
                // The last input sample holds to the end (no sample after it to interpolate towards).
                let last = window.last().copied().unwrap_or(0.0);
                let rest = expected.saturating_sub(self.taken);
                self.out.resize(rest.max(self.out.len()), last);
            }
        }
        let delay = self.delay_left.min(self.out.len());
        self.out.drain(..delay);
        self.out.resize(expected.saturating_sub(self.taken), 0.0);
        self.out
    }
}

/// Run one block (a full one, a partial last one, or `None` to flush); the number of samples written.
fn process(
    resampler: &mut FftFixedIn<f32>,
    input: Option<&[f32]>,
    block: &mut [Vec<f32>],
    out: &mut Vec<f32>,
) -> usize {
    let produced = match input {
        Some(input) if input.len() == resampler.input_frames_next() => {
            resampler.process_into_buffer(&[input], block, None)
        }
        Some(input) => resampler.process_partial_into_buffer(Some(&[input]), block, None),
        None => resampler.process_partial_into_buffer(None::<&[&[f32]]>, block, None),
    };
    // The buffers are sized by the resampler itself, so processing cannot fail; stop cleanly if it ever does.
    match produced {
        Ok((_, written)) => {
            out.extend_from_slice(&block[0][..written]);
            written
        }
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(rate: u32, hz: f32, seconds: f32) -> Vec<f32> {
        let n = (rate as f32 * seconds) as usize;
        (0..n)
            .map(|i| (2.0 * std::f32::consts::PI * hz * i as f32 / rate as f32).sin() * 0.5)
            .collect()
    }

    #[test]
    fn streaming_in_any_blocks_gives_the_same_samples() {
        for (rate, to) in [
            (44_100, 16_000),
            (48_000, 16_000),
            (16_000, 16_000),
            (7_919, 16_001),
        ] {
            let input = sine(rate, 440.0, 0.7);
            let whole = resample(&input, rate, to);
            for block in [1, 333, 2048, 5000] {
                let mut stream = StreamResampler::new(rate, to);
                input.chunks(block).for_each(|b| stream.push(b));
                assert_eq!(
                    stream.finish(),
                    whole,
                    "{rate} -> {to} in blocks of {block}"
                );
            }
        }
    }

    #[test]
    fn taking_as_it_goes_gives_the_same_samples() {
        for (rate, to) in [
            (16_000, 44_100),
            (16_000, 8_000),
            (16_000, 16_000),
            (16_000, 22_051),
        ] {
            let input = sine(rate, 440.0, 0.9);
            let whole = resample(&input, rate, to);
            for block in [1, 700, 4096] {
                let mut stream = StreamResampler::new(rate, to);
                let mut out = Vec::new();
                for b in input.chunks(block) {
                    stream.push(b);
                    out.extend(stream.take());
                    assert_eq!(out.len(), stream.produced());
                }
                out.extend(stream.finish());
                assert_eq!(out, whole, "{rate} -> {to} in blocks of {block}");
            }
        }
    }

    #[test]
    fn output_length_follows_the_rate_ratio() {
        for rate in [8_000, 11_025, 22_050, 44_100, 48_000, 96_000] {
            let input = sine(rate, 440.0, 1.3);
            let out = to_16k(&input, rate);
            let expected = (input.len() as f64 * 16_000.0 / rate as f64).round() as usize;
            assert_eq!(out.len(), expected, "rate {rate}");
        }
    }

    #[test]
    fn phase_is_preserved_so_the_delay_is_removed() {
        let input = sine(48_000, 440.0, 0.5);
        let out = to_16k(&input, 48_000);
        let reference = sine(16_000, 440.0, 0.5);
        let err: f32 = out[800..7000]
            .iter()
            .zip(&reference[800..7000])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(err < 0.01, "max error {err}");
    }

    #[test]
    fn content_above_8k_is_filtered_not_folded() {
        let input = sine(48_000, 12_000.0, 0.5);
        let out = to_16k(&input, 48_000);
        let rms = (out.iter().map(|x| x * x).sum::<f32>() / out.len() as f32).sqrt();
        assert!(rms < 0.01, "12 kHz leaked through as rms {rms}");
    }
}
