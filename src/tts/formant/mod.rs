//! The embedded Swahili voice: a rule-based formant synthesizer in the Klatt tradition. It needs no model
//! files, renders far faster than real time on one core, and sounds like a clear, robotic speaker.

mod phones;
mod plan;
mod render;

use crate::tts::g2p::{Phoneme, Utterance};
use crate::tts::VoiceSettings;

/// Speaker characteristics of a formant voice.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Mean speaking pitch in Hz.
    pub f0: f32,
    /// Formant frequencies are multiplied by this (shorter vocal tracts have higher formants).
    pub formant_scale: f32,
    /// Formant bandwidths are multiplied by this.
    pub bandwidth_scale: f32,
    /// Fraction of each glottal period the glottis is open.
    pub open_quotient: f32,
    /// One-pole low-pass on the source (0 = bright, 0.9 = very soft).
    pub tilt: f32,
    /// Breath noise mixed into voicing.
    pub breathiness: f32,
    /// Period-to-period pitch variation (fraction).
    pub jitter: f32,
}

impl Preset {
    /// A higher, lighter voice (adult female).
    pub fn female() -> Self {
        Self {
            f0: 205.0,
            formant_scale: 1.15,
            bandwidth_scale: 1.15,
            open_quotient: 0.65,
            tilt: 0.45,
            breathiness: 0.08,
            jitter: 0.004,
        }
    }

    /// A lower, fuller voice (adult male).
    pub fn male() -> Self {
        Self {
            f0: 112.0,
            formant_scale: 1.0,
            bandwidth_scale: 1.0,
            open_quotient: 0.55,
            tilt: 0.3,
            breathiness: 0.04,
            jitter: 0.004,
        }
    }
}

/// A formant voice: a preset and the synthesizer that renders it.
#[derive(Debug, Clone)]
pub struct FormantVoice {
    preset: Preset,
}

impl FormantVoice {
    /// A voice with the given speaker preset.
    pub fn new(preset: Preset) -> Self {
        Self { preset }
    }

    /// The speaker preset.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }

    /// Render phrases of phonemes to 16 kHz mono samples. Deterministic for a given `seed`.
    pub fn render(&self, utterance: &Utterance, settings: &VoiceSettings, seed: u64) -> Vec<f32> {
        if utterance.phrases.is_empty() {
            return Vec::new();
        }
        let (frames, _) = plan::plan(utterance, &self.preset, settings, seed);
        render::render(&frames, &self.preset, seed)
    }

    /// [`Self::render`], with when each word of the utterance is spoken (seconds from the start, in order).
    pub fn render_timed(
        &self,
        utterance: &Utterance,
        settings: &VoiceSettings,
        seed: u64,
    ) -> (Vec<f32>, Vec<(f64, f64)>) {
        if utterance.phrases.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let (frames, words) = plan::plan(utterance, &self.preset, settings, seed);
        let seconds = |ms: f32| f64::from(ms) / 1000.0;
        let words = words
            .into_iter()
            .map(|(a, b)| (seconds(a), seconds(b)))
            .collect();
        (render::render(&frames, &self.preset, seed), words)
    }

    /// A vowel held for `seconds` on a level pitch: for checking the voice's formants and pitch.
    pub fn sustained_vowel(&self, vowel: Phoneme, seconds: f32) -> Vec<f32> {
        let frames = plan::sustained(vowel, seconds.max(0.05) * 1000.0, &self.preset);
        render::render(&frames, &self.preset, 0)
    }
}

/// Output sample rate of the formant voice.
pub const SAMPLE_RATE: u32 = render::RATE as u32;
