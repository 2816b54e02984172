//! What is wrong with a reference recording, before a voice is made from it: clipping, noise, more than one
//! speaker, music. Each measure has a line past which the recording is refused (a 422 naming the problem) and a
//! lower one past which the voice is made with a warning.
//!
//! - **Clipping**: samples in runs of three or more at the top of the range (|x| ≥ 0.98 after decoding), as a
//!   share of the speech.
//! - **Noise**: the signal-to-noise ratio, the speech frames' level (their 90th percentile, 20 ms RMS) over the
//!   noise floor (the median of the frames outside speech, or the quietest tenth when there are too few).
//! - **Several speakers**: the median pitch of each stretch of speech; stretches gathered around two pitches more
//!   than 45 % apart, the smaller group holding a quarter of the voiced time or more, are two voices.
//! - **Music**: the share of voiced time spent on steady notes (150 ms or more within 2 % of one pitch); speech
//!   glides between syllables, instruments and sung notes hold.

use crate::audio::analysis::detect_speech;
use crate::audio::{pitch, VadConfig, SAMPLE_RATE};

/// A recording that cannot be cloned from, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unfit {
    /// Too much of it at full scale.
    #[error("the recording is clipped: {percent:.1}% of its speech is at full scale; record it again at a lower level")]
    Clipped {
        /// Share of speech samples in clipped runs, percent.
        percent: f32,
    },
    /// Too noisy.
    #[error("the recording is too noisy: the speech is {snr_db:.0} dB above the background, and at least {MIN_SNR_DB:.0} dB is needed; record it somewhere quieter")]
    Noisy {
        /// The estimated signal-to-noise ratio, dB.
        snr_db: f32,
    },
    /// Two or more voices.
    #[error("the recording holds more than one speaker (voices around {low:.0} Hz and {high:.0} Hz); use a recording of one speaker alone")]
    Speakers {
        /// The lower voice's median pitch, Hz.
        low: f32,
        /// The higher voice's median pitch, Hz.
        high: f32,
    },
    /// Music rather than speech.
    #[error("the recording sounds like music, not speech ({percent:.0}% of it is held notes); use a recording of one speaker talking")]
    Music {
        /// Share of voiced time on steady notes, percent.
        percent: f32,
    },
}

/// Refused below this signal-to-noise ratio, dB.
pub const MIN_SNR_DB: f32 = 10.0;
/// Warned below this one.
const WARN_SNR_DB: f32 = 20.0;
/// Refused above this share of clipped speech, and warned above the second.
const CLIPPED: (f32, f32) = (0.01, 0.001);
/// Refused above this share of voiced time on steady notes, warned above the second.
const MUSIC: (f32, f32) = (0.5, 0.3);
/// Pitches this far apart (ratio) are two voices.
const APART: f32 = 1.45;

/// At most this much of a recording is checked (the analysis reads at most 30 s of its speech).
const CHECKED_SECONDS: usize = 60;

/// Check a reference (16 kHz mono; its first minute): why it cannot be used, or the warnings for what is
/// marginal.
pub fn check(samples: &[f32]) -> Result<Vec<String>, Unfit> {
    let samples = &samples[..samples.len().min(CHECKED_SECONDS * SAMPLE_RATE as usize)];
    let mut warnings = Vec::new();
    let segments = detect_speech(samples, SAMPLE_RATE, &VadConfig::default());
    let rate = f64::from(SAMPLE_RATE);
    let spans: Vec<(usize, usize)> = segments
        .iter()
        .map(|s| {
            let start = ((s.start * rate) as usize).min(samples.len());
            (start, ((s.end * rate) as usize).clamp(start, samples.len()))
        })
        .collect();

    let clipped = clipped_share(samples, &spans);
    if clipped > CLIPPED.0 {
        return Err(Unfit::Clipped {
            percent: clipped * 100.0,
        });
    }
    if clipped > CLIPPED.1 {
        warnings.push(format!(
            "{:.2}% of the reference's speech is clipped; the voice may sound harsh",
            clipped * 100.0
        ));
    }

    if let Some(snr) = snr_db(samples, &spans) {
        if snr < MIN_SNR_DB {
            return Err(Unfit::Noisy { snr_db: snr });
        }
        if snr < WARN_SNR_DB {
            warnings.push(format!(
                "the reference is noisy (speech {snr:.0} dB above the background); the voice may carry the noise"
            ));
        }
    }

    let tracks: Vec<Vec<Option<f32>>> = spans
        .iter()
        .map(|&(start, end)| pitch::track(&samples[start..end], SAMPLE_RATE))
        .collect();
    let steady = steady_share(&tracks);
    if steady > MUSIC.0 {
        return Err(Unfit::Music {
            percent: steady * 100.0,
        });
    }
    if steady > MUSIC.1 {
        warnings.push(format!(
            "{:.0}% of the reference is held notes; if it is sung or has music behind it, the voice will suffer",
            steady * 100.0
        ));
    }
    if let Some((low, high)) = two_voices(&tracks) {
        return Err(Unfit::Speakers { low, high });
    }
    Ok(warnings)
}

/// Share of the speech's samples that lie in runs of three or more at full scale.
fn clipped_share(samples: &[f32], spans: &[(usize, usize)]) -> f32 {
    let (mut clipped, mut total) = (0usize, 0usize);
    for &(start, end) in spans {
        let mut run = 0usize;
        for &s in &samples[start..end] {
            if s.abs() >= 0.98 {
                run += 1;
            } else {
                if run >= 3 {
                    clipped += run;
                }
                run = 0;
            }
        }
        if run >= 3 {
            clipped += run;
        }
        total += end - start;
    }
    clipped as f32 / total.max(1) as f32
}

/// Speech level over the noise floor, dB (`None` without speech).
fn snr_db(samples: &[f32], spans: &[(usize, usize)]) -> Option<f32> {
    const FRAME: usize = 320;
    let level = |frame: &[f32]| {
        let mean = frame
            .iter()
            .map(|s| f64::from(*s) * f64::from(*s))
            .sum::<f64>()
            / frame.len() as f64;
        (10.0 * (mean + 1e-12).log10()) as f32
    };
    let inside = |i: usize| spans.iter().any(|&(s, e)| i >= s && i + FRAME <= e);
    let (mut speech, mut rest): (Vec<f32>, Vec<f32>) = (Vec::new(), Vec::new());
    let mut all = Vec::new();
    for (n, frame) in samples.chunks_exact(FRAME).enumerate() {
        let db = level(frame);
        all.push(db);
        match inside(n * FRAME) {
            true => speech.push(db),
            false => rest.push(db),
        }
    }
    if speech.is_empty() {
        return None;
    }
    let at = |values: &mut Vec<f32>, q: f32| {
        values.sort_by(f32::total_cmp);
        values[((values.len() - 1) as f32 * q).round() as usize]
    };
    let signal = at(&mut speech, 0.9);
    // Half a second outside speech gives the floor; otherwise the quietest tenth of everything.
    let floor = match rest.len() >= 25 {
        true => at(&mut rest, 0.5),
        false => at(&mut all, 0.1),
    };
    // Digital silence has no noise to speak of.
    Some((signal - floor.max(-100.0)).min(99.0))
}

/// Share of voiced time (10 ms frames) on steady notes: 15 frames or more within 2 % of their first.
fn steady_share(tracks: &[Vec<Option<f32>>]) -> f32 {
    let (mut steady, mut voiced) = (0usize, 0usize);
    for track in tracks {
        let mut i = 0;
        while i < track.len() {
            let Some(first) = track[i] else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            while j < track.len() && track[j].is_some_and(|f| (f / first - 1.0).abs() <= 0.02) {
                j += 1;
            }
            let run = j - i;
            voiced += run;
            if run >= 15 {
                steady += run;
            }
            i = j;
        }
    }
    steady as f32 / voiced.max(1) as f32
}

/// Two voices: the stretches' median pitches split into two groups far apart, each with a quarter of the
/// voiced time or more; their medians.
fn two_voices(tracks: &[Vec<Option<f32>>]) -> Option<(f32, f32)> {
    // (median pitch, voiced frames) of each stretch with half a second of voicing.
    let mut stretches: Vec<(f32, usize)> = tracks
        .iter()
        .filter_map(|t| {
            let voiced = t.iter().flatten().count();
            (voiced >= 50).then(|| Some((pitch::quantile(t, 0.5)?, voiced)))?
        })
        .collect();
    if stretches.len() < 2 {
        return None;
    }
    stretches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = stretches.iter().map(|s| s.1).sum();
    // The widest gap between neighbouring pitches splits the stretches into two groups.
    let (cut, _) = stretches
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1].0 / w[0].0))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = stretches.split_at(cut);
    let weight = |group: &[(f32, usize)]| group.iter().map(|s| s.1).sum::<usize>();
    let centre = |group: &[(f32, usize)]| {
        group.iter().map(|s| s.0 * s.1 as f32).sum::<f32>() / weight(group).max(1) as f32
    };
    let smaller = weight(low).min(weight(high));
    let (a, b) = (centre(low), centre(high));
    (b / a >= APART && smaller * 4 >= total).then_some((a, b))
}

#[cfg(test)]
mod tests;
