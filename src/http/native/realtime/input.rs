//! The caller's audio as clients send it on a realtime socket, made 16 kHz mono for the session: raw 16-bit PCM
//! at a named rate, G.711 μ-law or A-law at 8 kHz (telephony), or `file`, where each chunk is a whole audio file in any
//! format the service decodes (an Opus voice note, a WAV).

use base64::Engine as _;

use crate::audio::output::g711::{alaw_to_linear, ulaw_to_linear};
use crate::audio::resample::StreamResampler;
use crate::audio::SAMPLE_RATE;

/// The input formats by name, as `input_format` takes them.
pub const NAMES: &str =
    "pcm_8000, pcm_16000, pcm_22050, pcm_24000, pcm_44100, pcm_48000, ulaw_8000, alaw_8000, file";

/// How the client's audio chunks are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// 16-bit little-endian mono at this rate.
    Pcm(u32),
    /// G.711 μ-law at 8 kHz.
    Ulaw,
    /// G.711 A-law at 8 kHz.
    Alaw,
    /// Each chunk a whole file.
    File,
}

impl InputFormat {
    /// The format a name gives, or why not.
    pub fn named(name: &str) -> Result<Self, String> {
        Ok(match name {
            "ulaw_8000" => Self::Ulaw,
            "alaw_8000" => Self::Alaw,
            "file" => Self::File,
            _ => match name.strip_prefix("pcm_").and_then(|r| r.parse().ok()) {
                Some(rate @ (8_000 | 16_000 | 22_050 | 24_000 | 44_100 | 48_000)) => {
                    Self::Pcm(rate)
                }
                _ => return Err(format!("unknown input_format {name:?}; known: {NAMES}")),
            },
        })
    }

    /// The name.
    pub fn name(&self) -> String {
        match self {
            Self::Pcm(rate) => format!("pcm_{rate}"),
            Self::Ulaw => "ulaw_8000".into(),
            Self::Alaw => "alaw_8000".into(),
            Self::File => "file".into(),
        }
    }
}

/// Turns a session's audio chunks into 16 kHz samples, keeping the resampler's state between chunks.
pub struct Input {
    format: InputFormat,
    resampler: StreamResampler,
}

/// The most audio one chunk may carry once decoded: a minute.
const MAX_CHUNK_SECONDS: u64 = 60;

/// One chunk of the caller's audio, read.
#[derive(Debug)]
pub enum Chunk {
    /// Its 16 kHz samples.
    Samples(Vec<f32>),
    /// A whole file, still to be decoded ([`decode_file`]: off the async threads, behind a codec permit).
    File(Vec<u8>),
}

/// How long a file chunk waits for a codec permit before its session is told the server is busy.
const DECODE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The 16 kHz samples of a file chunk, decoded on a blocking thread once one of `permits` (the permits every
/// upload's decoding takes) is free; or why not.
pub async fn decode_file(
    bytes: Vec<u8>,
    permits: &std::sync::Arc<tokio::sync::Semaphore>,
) -> Result<Vec<f32>, FileRefused> {
    let permit = tokio::time::timeout(DECODE_WAIT, std::sync::Arc::clone(permits).acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or(FileRefused::Busy)?;
    let limits = crate::audio::DecodeLimits {
        max_duration: std::time::Duration::from_secs(MAX_CHUNK_SECONDS),
    };
    tokio::task::spawn_blocking(move || {
        let _admitted = permit;
        crate::audio::load_16k(&bytes, &limits)
    })
    .await
    .map_err(|_| FileRefused::Undecodable("the decoder stopped".into()))?
    .map(|audio| audio.samples)
    .map_err(|e| FileRefused::Undecodable(format!("the audio chunk cannot be decoded: {e}")))
}

/// Why a file chunk gave no audio.
#[derive(Debug)]
pub enum FileRefused {
    /// Every decoder stayed busy.
    Busy,
    /// Not audio the service reads.
    Undecodable(String),
}

impl Input {
    /// A decoder for `format`.
    pub fn new(format: InputFormat) -> Self {
        let rate = match format {
            InputFormat::Pcm(rate) => rate,
            InputFormat::Ulaw | InputFormat::Alaw => 8_000,
            InputFormat::File => SAMPLE_RATE,
        };
        Self {
            format,
            resampler: StreamResampler::low_latency(rate, SAMPLE_RATE),
        }
    }

    /// One base64 chunk, read, or why it cannot be.
    pub fn chunk(&mut self, base64: &str) -> Result<Chunk, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(base64.trim())
            .map_err(|e| format!("the audio chunk is not base64: {e}"))?;
        match self.format {
            InputFormat::File => Ok(Chunk::File(bytes)),
            _ => self.bytes(&bytes),
        }
    }

    /// One chunk of bytes, read.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<Chunk, String> {
        if self.format == InputFormat::File {
            return Ok(Chunk::File(bytes.to_vec()));
        }
        let samples = linear(self.format, bytes)?;
        self.resampler.push(&samples);
        Ok(Chunk::Samples(self.resampler.take()))
    }
}

/// The samples of raw audio at its own rate (16-bit PCM or G.711); nothing for `file`, which must be decoded.
pub fn linear(format: InputFormat, bytes: &[u8]) -> Result<Vec<f32>, String> {
    Ok(match format {
        InputFormat::Pcm(_) => {
            if !bytes.len().is_multiple_of(2) {
                return Err(
                    "16-bit PCM comes in whole samples: the chunk has an odd length".into(),
                );
            }
            bytes
                .chunks_exact(2)
                .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32_768.0)
                .collect()
        }
        InputFormat::Ulaw => bytes
            .iter()
            .map(|&code| f32::from(ulaw_to_linear(code)) / 32_768.0)
            .collect(),
        InputFormat::Alaw => bytes
            .iter()
            .map(|&code| f32::from(alaw_to_linear(code)) / 32_768.0)
            .collect(),
        InputFormat::File => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_pcm_is_resampled_as_it_comes() {
        for name in NAMES.split(", ") {
            assert_eq!(InputFormat::named(name).unwrap().name(), name);
        }
        assert!(InputFormat::named("pcm_11025")
            .unwrap_err()
            .contains("ulaw_8000"));
        let mut input = Input::new(InputFormat::Pcm(8_000));
        let second: Vec<u8> = (0..8_000)
            .flat_map(|i| (((i as f32 * 0.1).sin() * 8_000.0) as i16).to_le_bytes())
            .collect();
        let mut out = 0;
        for chunk in second.chunks(320) {
            let Chunk::Samples(samples) = input.bytes(chunk).unwrap() else {
                panic!("PCM is read as it comes");
            };
            out += samples.len();
        }
        assert!((15_500..=16_000).contains(&out), "{out}");
        assert!(input.bytes(&[1, 2, 3]).is_err());
    }
}
