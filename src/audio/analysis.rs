//! Levels and an energy voice-activity detector: cloning needs "at least N seconds of speech", recognition
//! needs to split long audio at pauses.

use serde::Serialize;

use super::AudioError;

/// Levels below this are reported as this (digital silence has no finite dBFS).
pub const SILENCE_DBFS: f64 = -120.0;

/// Frame energies of speech spread over far more than this between the quiet and loud ends (10th and 95th
/// percentiles); a recording spread over less is steady noise or a tone.
const STEADY_RANGE_DB: f64 = 6.0;

/// A stretch of speech, in seconds from the start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeechSegment {
    /// Start in seconds.
    pub start: f64,
    /// End in seconds.
    pub end: f64,
}

impl SpeechSegment {
    /// Length in seconds.
    pub fn seconds(&self) -> f64 {
        self.end - self.start
    }
}

/// Tuning of the voice-activity detector. The defaults suit phone and browser recordings of one speaker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VadConfig {
    /// Analysis frame length in milliseconds.
    pub frame_ms: u32,
    /// Hop between frames in milliseconds (the time resolution of segments).
    pub hop_ms: u32,
    /// Frames quieter than this are never speech, however quiet the recording.
    pub floor_dbfs: f64,
    /// Speech must stand this far above the noise floor (the 10th percentile of frame energies).
    pub margin_db: f64,
    /// Pauses shorter than this join the segments around them (gaps between words, stop closures).
    pub min_pause_ms: u32,
    /// Segments shorter than this are dropped as clicks.
    pub min_speech_ms: u32,
}

impl Default for VadConfig {
    fn default() -> Self {
        Self {
            frame_ms: 20,
            hop_ms: 10,
            floor_dbfs: -50.0,
            margin_db: 12.0,
            min_pause_ms: 250,
            min_speech_ms: 100,
        }
    }
}

/// What `sauti audio info` reports and what cloning and recognition check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AudioStats {
    /// Total length in seconds.
    pub duration_seconds: f64,
    /// Seconds inside speech segments.
    pub speech_seconds: f64,
    /// Highest absolute sample in dB relative to full scale.
    pub peak_dbfs: f64,
    /// Root-mean-square level in dB relative to full scale.
    pub rms_dbfs: f64,
    /// Where the speech is.
    pub segments: Vec<SpeechSegment>,
}

impl AudioStats {
    /// Fail with [`AudioError::TooShort`] unless at least `minimum` seconds of speech were found.
    pub fn require_speech(&self, minimum: f64) -> Result<(), AudioError> {
        if self.speech_seconds + 1e-9 < minimum {
            return Err(AudioError::TooShort {
                what: "speech",
                seconds: self.speech_seconds,
                minimum,
            });
        }
        Ok(())
    }
}

/// Measure levels and find speech with the default detector settings.
pub fn analyse(samples: &[f32], rate: u32) -> AudioStats {
    let segments = detect_speech(samples, rate, &VadConfig::default());
    let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let mean_square = mean_square(samples);
    AudioStats {
        duration_seconds: samples.len() as f64 / f64::from(rate.max(1)),
        speech_seconds: segments
            .iter()
            .map(SpeechSegment::seconds)
            .fold(0.0, |a, b| a + b),
        peak_dbfs: amplitude_dbfs(f64::from(peak)),
        rms_dbfs: power_dbfs(mean_square),
        segments,
    }
}

/// Find speech segments: frames whose energy clears an adaptive threshold, with short pauses bridged and
/// clicks dropped.
pub fn detect_speech(samples: &[f32], rate: u32, config: &VadConfig) -> Vec<SpeechSegment> {
    let frame = (rate as usize * config.frame_ms as usize / 1000).max(1);
    let hop = (rate as usize * config.hop_ms as usize / 1000).max(1);
    if samples.len() < frame {
        return Vec::new();
    }
    let energies: Vec<f64> = (0..=(samples.len() - frame) / hop)
        .map(|i| power_dbfs(mean_square(&samples[i * hop..i * hop + frame])))
        .collect();

    let mut sorted = energies.clone();
    sorted.sort_by(f64::total_cmp);
    let noise = percentile(&sorted, 0.10);
    let loud = percentile(&sorted, 0.95);
    // Speech comes and goes: a recording without that rise and fall (hum, fan noise, a test tone) has none.
    if loud - noise < STEADY_RANGE_DB {
        return Vec::new();
    }
    // Above the noise by a margin, but never so high that a recording which is all speech loses its quieter parts.
    let threshold = (noise + config.margin_db)
        .min(loud - 10.0)
        .max(config.floor_dbfs);

    let hop_s = hop as f64 / f64::from(rate);
    let centre = frame as f64 / 2.0 / f64::from(rate);
    let mut raw: Vec<SpeechSegment> = Vec::new();
    for (i, &e) in energies.iter().enumerate() {
        if e <= threshold {
            continue;
        }
        let start = (centre + i as f64 * hop_s - hop_s / 2.0).max(0.0);
        let end = centre + i as f64 * hop_s + hop_s / 2.0;
        match raw.last_mut() {
            Some(last) if start - last.end < 1e-9 => last.end = end,
            _ => raw.push(SpeechSegment { start, end }),
        }
    }

    let min_pause = f64::from(config.min_pause_ms) / 1000.0;
    let min_speech = f64::from(config.min_speech_ms) / 1000.0;
    let total = samples.len() as f64 / f64::from(rate);
    let mut merged: Vec<SpeechSegment> = Vec::new();
    for seg in raw {
        match merged.last_mut() {
            Some(last) if seg.start - last.end < min_pause => last.end = seg.end,
            _ => merged.push(seg),
        }
    }
    merged
        .into_iter()
        .filter(|s| s.seconds() >= min_speech)
        .map(|s| SpeechSegment {
            start: s.start,
            end: s.end.min(total),
        })
        .collect()
}

fn mean_square(samples: &[f32]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples
        .iter()
        .map(|&s| f64::from(s) * f64::from(s))
        .sum::<f64>()
        / samples.len() as f64
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn power_dbfs(mean_square: f64) -> f64 {
    if mean_square > 0.0 {
        (10.0 * mean_square.log10()).max(SILENCE_DBFS)
    } else {
        SILENCE_DBFS
    }
}

fn amplitude_dbfs(amplitude: f64) -> f64 {
    if amplitude > 0.0 {
        (20.0 * amplitude.log10()).max(SILENCE_DBFS)
    } else {
        SILENCE_DBFS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burst(rate: u32, seconds: f64, amplitude: f32) -> Vec<f32> {
        let n = (f64::from(rate) * seconds) as usize;
        (0..n)
            .map(|i| {
                (i as f32 * 2.0 * std::f32::consts::PI * 200.0 / rate as f32).sin() * amplitude
            })
            .collect()
    }

    #[test]
    fn finds_bursts_between_silences() {
        let mut x = vec![0.0; 4_800];
        x.extend(burst(16_000, 0.8, 0.3));
        x.extend(vec![0.0; 8_000]);
        x.extend(burst(16_000, 0.6, 0.3));
        x.extend(vec![0.0; 4_800]);
        let stats = analyse(&x, 16_000);
        assert_eq!(stats.segments.len(), 2, "{:?}", stats.segments);
        assert!(
            (stats.speech_seconds - 1.4).abs() < 0.05,
            "{}",
            stats.speech_seconds
        );
        assert!((stats.segments[0].start - 0.3).abs() < 0.03);
        assert!((stats.segments[1].end - 2.2).abs() < 0.03);
        assert!(stats.require_speech(1.0).is_ok());
        assert!(matches!(
            stats.require_speech(3.0),
            Err(AudioError::TooShort { .. })
        ));
    }

    #[test]
    fn levels_of_silence_and_a_full_scale_square() {
        let silence = analyse(&[0.0; 1600], 16_000);
        assert_eq!(
            (silence.peak_dbfs, silence.rms_dbfs, silence.speech_seconds),
            (SILENCE_DBFS, SILENCE_DBFS, 0.0)
        );
        let square: Vec<f32> = (0..1600)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let stats = analyse(&square, 16_000);
        assert!(stats.peak_dbfs.abs() < 1e-9 && stats.rms_dbfs.abs() < 1e-9);
    }

    #[test]
    fn steady_noise_alone_is_not_speech_but_a_voice_over_it_is() {
        let mut seed = 1u32;
        let mut noise = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let quiet: Vec<f32> = (0..32_000).map(|_| noise() * 0.02).collect();
        assert!(analyse(&quiet, 16_000).speech_seconds < 0.2);
        let mut mixed = quiet.clone();
        for (m, b) in mixed[8_000..24_000].iter_mut().zip(burst(16_000, 1.0, 0.3)) {
            *m += b;
        }
        let stats = analyse(&mixed, 16_000);
        assert!(
            (stats.speech_seconds - 1.0).abs() < 0.06,
            "{:?}",
            stats.segments
        );
    }
}
