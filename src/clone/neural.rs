//! Cloned voices re-voiced by the neural tone-colour converter ([`super::tone`]): the base voice speaks, and the
//! converter moves its output from the base voice's tone colour to the speaker's. Both tone colours are measured
//! once, when the voice is made, and stored in its profile with the converter's name, so a restart or another
//! replica rebuilds the same voice without the reference.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::profile::{speech_only, CALIBRATION};
use super::tone::ToneConverter;
use crate::audio::resample::{resample, StreamResampler};
use crate::audio::SAMPLE_RATE;
use crate::tts::{Synthesizer, TtsError, VoiceSettings};

/// The converter the catalog installs, named in each voice's provenance.
pub const CONVERTER: &str = "openvoice-v2";

/// The seed of the converter's posterior noise: one voice says one text the same way every time.
const SEED: u64 = 47;

/// Frames converted in a stream's first part (about a quarter of a second), then twice as many each part up to
/// [`LAST_PART`]; each part is converted with [`CONTEXT`] frames either side.
const FIRST_PART: usize = 24;
/// See [`FIRST_PART`].
const LAST_PART: usize = 192;
/// Frames read on each side of a part: the converter's reach that matters (its full reach is about 100 frames;
/// what lies beyond 32 changes the output by a few thousandths of its peak, `tests/engines/tone_colour.rs`).
const CONTEXT: usize = 32;

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

    /// [`Revoice::apply`] handed on in parts as they are converted, so a stream's first audio waits for a
    /// quarter of a second of conversion rather than the whole piece: each part's frames are converted with
    /// [`CONTEXT`] frames either side and the noise the whole would draw for them. Joined, the parts are as
    /// long as `samples`. `part` returns false when nobody listens any more, which stops the work.
    pub fn apply_parts(
        &self,
        samples: &[f32],
        part: &mut dyn FnMut(Vec<f32>) -> bool,
    ) -> Result<(), TtsError> {
        let settings = self.converter.settings();
        let (rate, hop) = (settings.sample_rate, settings.hop_length.max(1));
        let mut up = resample(samples, SAMPLE_RATE, rate);
        if up.len() <= settings.fft_size {
            part(samples.to_vec());
            return Ok(());
        }
        up.resize(up.len().div_ceil(hop) * hop, 0.0);
        let (spec, frames) = self.converter.spectrogram(&up);
        let noise = self.converter.noise(frames, SEED);
        let (bins, channels) = (spec.len() / frames.max(1), settings.channels);
        let columns = |of: &[f32], rows: usize, from: usize, to: usize| -> Vec<f32> {
            (0..rows)
                .flat_map(|r| of[r * frames + from..r * frames + to].iter().copied())
                .collect()
        };
        let mut down = StreamResampler::new(rate, SAMPLE_RATE);
        let (mut start, mut size, mut sent) = (0, FIRST_PART, 0usize);
        while start < frames {
            let end = (start + size).min(frames);
            let (from, to) = (start.saturating_sub(CONTEXT), (end + CONTEXT).min(frames));
            let converted = self
                .converter
                .convert_spectrogram(
                    columns(&spec, bins, from, to),
                    to - from,
                    columns(&noise, channels, from, to),
                    &self.tones.base,
                    &self.tones.speaker,
                )
                .map_err(|e| TtsError::Engine(format!("the tone-colour converter failed: {e}")))?;
            let own = &converted[(start - from) * hop..(end - from) * hop];
            down.push(own);
            let mut out = down.take();
            if end == frames {
                out.extend(std::mem::replace(&mut down, StreamResampler::new(1, 1)).finish());
                out.resize(samples.len().saturating_sub(sent), 0.0);
            }
            sent += out.len();
            if !out.is_empty() && !part(out) {
                return Ok(());
            }
            start = end;
            size = (size * 2).min(LAST_PART);
        }
        Ok(())
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
