//! Pitch (F0) tracking with YIN (de Cheveigné & Kawahara, 2002): the cumulative-mean-normalised difference
//! function, the first dip under a threshold, parabolic refinement. The signal is halved to 8 kHz first (speech
//! F0 is far below 4 kHz), which quarters the work.

/// Lowest and highest pitch searched, in Hz (covers low male to high child voices).
pub const MIN_F0: f32 = 60.0;
/// See [`MIN_F0`].
pub const MAX_F0: f32 = 500.0;

/// Dips deeper than this (normalised difference) are periodic enough to call voiced.
const THRESHOLD: f32 = 0.15;
/// A frame whose best dip is shallower than this is unvoiced.
const UNVOICED: f32 = 0.35;

/// The F0 of each 10 ms frame of `samples` (mono at `rate` Hz), `None` where the frame is unvoiced or silent.
pub fn track(samples: &[f32], rate: u32) -> Vec<Option<f32>> {
    // Halve to ~8 kHz with a short average (a gentle low-pass before dropping every other sample).
    let factor = (rate / 8000).max(1) as usize;
    let low: Vec<f32> = samples
        .chunks(factor)
        .map(|c| c.iter().sum::<f32>() / c.len() as f32)
        .collect();
    let rate = rate as f32 / factor as f32;
    let hop = (rate * 0.010).round().max(1.0) as usize;
    let window = (rate * 0.025).round() as usize;
    let tau_min = (rate / MAX_F0).floor().max(2.0) as usize;
    let tau_max = (rate / MIN_F0).ceil() as usize;
    if low.len() < window + tau_max + 1 {
        return Vec::new();
    }
    let silence = 1e-6 * window as f32;
    let mut difference = vec![0f32; tau_max + 1];
    (0..=(low.len() - window - tau_max - 1) / hop)
        .map(|i| {
            let frame = &low[i * hop..i * hop + window + tau_max + 1];
            let energy: f32 = frame[..window].iter().map(|x| x * x).sum();
            if energy < silence {
                return None;
            }
            for (tau, d) in difference.iter_mut().enumerate().skip(1) {
                *d = (0..window)
                    .map(|j| {
                        let delta = frame[j] - frame[j + tau];
                        delta * delta
                    })
                    .sum();
            }
            // Cumulative-mean normalisation: d'(τ) = d(τ) · τ / Σ_{k≤τ} d(k).
            let mut running = 0f32;
            let mut normalised = vec![1f32; tau_max + 1];
            for tau in 1..=tau_max {
                running += difference[tau];
                normalised[tau] = if running > 0.0 {
                    difference[tau] * tau as f32 / running
                } else {
                    1.0
                };
            }
            let mut best = None;
            let mut tau = tau_min;
            while tau < tau_max {
                if normalised[tau] < THRESHOLD {
                    while tau + 1 < tau_max && normalised[tau + 1] < normalised[tau] {
                        tau += 1;
                    }
                    best = Some(tau);
                    break;
                }
                tau += 1;
            }
            let tau = best.unwrap_or_else(|| {
                (tau_min..tau_max)
                    .min_by(|&a, &b| normalised[a].total_cmp(&normalised[b]))
                    .unwrap_or(tau_min)
            });
            if normalised[tau] > UNVOICED {
                return None;
            }
            // Parabolic interpolation around the dip.
            let (a, b, c) = (normalised[tau - 1], normalised[tau], normalised[tau + 1]);
            let shift = if (a - 2.0 * b + c).abs() > 1e-9 {
                (0.5 * (a - c) / (a - 2.0 * b + c)).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            Some(rate / (tau as f32 + shift))
        })
        .collect()
}

/// The `q`-quantile (0–1) of the voiced frames' F0, `None` without voiced frames.
pub fn quantile(track: &[Option<f32>], q: f64) -> Option<f32> {
    let mut voiced: Vec<f32> = track.iter().flatten().copied().collect();
    if voiced.is_empty() {
        return None;
    }
    voiced.sort_by(f32::total_cmp);
    let index = ((voiced.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    Some(voiced[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(f0: f32, seconds: f32) -> Vec<f32> {
        // A glottal-like tone: harmonics with falling amplitude.
        (0..(16_000.0 * seconds) as usize)
            .map(|i| {
                let t = i as f32 / 16_000.0;
                (1..8)
                    .map(|k| (2.0 * std::f32::consts::PI * f0 * k as f32 * t).sin() / k as f32)
                    .sum::<f32>()
                    * 0.2
            })
            .collect()
    }

    #[test]
    fn tones_are_tracked_within_one_percent() {
        for f0 in [85.0, 120.0, 210.0, 330.0] {
            let median = quantile(&track(&tone(f0, 0.5), 16_000), 0.5).unwrap();
            assert!(
                (median - f0).abs() / f0 < 0.01,
                "{f0} Hz tracked as {median}"
            );
        }
    }

    #[test]
    fn silence_and_noise_are_unvoiced() {
        assert!(track(&vec![0.0; 8000], 16_000).iter().all(Option::is_none));
        let mut seed = 1u32;
        let noise: Vec<f32> = (0..8000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as f32 / 32_768.0 - 1.0
            })
            .collect();
        let voiced = track(&noise, 16_000).iter().filter(|f| f.is_some()).count();
        assert!(voiced < 5, "{voiced} noise frames called voiced");
    }
}
