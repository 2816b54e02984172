//! Speaker analysis of a reference recording (16 kHz mono): where its speech is, its pitch (YIN median and
//! range), how bright its spectral envelope is, how fast it speaks, how loud it is — each measured the same way
//! on a rendering of the base voice, so the profile says how to move the base voice towards the speaker.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use realfft::RealFftPlanner;
use serde::{Deserialize, Serialize};

use crate::audio::analysis::detect_speech;
use crate::audio::{pitch, SpeechSegment, VadConfig, SAMPLE_RATE};
use crate::tts::{Synthesizer, VoiceSettings};

/// Less speech than this cannot be cloned from.
pub const MIN_SPEECH_SECONDS: f64 = 3.0;
/// Only the first this-many seconds of speech are analysed.
pub const MAX_SPEECH_SECONDS: f64 = 30.0;

/// How a cloned voice is made from its base voice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The built-in formant synthesizer takes the profile directly (pitch, formant scale, rate).
    Formant,
    /// The base voice's output is converted after synthesis (PSOLA pitch shift and formant warp).
    Dsp,
    /// The base voice's output is re-voiced with the speaker's tone colour by the neural converter.
    Neural,
}

/// A voice to clone onto, and how.
#[derive(Clone)]
pub struct Base {
    /// Its voice id.
    pub id: String,
    /// Its synthesizer.
    pub voice: Arc<dyn Synthesizer>,
    /// How clones of it are made.
    pub method: Method,
}

/// How the base voice is moved: what `sauti` measured of the speaker and the factors derived from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeakerProfile {
    /// The voice the clone is built on (`zuri` or `baraka`, or a configured voice).
    pub base: String,
    /// How: `formant` or `dsp`.
    pub method: Method,
    /// Median F0 of the voiced frames, Hz.
    pub f0_median: f32,
    /// 10th percentile of F0, Hz.
    pub f0_low: f32,
    /// 90th percentile of F0, Hz.
    pub f0_high: f32,
    /// Spectral-envelope brightness relative to the base voice (1 = the same).
    pub brightness: f32,
    /// Syllable rate relative to the base voice (1 = the same).
    pub rate: f32,
    /// Loudness of the speech, dBFS (RMS).
    pub loudness_dbfs: f32,
    /// Seconds of speech analysed.
    pub speech_seconds: f32,
    /// Speaker median F0 over the base voice's output median F0.
    pub pitch_ratio: f32,
    /// Cosine similarity of speaker embeddings of the reference and of the cloned voice's speech, when a
    /// speaker encoder is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    /// The converter and tone colours of a voice made with the neural converter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tone: Option<super::neural::ToneProfile>,
    /// What its owner should know: a similarity under the configured floor, a marginal reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why a recording cannot be cloned from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// Not enough speech.
    #[error("the audio holds {found:.1} s of speech; at least {MIN_SPEECH_SECONDS:.0} s is needed (6 to 30 s of one speaker is recommended)")]
    TooLittleSpeech {
        /// Seconds of speech the detector found.
        found: f64,
    },
    /// Speech without a measurable pitch (whispering, noise).
    #[error("no voiced speech was found: the recording has no measurable pitch")]
    NoPitch,
    /// The base voice is unavailable, or its own speech cannot be measured (a server configuration problem).
    #[error("{0}")]
    Base(String),
    /// Clipped, noisy, several speakers or music.
    #[error(transparent)]
    Unfit(#[from] super::quality::Unfit),
}

/// Measurements of one recording.
#[derive(Debug, Clone, Copy)]
struct Measures {
    f0: [f32; 3],
    brightness: f32,
    syllable_rate: f32,
    loudness_dbfs: f32,
    speech_seconds: f32,
}

/// Analyse a reference recording against a base voice (`choose` picks it once the speaker's median F0 is
/// known).
pub fn analyse(
    samples: &[f32],
    choose: impl FnOnce(f32) -> Result<Base, String>,
) -> Result<SpeakerProfile, ProfileError> {
    let speech = speech_only(samples);
    let seconds = speech.len() as f64 / f64::from(SAMPLE_RATE);
    if seconds < MIN_SPEECH_SECONDS {
        return Err(ProfileError::TooLittleSpeech { found: seconds });
    }
    let warnings = super::quality::check(samples)?;
    let measured = measure(&speech).ok_or(ProfileError::NoPitch)?;
    let base = choose(measured.f0[1]).map_err(ProfileError::Base)?;
    let reference = base_measures(&base).ok_or_else(|| {
        ProfileError::Base(format!(
            "the base voice {:?} cannot be measured (it produced no voiced speech)",
            base.id
        ))
    })?;
    Ok(SpeakerProfile {
        base: base.id,
        method: base.method,
        f0_median: measured.f0[1],
        f0_low: measured.f0[0],
        f0_high: measured.f0[2],
        brightness: (measured.brightness / reference.brightness).clamp(0.8, 1.25),
        rate: (measured.syllable_rate / reference.syllable_rate).clamp(0.7, 1.4),
        loudness_dbfs: measured.loudness_dbfs,
        speech_seconds: measured.speech_seconds,
        pitch_ratio: (measured.f0[1] / reference.f0[1]).clamp(0.3, 3.5),
        similarity: None,
        tone: None,
        warnings,
    })
}

/// The speech of a recording (segments joined), at most [`MAX_SPEECH_SECONDS`] of it.
pub fn speech_only(samples: &[f32]) -> Vec<f32> {
    let rate = f64::from(SAMPLE_RATE);
    let segments: Vec<SpeechSegment> = detect_speech(samples, SAMPLE_RATE, &VadConfig::default());
    let mut speech = Vec::new();
    for segment in segments {
        let start = ((segment.start * rate) as usize).min(samples.len());
        let end = ((segment.end * rate) as usize).clamp(start, samples.len());
        speech.extend_from_slice(&samples[start..end]);
        if speech.len() as f64 >= MAX_SPEECH_SECONDS * rate {
            speech.truncate((MAX_SPEECH_SECONDS * rate) as usize);
            break;
        }
    }
    speech
}

fn measure(speech: &[f32]) -> Option<Measures> {
    let track = pitch::track(speech, SAMPLE_RATE);
    let f0 = [
        pitch::quantile(&track, 0.1)?,
        pitch::quantile(&track, 0.5)?,
        pitch::quantile(&track, 0.9)?,
    ];
    let mean_square = speech
        .iter()
        .map(|s| f64::from(*s) * f64::from(*s))
        .sum::<f64>()
        / speech.len().max(1) as f64;
    Some(Measures {
        f0,
        brightness: brightness(speech, &track),
        syllable_rate: syllable_rate(speech),
        loudness_dbfs: (10.0 * mean_square.max(1e-12).log10()) as f32,
        speech_seconds: speech.len() as f32 / SAMPLE_RATE as f32,
    })
}

/// Spectral centroid (Hz, 200–4,000 Hz) of the voiced frames' long-term average spectrum: where the formants
/// sit, as one number.
fn brightness(speech: &[f32], track: &[Option<f32>]) -> f32 {
    const N: usize = 512;
    let fft = RealFftPlanner::<f32>::new().plan_fft_forward(N);
    let mut input = fft.make_input_vec();
    let mut output = fft.make_output_vec();
    let mut average = vec![0f64; N / 2 + 1];
    let hop = SAMPLE_RATE as usize / 100;
    for (i, f0) in track.iter().enumerate() {
        if f0.is_none() || i * hop + N > speech.len() {
            continue;
        }
        for (k, value) in input.iter_mut().enumerate() {
            let window = 0.5 - 0.5 * (2.0 * std::f32::consts::PI * k as f32 / N as f32).cos();
            *value = speech[i * hop + k] * window;
        }
        if fft.process(&mut input, &mut output).is_err() {
            continue;
        }
        for (a, c) in average.iter_mut().zip(&output) {
            *a += f64::from(c.norm_sqr());
        }
    }
    let bin_hz = SAMPLE_RATE as f64 / N as f64;
    let (mut weighted, mut total) = (0f64, 0f64);
    for (k, power) in average.iter().enumerate() {
        let hz = k as f64 * bin_hz;
        if (200.0..=4000.0).contains(&hz) {
            let magnitude = power.sqrt();
            weighted += hz * magnitude;
            total += magnitude;
        }
    }
    if total > 0.0 {
        (weighted / total) as f32
    } else {
        1000.0
    }
}

/// Syllables per second: peaks of the smoothed loudness contour at least 100 ms apart and 3 dB above the
/// dip before them.
fn syllable_rate(speech: &[f32]) -> f32 {
    let frame = SAMPLE_RATE as usize / 100;
    let levels: Vec<f32> = speech
        .chunks(frame)
        .map(|c| {
            let ms = c.iter().map(|x| x * x).sum::<f32>() / c.len() as f32;
            10.0 * ms.max(1e-10).log10()
        })
        .collect();
    // Smooth over 50 ms.
    let smooth: Vec<f32> = (0..levels.len())
        .map(|i| {
            let lo = i.saturating_sub(2);
            let hi = (i + 3).min(levels.len());
            levels[lo..hi].iter().sum::<f32>() / (hi - lo) as f32
        })
        .collect();
    let mut peaks = 0usize;
    let mut dip = f32::INFINITY;
    let mut last_peak: Option<usize> = None;
    for i in 1..smooth.len().saturating_sub(1) {
        dip = dip.min(smooth[i]);
        let is_peak = smooth[i] >= smooth[i - 1] && smooth[i] > smooth[i + 1];
        if is_peak && smooth[i] - dip >= 3.0 && last_peak.is_none_or(|p| i - p >= 10) {
            peaks += 1;
            last_peak = Some(i);
            dip = smooth[i];
        }
    }
    peaks as f32 / (speech.len() as f32 / SAMPLE_RATE as f32).max(0.1)
}

/// Swahili read by each base voice, measured once: the yardstick the speaker is compared against (and what a
/// cloned voice says to be compared with its reference).
pub const CALIBRATION: &str = "Habari za asubuhi. Jina langu ni Amani na ninaishi Dar es Salaam. Leo ninataka \
kutuma pesa kwa mama yangu kijijini, halafu nitaenda sokoni kununua matunda na mboga. Asante sana kwa msaada wako.";

/// A base voice's measures on [`CALIBRATION`], made once per voice.
fn base_measures(base: &Base) -> Option<Measures> {
    static MEASURED: OnceLock<Mutex<HashMap<String, Measures>>> = OnceLock::new();
    let cache = MEASURED.get_or_init(Default::default);
    if let Some(found) = cache.lock().ok()?.get(&base.id) {
        return Some(*found);
    }
    let audio = base
        .voice
        .synthesize(CALIBRATION, &VoiceSettings::default())
        .ok()?;
    let measured = measure(&speech_only(&audio))?;
    cache.lock().ok()?.insert(base.id.clone(), measured);
    Some(measured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::EmbeddedVoice;

    fn baraka() -> Base {
        Base {
            id: "baraka".into(),
            voice: Arc::new(EmbeddedVoice::baraka()),
            method: Method::Formant,
        }
    }

    #[test]
    fn a_base_voice_measured_against_itself_is_unchanged() {
        let audio = EmbeddedVoice::baraka()
            .synthesize(CALIBRATION, &VoiceSettings::default())
            .unwrap();
        let profile = analyse(&audio, |_| Ok(baraka())).unwrap();
        assert_eq!(profile.base, "baraka");
        assert!((profile.pitch_ratio - 1.0).abs() < 0.01, "{profile:?}");
        assert!((profile.rate - 1.0).abs() < 0.01 && (profile.brightness - 1.0).abs() < 0.01);
    }

    #[test]
    fn too_little_speech_says_how_much_was_found() {
        let audio = EmbeddedVoice::zuri()
            .synthesize("Habari.", &VoiceSettings::default())
            .unwrap();
        match analyse(&audio, |_| Ok(baraka())) {
            Err(ProfileError::TooLittleSpeech { found }) => assert!(found < 3.0 && found > 0.1),
            other => panic!("{other:?}"),
        }
    }
}
