//! Voice cloning: a reference recording is checked ([`quality`]: clipping, noise, several speakers, music) and
//! analysed into a [`profile::SpeakerProfile`] (pitch, envelope brightness, speaking rate, loudness) relative to
//! a base voice, and the base voice is moved onto it. With the neural tone-colour converter installed
//! ([`tone`], [`neural`]) the base voice's output is re-voiced with the speaker's tone colour; without it the
//! built-in formant voice takes the profile directly and any other voice is converted after synthesis by PSOLA
//! pitch shifting and formant warping. The profile is what is stored; the voice is rebuilt from it at start-up.

pub mod neural;
pub mod profile;
pub mod quality;
pub mod speaker;
mod summary;
pub mod tone;

pub use summary::ClonedVoiceSummary;

use std::sync::Arc;

use self::profile::{Base, Method, SpeakerProfile};
use crate::audio::psola;
use crate::storage::ClonedVoiceRecord;
use crate::tts::catalog::{VoiceInfo, VoiceRegistry, VoiceStatus};
use crate::tts::formant::Preset;
use crate::tts::lexicon::Lexicon;
use crate::tts::{EmbeddedVoice, Synthesizer, TtsError, VoiceSettings};

/// Display name when the request gives none.
pub const DEFAULT_NAME: &str = "Cloned Voice";
/// Longest display name; longer ones are cut.
pub const MAX_NAME_CHARS: usize = 100;

/// A cloned voice, speaking at the speaker's rate (the request's `speaking_rate` multiplies it).
pub struct ClonedVoice {
    voice: Arc<dyn Synthesizer>,
    conversion: Conversion,
    rate: f32,
}

/// What is done to the base voice's output.
enum Conversion {
    /// Nothing: the formant voice took the profile.
    None,
    /// PSOLA pitch shift and formant warp by these factors.
    Psola(f32, f32),
    /// The neural tone-colour converter.
    Neural(neural::Revoice),
}

/// The formant preset of a built-in base voice.
fn preset_of(base: &str) -> Option<Preset> {
    match base {
        crate::tts::voices::ZURI => Some(Preset::female()),
        crate::tts::voices::BARAKA => Some(Preset::male()),
        _ => None,
    }
}

impl ClonedVoice {
    /// Build the voice a profile describes; `base` finds a base voice's synthesizer (or why it is unavailable),
    /// `converter` is the tone-colour converter when installed.
    pub fn new(
        profile: &SpeakerProfile,
        lexicon: &Lexicon,
        base: impl FnOnce(&str) -> Result<Arc<dyn Synthesizer>, String>,
        converter: Option<&Arc<tone::ToneConverter>>,
    ) -> Result<Self, String> {
        if profile.method == Method::Neural {
            let tones = profile
                .tone
                .as_ref()
                .ok_or("made with the neural converter, but its tone colours are missing")?;
            let converter = converter.ok_or_else(|| {
                format!(
                    "made with the tone-colour converter {:?}, which is not installed (sauti models fetch {})",
                    tones.converter,
                    neural::CONVERTER
                )
            })?;
            let voice = base(&profile.base).map_err(|why| {
                format!(
                    "built on voice {:?}, which is unavailable: {why}",
                    profile.base
                )
            })?;
            return Ok(Self {
                voice,
                conversion: Conversion::Neural(neural::Revoice::new(Arc::clone(converter), tones)?),
                rate: profile.rate,
            });
        }
        match (profile.method, preset_of(&profile.base)) {
            (Method::Formant, Some(preset)) => {
                let preset = Preset {
                    f0: (preset.f0 * profile.pitch_ratio).clamp(50.0, 450.0),
                    formant_scale: (preset.formant_scale * profile.brightness).clamp(0.85, 1.4),
                    ..preset
                };
                Ok(Self {
                    voice: Arc::new(EmbeddedVoice::new(preset).with_lexicon(lexicon.clone())),
                    conversion: Conversion::None,
                    rate: profile.rate,
                })
            }
            _ => Ok(Self {
                voice: base(&profile.base).map_err(|why| {
                    format!(
                        "built on voice {:?}, which is unavailable: {why}",
                        profile.base
                    )
                })?,
                conversion: Conversion::Psola(profile.pitch_ratio, profile.brightness),
                rate: profile.rate,
            }),
        }
    }

    fn convert(&self, samples: Vec<f32>) -> Result<Vec<f32>, TtsError> {
        match &self.conversion {
            Conversion::Psola(pitch, formant) => Ok(psola::convert(
                &samples,
                crate::audio::SAMPLE_RATE,
                *pitch,
                *formant,
            )),
            Conversion::Neural(revoice) => revoice.apply(&samples),
            Conversion::None => Ok(samples),
        }
    }

    fn adjusted(&self, settings: &VoiceSettings) -> Result<VoiceSettings, TtsError> {
        settings.validate()?;
        Ok(VoiceSettings {
            speaking_rate: (settings.speaking_rate * self.rate).clamp(0.25, 4.0),
            ..*settings
        })
    }
}

impl Synthesizer for ClonedVoice {
    fn synthesize(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<f32>, TtsError> {
        self.convert(self.voice.synthesize(text, &self.adjusted(settings)?)?)
    }

    fn pieces(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<String>, TtsError> {
        self.voice.pieces(text, &self.adjusted(settings)?)
    }

    fn synthesize_piece(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Vec<f32>, TtsError> {
        self.convert(self.voice.synthesize_piece(
            piece,
            index,
            &self.adjusted(settings)?,
            lexicon,
        )?)
    }

    /// The base voice's timings hold: the conversion keeps the length.
    fn synthesize_piece_timed(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Option<crate::tts::Timed>, TtsError> {
        let timed =
            self.voice
                .synthesize_piece_timed(piece, index, &self.adjusted(settings)?, lexicon)?;
        match timed {
            Some((samples, words)) => Ok(Some((self.convert(samples)?, words))),
            None => Ok(None),
        }
    }

    /// A neurally cloned voice hands its piece on as the converter gets through it, part by part; the others
    /// convert the piece whole.
    fn synthesize_piece_parts(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
        timed: bool,
        part: &mut dyn FnMut(Vec<f32>, Vec<crate::tts::SpokenWord>) -> bool,
    ) -> Result<bool, TtsError> {
        let adjusted = self.adjusted(settings)?;
        if let Conversion::Neural(revoice) = &self.conversion {
            let base = (self.voice.as_ref(), &adjusted, lexicon);
            return neural::piece_parts(revoice, base, (piece, index), timed, part);
        }
        let (samples, words) = match timed {
            true => match self
                .voice
                .synthesize_piece_timed(piece, index, &adjusted, lexicon)?
            {
                Some(timed) => timed,
                None => return Ok(false),
            },
            false => (
                self.voice
                    .synthesize_piece(piece, index, &adjusted, lexicon)?,
                Vec::new(),
            ),
        };
        match &self.conversion {
            Conversion::Neural(revoice) => {
                let mut words = Some(words);
                revoice.apply_parts(&samples, &mut |audio| {
                    part(audio, words.take().unwrap_or_default())
                })?;
            }
            _ => {
                part(self.convert(samples)?, words);
            }
        }
        Ok(true)
    }

    fn engine(&self) -> &'static str {
        self.voice.engine()
    }
}

/// How a cloned voice is listed to its owner.
pub fn voice_info(record: &ClonedVoiceRecord, profile: &SpeakerProfile, engine: &str) -> VoiceInfo {
    VoiceInfo {
        voice_id: record.voice_id.clone(),
        name: record.name.clone(),
        language_code: "sw".into(),
        locale: "sw-TZ".into(),
        gender: if profile.f0_median >= 155.0 { "female" } else { "male" }.into(),
        description: match &profile.tone {
            Some(tone) => format!(
                "Cloned from a reference recording ({:.0} Hz median pitch, {:.1} s of speech): {} re-voiced by {}",
                profile.f0_median, profile.speech_seconds, profile.base, tone.converter
            ),
            None => format!(
                "Cloned from a reference recording ({:.0} Hz median pitch, {:.1} s of speech), built on {}",
                profile.f0_median, profile.speech_seconds, profile.base
            ),
        },
        status: VoiceStatus::Active,
        engine: engine.into(),
        licence: None,
        status_detail: None,
        created_at: Some(record.created_at.clone()),
        similarity: profile.similarity,
        warnings: profile.warnings.clone(),
    }
}

/// How close a cloned voice sounds to its reference: the cosine similarity of the speaker embeddings of the
/// reference's speech and of the voice reading [`profile::CALIBRATION`].
pub fn similarity(
    encoder: &speaker::SpeakerEncoder,
    reference: &[f32],
    voice: &dyn Synthesizer,
) -> Result<f32, String> {
    let spoken = voice
        .synthesize(profile::CALIBRATION, &VoiceSettings::default())
        .map_err(|e| e.to_string())?;
    let a = encoder.embed(&profile::speech_only(reference))?;
    let b = encoder.embed(&spoken)?;
    Ok((speaker::cosine(&a, &b) * 1000.0).round() / 1000.0)
}

/// The display name a request asks for: trimmed, the default when blank, cut to 100 characters.
pub fn display_name(given: Option<&str>) -> String {
    let name = given
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_NAME);
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// Publish a stored voice in the registry (inactive, with the reason, when its base voice is unavailable).
pub fn publish(
    record: &ClonedVoiceRecord,
    registry: &VoiceRegistry,
    lexicon: &Lexicon,
) -> Result<SpeakerProfile, String> {
    let profile: SpeakerProfile = serde_json::from_str(&record.profile)
        .map_err(|e| format!("voice {}: unreadable profile: {e}", record.voice_id))?;
    let voice = ClonedVoice::new(
        &profile,
        lexicon,
        |id| match registry.synthesizer(id) {
            Some(found) => found,
            None => Err("no such voice on this server".into()),
        },
        registry.converter(),
    );
    let engine = voice.as_ref().map_or("formant", |v| v.voice.engine());
    let info = voice_info(record, &profile, engine);
    registry.add_cloned(
        &record.owner,
        info,
        voice.map(|v| Arc::new(v) as Arc<dyn Synthesizer>),
    );
    Ok(profile)
}

/// Make the registry's cloned voices those of `records` (the store's, which other replicas also write):
/// voices made elsewhere are published here, voices deleted elsewhere are withdrawn. `here` is what the
/// registry held before `records` were read, so a voice made here meanwhile is never withdrawn. How many
/// changed.
fn sync(
    here: Vec<(String, String)>,
    records: &[ClonedVoiceRecord],
    registry: &VoiceRegistry,
    lexicon: &Lexicon,
) -> usize {
    let here: std::collections::HashSet<(String, String)> = here.into_iter().collect();
    let stored: std::collections::HashSet<(String, String)> = records
        .iter()
        .map(|r| (r.owner.clone(), r.voice_id.clone()))
        .collect();
    let mut changed = 0;
    for record in records {
        if !here.contains(&(record.owner.clone(), record.voice_id.clone())) {
            if let Err(why) = publish(record, registry, lexicon) {
                tracing::error!(%why, "cloned voice made on another replica not published");
            }
            changed += 1;
        }
    }
    for (owner, voice_id) in here.difference(&stored) {
        registry.remove_cloned(owner, voice_id);
        changed += 1;
    }
    changed
}

/// Take up in `registry` what other replicas changed in `store`: every cloned voice, or `owner`'s alone (one
/// query either way). How many changed.
pub async fn take_up(
    store: &dyn crate::storage::Store,
    registry: &VoiceRegistry,
    owner: Option<&str>,
) -> Result<usize, crate::storage::StorageError> {
    let here: Vec<(String, String)> = registry
        .cloned_ids()
        .into_iter()
        .filter(|(of, _)| owner.is_none_or(|owner| of == owner))
        .collect();
    let records = match owner {
        Some(owner) => store.voices_of(owner).await?,
        None => store.voices().await?,
    };
    Ok(sync(here, &records, registry, registry.lexicon()))
}

/// The base voice for a speaker: the configured one; else, with the tone-colour converter installed, the first
/// installed Swahili neural voice; else the built-in voice nearer the speaker's pitch. With the converter (and
/// `method` not `dsp`) the clone is re-voiced neurally; otherwise a built-in base takes the profile directly and
/// any other is converted by signal processing.
pub fn choose_base(
    registry: &VoiceRegistry,
    configured: &str,
    method: &str,
    f0_median: f32,
) -> Result<Base, String> {
    let neural = method != "dsp" && registry.converter().is_some();
    let nearer = || match f0_median >= 155.0 {
        true => crate::tts::voices::ZURI.to_string(),
        false => crate::tts::voices::BARAKA.to_string(),
    };
    let id = match configured.is_empty() {
        false => configured.to_string(),
        true if neural => registry.neural_swahili().unwrap_or_else(nearer),
        true => nearer(),
    };
    let voice = registry
        .synthesizer(&id)
        .unwrap_or_else(|| Err("no such voice on this server".into()))
        .map_err(|why| format!("the cloning base voice {id:?} is unavailable: {why}"))?;
    let method = match (neural, method == "dsp" || preset_of(&id).is_none()) {
        (true, _) => Method::Neural,
        (false, true) => Method::Dsp,
        (false, false) => Method::Formant,
    };
    Ok(Base { id, voice, method })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_default_and_are_cut_to_100_characters() {
        assert_eq!(display_name(None), "Cloned Voice");
        assert_eq!(display_name(Some("  ")), "Cloned Voice");
        assert_eq!(display_name(Some(" Amani ")), "Amani");
        let long = "ñ".repeat(150);
        assert_eq!(display_name(Some(&long)).chars().count(), 100);
    }
}
