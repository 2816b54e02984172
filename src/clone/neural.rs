//! Cloned voices re-voiced by the neural tone-colour converter ([`super::tone`]): the base voice speaks, and the
//! converter moves its output from the base voice's tone colour to the speaker's. Both tone colours are measured
//! once, when the voice is made, and stored in its profile with the converter's name, so a restart or another
//! replica rebuilds the same voice without the reference.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::profile::{speech_only, CALIBRATION};
use super::tone::ToneConverter;
use crate::audio::resample::resample;
use crate::audio::SAMPLE_RATE;
use crate::tts::{Synthesizer, TtsError, VoiceSettings};

/// The converter the catalog installs, named in each voice's provenance.
pub const CONVERTER: &str = "openvoice-v2";

/// The seed of the converter's posterior noise: one voice says one text the same way every time.
const SEED: u64 = 47;

/// What a neurally cloned voice needs beyond its base voice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToneProfile {
    /// The converter that made the tone colours (the catalog entry), e.g. `openvoice-v2`.
    pub converter: String,
    /// The speaker's tone colour, from the reference's speech.
    pub speaker: Vec<f32>,
    /// The base voice's own tone colour, from its reading of the calibration text.
    pub base: Vec<f32>,
}

/// Measure the speaker's and the base voice's tone colours.
pub fn measure(
    converter: &ToneConverter,
    reference: &[f32],
    base: &dyn Synthesizer,
) -> Result<ToneProfile, String> {
    let rate = converter.settings().sample_rate;
    let speech = resample(&speech_only(reference), SAMPLE_RATE, rate);
    let spoken = base
        .synthesize(CALIBRATION, &VoiceSettings::default())
        .map_err(|e| format!("the base voice cannot read the calibration text: {e}"))?;
    let own = resample(&spoken, SAMPLE_RATE, rate);
    Ok(ToneProfile {
        converter: CONVERTER.into(),
        speaker: converter.tone(&speech)?,
        base: converter.tone(&own)?,
    })
}

/// A base voice's output re-voiced with a speaker's tone colour.
pub struct Revoice {
    converter: Arc<ToneConverter>,
    tones: ToneProfile,
}

impl Revoice {
    /// The conversion a profile describes (its tone colours must fit the converter).
    pub fn new(converter: Arc<ToneConverter>, tones: &ToneProfile) -> Result<Self, String> {
        let size = converter.settings().tone_size;
        if tones.speaker.len() != size || tones.base.len() != size {
            return Err(format!(
                "its tone colours were made by another converter ({size} values expected)"
            ));
        }
        Ok(Self {
            converter,
            tones: tones.clone(),
        })
    }

    /// `samples` (16 kHz) in the speaker's tone colour, the same length, so word times hold.
    pub fn apply(&self, samples: &[f32]) -> Result<Vec<f32>, TtsError> {
        let settings = self.converter.settings();
        let (rate, hop) = (settings.sample_rate, settings.hop_length.max(1));
        let mut up = resample(samples, SAMPLE_RATE, rate);
        if up.len() <= settings.fft_size {
            return Ok(samples.to_vec());
        }
        // Whole frames: the converter gives a hop of audio per frame.
        up.resize(up.len().div_ceil(hop) * hop, 0.0);
        let converted = self
            .converter
            .convert(&up, &self.tones.base, &self.tones.speaker, SEED)
            .map_err(|e| TtsError::Engine(format!("the tone-colour converter failed: {e}")))?;
        let mut down = resample(&converted, rate, SAMPLE_RATE);
        down.resize(samples.len(), 0.0);
        Ok(down)
    }
}

/// The configured converter (`clone.converter`, relative to `models.dir`), if installed; without it clones are
/// made by signal processing, as the log says.
pub fn load_converter(settings: &crate::config::Settings) -> Option<Arc<ToneConverter>> {
    let configured = &settings.clone.converter;
    if configured.as_os_str().is_empty() || settings.clone.method == "dsp" {
        return None;
    }
    let dir = settings.models.dir.join(configured);
    match ToneConverter::load(&dir, &settings.models, 2) {
        Ok(converter) => {
            tracing::info!(model = %dir.display(), "tone-colour converter ready: new clones are re-voiced neurally");
            Some(Arc::new(converter))
        }
        Err(error) => {
            tracing::info!(%error, "no tone-colour converter: clones are made by signal processing (sauti models fetch {CONVERTER})");
            None
        }
    }
}
