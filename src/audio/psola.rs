//! Voice conversion by time-domain pitch-synchronous overlap-add (TD-PSOLA): the signal is cut into two-period
//! grains around pitch marks, and the grains are laid down again at marks spaced for the new pitch — duration
//! and spectral envelope stay. Resampling each grain before it is laid down moves the envelope (the formants)
//! by its own factor. Unvoiced stretches are copied grain for grain.

use super::pitch;

/// Grain spacing in unvoiced stretches, seconds.
const UNVOICED_STEP: f32 = 0.005;

/// `samples` (mono at `rate` Hz) with its pitch multiplied by `pitch` and its formants by `formant`, same length.
pub fn convert(samples: &[f32], rate: u32, pitch: f32, formant: f32) -> Vec<f32> {
    if samples.is_empty() || (pitch - 1.0).abs() < 1e-3 && (formant - 1.0).abs() < 1e-3 {
        return samples.to_vec();
    }
    let pitch = pitch.clamp(0.25, 4.0);
    let formant = formant.clamp(0.5, 2.0);
    let track = pitch::track(samples, rate);
    let hop = (rate as f32 * 0.010) as usize;
    // Period (samples) at a position: the pitch track's, or the unvoiced step.
    let unvoiced = (rate as f32 * UNVOICED_STEP).max(2.0);
    let period_at = |n: usize| -> (f32, bool) {
        match track.get(n / hop.max(1)).copied().flatten() {
            Some(f0) => (rate as f32 / f0, true),
            None => (unvoiced, false),
        }
    };
    let marks = analysis_marks(samples, &period_at);
    let mut out = vec![0f32; samples.len()];
    let mut weight = vec![0f32; samples.len()];
    let mut grain = Vec::new();
    let mut t = marks.first().map_or(0.0, |m| m.0 as f32);
    let mut nearest = 0usize;
    while (t as usize) < samples.len() {
        while nearest + 1 < marks.len()
            && (marks[nearest + 1].0 as f32 - t).abs() <= (marks[nearest].0 as f32 - t).abs()
        {
            nearest += 1;
        }
        let (centre, period, voiced) = marks[nearest];
        let half = period.round().max(2.0) as isize;
        // The grain: two periods around the mark, Hann-windowed, resampled by the formant factor.
        let length = ((2 * half) as f32 / if voiced { formant } else { 1.0 })
            .round()
            .max(4.0) as usize;
        grain.clear();
        for k in 0..length {
            let source = k as f32 * (2 * half) as f32 / length as f32 - half as f32;
            let position = centre as f32 + source;
            let window = 0.5 - 0.5 * (2.0 * std::f32::consts::PI * k as f32 / length as f32).cos();
            grain.push(window * sample_at(samples, position));
        }
        let start = t.round() as isize - (length / 2) as isize;
        for (k, value) in grain.iter().enumerate() {
            let index = start + k as isize;
            if index >= 0 && (index as usize) < out.len() {
                let window =
                    0.5 - 0.5 * (2.0 * std::f32::consts::PI * k as f32 / length as f32).cos();
                out[index as usize] += value;
                weight[index as usize] += window;
            }
        }
        t += if voiced { period / pitch } else { period };
    }
    for (value, w) in out.iter_mut().zip(&weight) {
        if *w > 1e-3 {
            *value /= w.max(0.5);
        }
    }
    out
}

/// Pitch marks: (position, period in samples, voiced). In voiced stretches each mark is the waveform peak
/// about one period after the last, so grains stay aligned with the glottal cycles.
fn analysis_marks(
    samples: &[f32],
    period_at: &impl Fn(usize) -> (f32, bool),
) -> Vec<(usize, f32, bool)> {
    let mut marks = Vec::new();
    let mut n = 0usize;
    while n < samples.len() {
        let (period, voiced) = period_at(n);
        let mark = if voiced {
            let from = n;
            let to = (n + period.round() as usize).min(samples.len());
            (from..to.max(from + 1))
                .max_by(|&a, &b| samples[a].total_cmp(&samples[b]))
                .unwrap_or(n)
        } else {
            n
        };
        marks.push((mark, period, voiced));
        // The next peak is searched from 0.8 periods on, so it lands about one period later.
        n = if voiced {
            mark + (period * 0.8).round().max(1.0) as usize
        } else {
            n + period.round().max(1.0) as usize
        };
    }
    marks
}

/// Linear interpolation, zero outside the signal.
fn sample_at(samples: &[f32], position: f32) -> f32 {
    if position < 0.0 {
        return 0.0;
    }
    let i = position.floor() as usize;
    let frac = position - i as f32;
    let a = samples.get(i).copied().unwrap_or(0.0);
    let b = samples.get(i + 1).copied().unwrap_or(0.0);
    a + (b - a) * frac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voice(f0: f32, seconds: f32) -> Vec<f32> {
        let rate = 16_000.0;
        (0..(rate * seconds) as usize)
            .map(|i| {
                let t = i as f32 / rate;
                (1..12)
                    .map(|k| {
                        // A fixed envelope peak near 700 Hz, like a vowel's first formant.
                        let hz = f0 * k as f32;
                        let gain = 1.0 / (1.0 + ((hz - 700.0) / 300.0).powi(2));
                        gain * (2.0 * std::f32::consts::PI * hz * t).sin()
                    })
                    .sum::<f32>()
                    * 0.2
            })
            .collect()
    }

    fn median(samples: &[f32]) -> f32 {
        pitch::quantile(&pitch::track(samples, 16_000), 0.5).unwrap()
    }

    #[test]
    fn pitch_moves_by_the_ratio_and_duration_stays() {
        let source = voice(120.0, 1.0);
        for ratio in [0.7f32, 1.5, 2.1] {
            let shifted = convert(&source, 16_000, ratio, 1.0);
            assert_eq!(shifted.len(), source.len());
            let f0 = median(&shifted);
            assert!(
                (f0 - 120.0 * ratio).abs() / (120.0 * ratio) < 0.05,
                "×{ratio}: {f0} Hz"
            );
            let peak = shifted.iter().fold(0f32, |m, s| m.max(s.abs()));
            assert!(peak > 0.05 && peak < 2.0, "level {peak}");
        }
    }

    #[test]
    fn unit_ratios_change_nothing() {
        let source = voice(150.0, 0.3);
        assert_eq!(convert(&source, 16_000, 1.0, 1.0), source);
    }
}
