//! The audio layer: every byte of audio that enters or leaves sauti passes through here.
//!
//! - [`sniff`] tells the container and codec from the bytes themselves (never the file name or MIME type).
//! - [`decode`] turns WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus and WebM/Matroska (Opus or Vorbis) into mono `f32`
//!   at the stream's native rate, with a cap on decoded duration so a tiny file cannot claim hours of audio.
//! - [`resample`] converts to 16 kHz with `rubato`.
//! - [`encode`] writes 16 kHz mono 16-bit PCM WAV in memory with `hound`.
//! - [`analysis`] measures duration, peak and RMS level, and finds speech with an energy voice-activity detector.
//!
//! [`load_16k`] strings the first three together; it is what the HTTP layer and the CLI call.

pub mod analysis;
pub mod decode;
pub mod encode;
mod opus;
pub mod output;
pub mod pitch;
pub mod psola;
pub mod resample;
pub mod sniff;
mod structure;
mod tags;
pub mod vad;

use std::time::Duration;

pub use analysis::{analyse, AudioStats, SpeechSegment, VadConfig};
pub use decode::{decode, DecodedAudio, SourceInfo};
pub use encode::{encode_wav_16k, extend_pcm16, wav_header_16k, wav_len_16k};
pub use resample::to_16k;
pub use sniff::{sniff, Container};

/// The sample rate of every signal sauti works with internally and returns to clients.
pub const SAMPLE_RATE: u32 = 16_000;

/// Limits applied while decoding untrusted uploads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeLimits {
    /// Decoding stops with [`AudioError::TooLong`] once this much audio has come out (or is declared up front).
    pub max_duration: Duration,
}

/// The richest audio whose full duration is decoded: rate × channels beyond this (a small file declaring
/// 384 kHz and eight channels, say) is refused before it costs more than `max_duration` of this would.
const RICHEST_RATE: u64 = 96_000;
const RICHEST_CHANNELS: u64 = 2;

impl DecodeLimits {
    /// Samples (frames × channels) decoding may produce at most: `max_duration` of 96 kHz stereo.
    pub fn max_channel_samples(&self) -> u64 {
        (self.max_duration.as_secs_f64() * (RICHEST_RATE * RICHEST_CHANNELS) as f64) as u64
    }
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_duration: Duration::from_secs(15 * 60),
        }
    }
}

/// Everything that can go wrong with audio a client sent us; the HTTP layer maps each to a 422 problem.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum AudioError {
    /// Zero bytes, or a stream that decodes to no samples at all.
    #[error("the audio is empty: {0}")]
    Empty(&'static str),
    /// The bytes do not start like any audio format we know.
    #[error("unrecognised audio format: the data is not WAV, MP3, FLAC, Ogg (Vorbis or Opus) or WebM/Matroska")]
    Unrecognised,
    /// A format we recognise but cannot decode (AAC in MP4, AMR, …).
    #[error("unsupported audio format: {0}; send WAV, MP3, FLAC, Ogg (Vorbis or Opus) or WebM (Opus or Vorbis)")]
    Unsupported(String),
    /// The container or codec data is damaged.
    #[error("corrupt {format} audio: {reason}")]
    Corrupt {
        /// The container the bytes claimed to be.
        format: &'static str,
        /// What went wrong, in words.
        reason: String,
    },
    /// The upload stops part-way: less audio than its header declares, or a page/element cut off.
    #[error("truncated {format} audio: {detail}")]
    Truncated {
        /// The container the bytes claimed to be.
        format: &'static str,
        /// Where and how it was cut, in words.
        detail: String,
    },
    /// More audio than the configured cap (decoding stopped there).
    #[error("the audio is too long: {seconds:.1} s exceeds the limit of {limit:.0} s")]
    TooLong {
        /// Seconds decoded or declared when decoding stopped.
        seconds: f64,
        /// The configured cap in seconds.
        limit: f64,
    },
    /// More samples (frames × channels) than decoding may produce, declared or found: a high rate and many
    /// channels over a long duration.
    #[error("the audio is too large to decode: {channels} channels at {rate} Hz for {seconds:.1} s is more than {limit_seconds:.0} s of 96 kHz stereo")]
    TooManySamples {
        /// Channels of the stream.
        channels: u16,
        /// Its sample rate.
        rate: u32,
        /// Seconds declared or decoded when decoding stopped.
        seconds: f64,
        /// The duration cap.
        limit_seconds: f64,
    },
    /// Less (speech) audio than an operation needs.
    #[error(
        "the audio is too short: {seconds:.2} s of {what} found, at least {minimum:.1} s is needed"
    )]
    TooShort {
        /// What was measured ("audio", "speech").
        what: &'static str,
        /// Seconds found.
        seconds: f64,
        /// Seconds required.
        minimum: f64,
    },
}

impl AudioError {
    /// A short machine-readable code for problem responses and logs.
    pub fn code(&self) -> &'static str {
        match self {
            AudioError::Empty(_) => "audio_empty",
            AudioError::Unrecognised => "audio_unrecognised",
            AudioError::Unsupported(_) => "audio_unsupported",
            AudioError::Corrupt { .. } => "audio_corrupt",
            AudioError::Truncated { .. } => "audio_truncated",
            AudioError::TooLong { .. } => "audio_too_long",
            AudioError::TooManySamples { .. } => "audio_too_large",
            AudioError::TooShort { .. } => "audio_too_short",
        }
    }
}

/// Audio decoded from an upload and converted to 16 kHz mono, with what we learnt about the source.
#[derive(Debug, Clone)]
pub struct Audio16k {
    /// Container, codec, native rate and channel count of the upload.
    pub source: SourceInfo,
    /// Mono samples at [`SAMPLE_RATE`], nominally within `-1.0..=1.0`.
    pub samples: Vec<f32>,
}

impl Audio16k {
    /// Duration in seconds.
    pub fn duration_seconds(&self) -> f64 {
        self.samples.len() as f64 / f64::from(SAMPLE_RATE)
    }
}

/// Decode any supported upload and resample it to 16 kHz mono as it decodes: memory follows the 16 kHz
/// output (at most `limits.max_duration` of it), never the rate and channel count the upload declares.
pub fn load_16k(bytes: &[u8], limits: &DecodeLimits) -> Result<Audio16k, AudioError> {
    let mut sink = To16k(None);
    let (source, _) = decode::decode_into(bytes, limits, &mut sink)?;
    let samples = sink
        .0
        .map(resample::StreamResampler::finish)
        .unwrap_or_default();
    Ok(Audio16k { source, samples })
}

/// A decode sink that resamples each block to 16 kHz on arrival.
struct To16k(Option<resample::StreamResampler>);

impl decode::Sink for To16k {
    fn start(&mut self, rate: u32) {
        self.0 = Some(resample::StreamResampler::new(rate, SAMPLE_RATE));
    }

    fn push(&mut self, block: &[f32]) {
        if let Some(resampler) = &mut self.0 {
            resampler.push(block);
        }
    }
}
