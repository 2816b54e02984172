//! Audio as callers ask for it: synthesised 16 kHz mono speech encoded as WAV, raw PCM, G.711 μ-law and A-law
//! (telephony), MP3 (LAME), Ogg Opus (voice notes) or FLAC, at the rate the format names. Formats are named as
//! ElevenLabs names them (`mp3_44100_128`, `pcm_24000`, `ulaw_8000`, `opus_48000_64`, …); OpenAI's names
//! (`mp3`, `opus`, `flac`, `wav`, `pcm`) map onto them.

mod flac;
pub mod g711;
mod mp3;
mod ogg_opus;
mod stream;

pub use stream::StreamEncoder;

use super::encode::{extend_pcm16, to_i16, wav_header};
use super::resample::resample;
use super::SAMPLE_RATE;
use crate::cancel::Cancel;

/// How the samples are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// RIFF WAV, 16-bit PCM.
    Wav,
    /// Raw 16-bit little-endian PCM, no header.
    Pcm,
    /// G.711 μ-law, 8 bits a sample, no header.
    Ulaw,
    /// G.711 A-law, 8 bits a sample, no header.
    Alaw,
    /// MPEG-1/2 Layer III, constant bitrate.
    Mp3,
    /// Opus in Ogg (RFC 7845); decoders play it at 48 kHz.
    Opus,
    /// FLAC, 16 bits.
    Flac,
}

/// One output format: codec, sample rate and (for MP3 and Opus) bitrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputFormat {
    /// The codec.
    pub codec: Codec,
    /// Samples per second of the encoded audio (Opus: the rate decoders play it at, always 48 kHz).
    pub rate: u32,
    /// Kilobits per second (MP3, Opus).
    pub kbps: Option<u32>,
}

/// Rates of the WAV and PCM formats.
const PCM_RATES: [u32; 7] = [8_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000];
/// MP3 rates and bitrates offered.
const MP3: [(u32, u32); 7] = [
    (22_050, 32),
    (24_000, 48),
    (44_100, 32),
    (44_100, 64),
    (44_100, 96),
    (44_100, 128),
    (44_100, 192),
];
/// Opus bitrates offered (at 48 kHz).
const OPUS_KBPS: [u32; 5] = [32, 64, 96, 128, 192];
/// FLAC rates offered.
const FLAC_RATES: [u32; 4] = [16_000, 22_050, 24_000, 44_100];

impl OutputFormat {
    /// The WAV the seed paths return: 16 kHz mono 16-bit.
    pub const WAV_16K: Self = Self {
        codec: Codec::Wav,
        rate: SAMPLE_RATE,
        kbps: None,
    };

    /// Every format by name, in a stable order (what an error lists, what the documentation tabulates).
    pub fn all() -> Vec<Self> {
        let plain = |codec, rate| Self {
            codec,
            rate,
            kbps: None,
        };
        let mut all: Vec<Self> = PCM_RATES.iter().map(|&r| plain(Codec::Wav, r)).collect();
        all.extend(PCM_RATES.iter().map(|&r| plain(Codec::Pcm, r)));
        all.push(plain(Codec::Ulaw, 8_000));
        all.push(plain(Codec::Alaw, 8_000));
        all.extend(MP3.iter().map(|&(rate, kbps)| Self {
            codec: Codec::Mp3,
            rate,
            kbps: Some(kbps),
        }));
        all.extend(OPUS_KBPS.iter().map(|&kbps| Self {
            codec: Codec::Opus,
            rate: 48_000,
            kbps: Some(kbps),
        }));
        all.extend(FLAC_RATES.iter().map(|&r| plain(Codec::Flac, r)));
        all
    }

    /// The format an ElevenLabs-style name gives (`mp3_44100_128`), or a message listing every known name.
    pub fn named(name: &str) -> Result<Self, String> {
        Self::all()
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let known: Vec<String> = Self::all().iter().map(Self::name).collect();
                format!(
                    "unknown output format {name:?}; known formats: {}",
                    known.join(", ")
                )
            })
    }

    /// The format an OpenAI `response_format` gives (24 kHz where the codec allows a choice), or why not.
    pub fn openai(name: &str) -> Result<Self, String> {
        let elevenlabs = match name {
            "mp3" => "mp3_44100_128",
            "opus" => "opus_48000_64",
            "flac" => "flac_24000",
            "wav" => "wav_24000",
            "pcm" => "pcm_24000",
            "aac" => return Err("`response_format` \"aac\" is not offered: sauti links no AAC encoder; use mp3, opus, flac, wav or pcm".into()),
            _ => return Err(format!("`response_format` must be one of mp3, opus, flac, wav, pcm, not {name:?}")),
        };
        Self::named(elevenlabs)
    }

    /// Whether encoding costs real work (a compressing codec, or resampling), worth running off the async
    /// threads; 16 kHz PCM, WAV and G.711 are a copy.
    pub fn costly(&self) -> bool {
        matches!(self.codec, Codec::Mp3 | Codec::Opus | Codec::Flac) || self.rate != SAMPLE_RATE
    }

    /// The format's name (`wav_16000`, `ulaw_8000`, `mp3_44100_128`, `opus_48000_64`).
    pub fn name(&self) -> String {
        let codec = match self.codec {
            Codec::Wav => "wav",
            Codec::Pcm => "pcm",
            Codec::Ulaw => "ulaw",
            Codec::Alaw => "alaw",
            Codec::Mp3 => "mp3",
            Codec::Opus => "opus",
            Codec::Flac => "flac",
        };
        match self.kbps {
            Some(kbps) => format!("{codec}_{}_{kbps}", self.rate),
            None => format!("{codec}_{}", self.rate),
        }
    }

    /// The media type of the encoded bytes.
    pub fn media_type(&self) -> &'static str {
        match self.codec {
            Codec::Wav => "audio/wav",
            Codec::Pcm => "audio/pcm",
            Codec::Ulaw => "audio/basic",
            Codec::Alaw => "audio/x-alaw-basic",
            Codec::Mp3 => "audio/mpeg",
            Codec::Opus => "audio/ogg",
            Codec::Flac => "audio/flac",
        }
    }

    /// A file name extension for downloads.
    pub fn extension(&self) -> &'static str {
        match self.codec {
            Codec::Wav => "wav",
            Codec::Pcm => "pcm",
            Codec::Ulaw => "ulaw",
            Codec::Alaw => "alaw",
            Codec::Mp3 => "mp3",
            Codec::Opus => "ogg",
            Codec::Flac => "flac",
        }
    }

    /// Encode mono samples at 16 kHz in this format (resampled with rubato where the rate differs).
    pub fn encode(&self, samples_16k: &[f32]) -> Result<Vec<u8>, String> {
        Ok(self
            .encode_until(samples_16k, &Cancel::new())?
            .unwrap_or_default())
    }

    /// [`OutputFormat::encode`] for a caller that may go away: the compressing codecs look at `cancel` between
    /// bounded pieces of the work (about half a second of audio) and stop once it is set; `None` then.
    pub fn encode_until(
        &self,
        samples_16k: &[f32],
        cancel: &Cancel,
    ) -> Result<Option<Vec<u8>>, String> {
        match self.encode_checking(samples_16k, cancel) {
            Err(_) if cancel.is_cancelled() => Ok(None),
            encoded => encoded.map(Some),
        }
    }

    fn encode_checking(&self, samples_16k: &[f32], cancel: &Cancel) -> Result<Vec<u8>, String> {
        // Opus takes 16 kHz as it is (decoders play it at 48 kHz); everything else is written at its rate.
        let at_rate = |rate: u32| match rate {
            SAMPLE_RATE => std::borrow::Cow::Borrowed(samples_16k),
            rate => std::borrow::Cow::Owned(resample(samples_16k, SAMPLE_RATE, rate)),
        };
        match self.codec {
            Codec::Wav => Ok(wav(&at_rate(self.rate), self.rate)),
            Codec::Pcm => {
                let mut out = Vec::new();
                extend_pcm16(&mut out, &at_rate(self.rate));
                Ok(out)
            }
            Codec::Ulaw => Ok(at_rate(self.rate)
                .iter()
                .map(|&s| g711::ulaw(to_i16(s)))
                .collect()),
            Codec::Alaw => Ok(at_rate(self.rate)
                .iter()
                .map(|&s| g711::alaw(to_i16(s)))
                .collect()),
            Codec::Mp3 => {
                let samples = at_rate(self.rate);
                go_on(cancel)?;
                mp3::encode(&samples, self.rate, self.kbps.unwrap_or(128), cancel)
            }
            Codec::Opus => {
                ogg_opus::encode(samples_16k, SAMPLE_RATE, self.kbps.unwrap_or(64), cancel)
            }
            Codec::Flac => {
                let samples = at_rate(self.rate);
                go_on(cancel)?;
                flac::encode(&samples, self.rate, cancel)
            }
        }
    }
}

/// An error once the caller no longer waits for the encoding (see [`OutputFormat::encode_until`]).
fn go_on(cancel: &Cancel) -> Result<(), String> {
    match cancel.is_cancelled() {
        true => Err("encoding stopped: its caller went away".into()),
        false => Ok(()),
    }
}

/// A mono 16-bit WAV at `rate`.
fn wav(samples: &[f32], rate: u32) -> Vec<u8> {
    let mut out = wav_header(rate, samples.len()).to_vec();
    extend_pcm16(&mut out, samples);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_an_unknown_one_lists_them() {
        for format in OutputFormat::all() {
            assert_eq!(OutputFormat::named(&format.name()), Ok(format));
        }
        assert_eq!(OutputFormat::all().len(), 32);
        let error = OutputFormat::named("mp3_48000_320").unwrap_err();
        assert!(
            error.contains("ulaw_8000") && error.contains("opus_48000_64"),
            "{error}"
        );
        assert_eq!(OutputFormat::openai("pcm").unwrap().name(), "pcm_24000");
        assert!(OutputFormat::openai("aac").unwrap_err().contains("AAC"));
    }

    #[test]
    fn an_encoding_whose_caller_went_away_stops_with_nothing() {
        let samples: Vec<f32> = (0..16_000 * 5)
            .map(|i| (i as f32 * 0.05).sin() * 0.5)
            .collect();
        let gone = Cancel::new();
        gone.cancel();
        let waiting = Cancel::new();
        for name in [
            "mp3_44100_128",
            "mp3_22050_32",
            "opus_48000_64",
            "flac_16000",
            "flac_24000",
        ] {
            let format = OutputFormat::named(name).unwrap();
            assert_eq!(format.encode_until(&samples, &gone), Ok(None), "{name}");
            let encoded = format.encode_until(&samples, &waiting).unwrap();
            assert!(encoded.is_some_and(|bytes| bytes.len() > 1_000), "{name}");
        }
    }

    #[test]
    fn the_16k_wav_is_the_seed_wav() {
        let samples: Vec<f32> = (0..1600).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        assert_eq!(
            OutputFormat::WAV_16K.encode(&samples).unwrap(),
            crate::audio::encode_wav_16k(&samples)
        );
    }

    #[test]
    fn raw_formats_have_one_sample_per_output_tick() {
        let second = vec![0.25f32; 16_000];
        let size = |name: &str| {
            OutputFormat::named(name)
                .unwrap()
                .encode(&second)
                .unwrap()
                .len()
        };
        assert_eq!(size("pcm_16000"), 32_000);
        assert_eq!(size("pcm_44100"), 88_200);
        assert_eq!(size("ulaw_8000"), 8_000);
        assert_eq!(size("alaw_8000"), 8_000);
        assert_eq!(size("wav_22050"), 44 + 44_100);
    }
}
