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

    /// [`Revoice::apply`] handed on in parts as they are converted (see [`Streaming`]). `part` returns false
    /// when nobody listens any more, which stops the work.
    pub fn apply_parts(
        &self,
        samples: &[f32],
        part: &mut dyn FnMut(Vec<f32>) -> bool,
    ) -> Result<(), TtsError> {
        let mut stream = self.streaming();
        if stream.push(samples, part)? {
            stream.finish(part)?;
        }
        Ok(())
    }

    /// A conversion fed the base voice's audio as the voice makes it.
    pub fn streaming(&self) -> Streaming<'_> {
        let settings = self.converter.settings();
        Streaming {
            revoice: self,
            base: Vec::new(),
            up: StreamResampler::new(SAMPLE_RATE, settings.sample_rate),
            signal: Vec::new(),
            columns: Vec::new(),
            noise: self.converter.noise_draws(SEED),
            draws: Vec::new(),
            down: StreamResampler::new(settings.sample_rate, SAMPLE_RATE),
            start: 0,
            size: FIRST_PART,
            sent: 0,
        }
    }
}

/// A piece re-voiced as the base voice makes it, so a stream's first audio waits for a quarter of a second of
/// conversion rather than the whole piece: frames are converted in parts (the first of [`FIRST_PART`] frames,
/// then twice as many each time up to [`LAST_PART`]), each with [`CONTEXT`] frames either side and the noise
/// the whole would draw for its frames, once the base voice's audio reaches past them. Joined, the parts are as
/// long as the base audio and equal the piece converted whole up to what lies beyond the context.
pub struct Streaming<'a> {
    revoice: &'a Revoice,
    /// The base voice's audio so far (16 kHz).
    base: Vec<f32>,
    up: StreamResampler,
    /// The base audio at the converter's rate, so far.
    signal: Vec<f32>,
    /// Spectrogram frames no later audio changes.
    columns: Vec<Vec<f32>>,
    noise: super::tone::Noise,
    /// The noise of each frame in `columns`.
    draws: Vec<Vec<f32>>,
    down: StreamResampler,
    /// The next frame to convert, and how many the next part takes.
    start: usize,
    size: usize,
    /// Samples handed on so far (16 kHz).
    sent: usize,
}

impl Streaming<'_> {
    /// More of the base voice's audio: converts and hands on every part the audio now reaches past. False when
    /// nobody listens any more.
    pub fn push(
        &mut self,
        samples: &[f32],
        part: &mut dyn FnMut(Vec<f32>) -> bool,
    ) -> Result<bool, TtsError> {
        self.base.extend_from_slice(samples);
        self.up.push(samples);
        self.signal.extend(self.up.take());
        let settled = self.revoice.converter.spectrum_settled(self.signal.len());
        self.extend(settled);
        while self.start + self.size + CONTEXT <= self.columns.len() {
            let end = self.start + self.size;
            let out = self.convert(end)?;
            if !out.is_empty() && !part(out) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The base voice's piece is whole: the rest of it, the parts joined as long as the base audio.
    pub fn finish(mut self, part: &mut dyn FnMut(Vec<f32>) -> bool) -> Result<(), TtsError> {
        let settings = self.revoice.converter.settings();
        let (rate, hop) = (settings.sample_rate, settings.hop_length.max(1));
        let up = std::mem::replace(&mut self.up, StreamResampler::new(rate, rate));
        self.signal.extend(up.finish());
        if self.start == 0 && self.signal.len() <= settings.fft_size {
            part(std::mem::take(&mut self.base));
            return Ok(());
        }
        // Whole frames: the converter gives a hop of audio per frame.
        self.signal
            .resize(self.signal.len().div_ceil(hop) * hop, 0.0);
        let frames = self.revoice.converter.spectrum_frames(self.signal.len());
        self.extend(frames);
        let sent = self.sent;
        let mut rest = Vec::new();
        while self.start < frames {
            let end = (self.start + self.size).min(frames);
            rest.extend(self.convert(end)?);
        }
        let down = std::mem::replace(&mut self.down, StreamResampler::new(rate, rate));
        rest.extend(down.finish());
        rest.resize(self.base.len().saturating_sub(sent), 0.0);
        if !rest.is_empty() {
            part(rest);
        }
        Ok(())
    }

    /// Compute the spectrogram and draw the noise up to frame `frames`.
    fn extend(&mut self, frames: usize) {
        if frames <= self.columns.len() {
            return;
        }
        let new = self
            .revoice
            .converter
            .spectrum_columns(&self.signal, self.columns.len(), frames);
        for column in new {
            self.columns.push(column);
            self.draws.push(self.noise.next_frame());
        }
    }

    /// Convert frames `start..end` with their context; their samples at 16 kHz as far as resampled.
    fn convert(&mut self, end: usize) -> Result<Vec<f32>, TtsError> {
        let converter = &self.revoice.converter;
        let settings = converter.settings();
        let hop = settings.hop_length.max(1);
        let (start, known) = (self.start, self.columns.len());
        let (from, to) = (start.saturating_sub(CONTEXT), (end + CONTEXT).min(known));
        let bins = self.columns.first().map_or(0, Vec::len);
        let converted = converter
            .convert_spectrogram(
                super::tone::rows(&self.columns[from..to], bins),
                to - from,
                super::tone::rows(&self.draws[from..to], settings.channels),
                &self.revoice.tones.base,
                &self.revoice.tones.speaker,
            )
            .map_err(|e| TtsError::Engine(format!("the tone-colour converter failed: {e}")))?;
        let own = converted
            .get((start - from) * hop..(end - from) * hop)
            .ok_or_else(|| {
                TtsError::Engine("the tone-colour converter gave too little audio".into())
            })?;
        self.down.push(own);
        let out = self.down.take();
        self.sent += out.len();
        self.start = end;
        self.size = (self.size * 2).min(LAST_PART);
        Ok(out)
    }
}

/// A base voice's piece (its synthesizer, settings and lexicon; the piece and its index) re-voiced part by part
/// as the voice makes it; its words, when `timed`, go with the first converted part. `Ok(false)` when words were
/// asked of a voice that cannot time them.
pub fn piece_parts(
    revoice: &Revoice,
    (voice, settings, lexicon): (
        &dyn Synthesizer,
        &VoiceSettings,
        Option<&crate::tts::lexicon::Lexicon>,
    ),
    (piece, index): (&str, usize),
    timed: bool,
    part: &mut dyn FnMut(Vec<f32>, Vec<crate::tts::SpokenWord>) -> bool,
) -> Result<bool, TtsError> {
    let mut stream = revoice.streaming();
    let (mut words, mut failed, mut listening) = (None, None, true);
    let mut hand = |audio: Vec<f32>, words: &mut Option<Vec<crate::tts::SpokenWord>>| {
        part(audio, words.take().unwrap_or_default())
    };
    let timed_ok = voice.synthesize_piece_parts(
        piece,
        index,
        settings,
        lexicon,
        timed,
        &mut |samples, spoken| {
            if words.is_none() {
                words = Some(spoken);
            }
            match stream.push(&samples, &mut |audio| hand(audio, &mut words)) {
                Ok(more) => listening = more,
                Err(error) => failed = Some(error),
            }
            listening && failed.is_none()
        },
    )?;
    if let Some(error) = failed {
        return Err(error);
    }
    if timed_ok && listening {
        stream.finish(&mut |audio| hand(audio, &mut words))?;
    }
    Ok(timed_ok)
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
