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
    if from == to || samples.is_empty() || from == 0 || to == 0 {
        return samples.to_vec();
    }
    let expected =
        ((samples.len() as u64 * u64::from(to) + u64::from(from) / 2) / u64::from(from)) as usize;
    let Ok(mut resampler) = FftFixedIn::<f32>::new(from as usize, to as usize, CHUNK, 2, 1) else {
        return linear(samples, from, to, expected);
    };
    let delay = resampler.output_delay();
    let mut out = Vec::with_capacity(expected + delay + resampler.output_frames_max());
    let mut block = resampler.output_buffer_allocate(true);
    let mut pos = 0;

    let mut push = |resampler: &mut FftFixedIn<f32>, input: Option<&[f32]>, out: &mut Vec<f32>| {
        let produced = match input {
            Some(input) if input.len() == resampler.input_frames_next() => {
                resampler.process_into_buffer(&[input], &mut block, None)
            }
            Some(input) => resampler.process_partial_into_buffer(Some(&[input]), &mut block, None),
            None => resampler.process_partial_into_buffer(None::<&[&[f32]]>, &mut block, None),
        };
        // The buffers are sized by the resampler itself, so processing cannot fail; stop cleanly if it ever does.
        match produced {
            Ok((_, written)) => {
                out.extend_from_slice(&block[0][..written]);
                written
            }
            Err(_) => 0,
        }
    };

    while samples.len() - pos >= resampler.input_frames_next() {
        let n = resampler.input_frames_next();
        push(&mut resampler, Some(&samples[pos..pos + n]), &mut out);
        pos += n;
    }
    if pos < samples.len() {
        push(&mut resampler, Some(&samples[pos..]), &mut out);
    }
    while out.len() < delay + expected {
        if push(&mut resampler, None, &mut out) == 0 {
            break;
        }
    }
    out.drain(..delay.min(out.len()));
    out.resize(expected, 0.0);
    out
}

/// Fallback for rate pairs the FFT resampler refuses: linear interpolation.
fn linear(samples: &[f32], from: u32, to: u32, expected: usize) -> Vec<f32> {
    let step = f64::from(from) / f64::from(to);
    (0..expected)
        .map(|i| {
            let x = i as f64 * step;
            let i0 = (x as usize).min(samples.len() - 1);
            let i1 = (i0 + 1).min(samples.len() - 1);
            let frac = (x - i0 as f64) as f32;
            samples[i0] * (1.0 - frac) + samples[i1] * frac
        })
        .collect()
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
