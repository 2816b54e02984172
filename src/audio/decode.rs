//! Decoding uploads to mono `f32` at the stream's native rate: symphonia demuxes every container and decodes
//! PCM, MP3, FLAC and Vorbis; Opus packets go to [`super::opus`].

use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::Serialize;
use symphonia::core::audio::{AudioBuffer, AudioBufferRef, Signal};
use symphonia::core::codecs::{
    CodecParameters, Decoder, DecoderOptions, CODEC_TYPE_NULL, CODEC_TYPE_OPUS,
};
use symphonia::core::conv::IntoSample;
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::{FormatOptions, Packet};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;
use symphonia::core::sample::Sample;

use super::opus::{OpusHead, OpusStream, OPUS_RATE};
use super::sniff::{sniff, wav_declared_seconds, Container};
use super::{structure, tags};
use super::{AudioError, DecodeLimits};

/// What an upload turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceInfo {
    /// Container name: `wav`, `mp3`, `flac`, `ogg`, `webm` or `matroska`.
    pub format: &'static str,
    /// Codec name: `pcm_s16le`, `mp3`, `flac`, `vorbis`, `opus`, …
    pub codec: &'static str,
    /// The stream's native sample rate in Hz (48000 for Opus, whatever the encoder was fed).
    pub sample_rate: u32,
    /// Channels in the stream before mixing to mono.
    pub channels: u16,
}

/// Mono audio at the stream's native rate.
#[derive(Debug, Clone)]
pub struct DecodedAudio {
    /// What the upload was.
    pub source: SourceInfo,
    /// Rate of `samples` in Hz.
    pub sample_rate: u32,
    /// The channel average, nominally within `-1.0..=1.0`.
    pub samples: Vec<f32>,
}

/// Sample rates outside this range are not audio anyone records; refusing them keeps the resampler sane.
const MIN_RATE: u32 = 1_000;
const MAX_RATE: u32 = 384_000;

/// A run of undecodable packets this long means the stream is damaged, not merely glitched.
const MAX_CONSECUTIVE_BAD_PACKETS: usize = 16;

/// Where decoded mono blocks go as they come out of the decoder.
pub trait Sink {
    /// The stream's native rate, once known and before any block.
    fn start(&mut self, rate: u32);
    /// The next mono block at the native rate.
    fn push(&mut self, block: &[f32]);
}

/// Collects the samples at their native rate.
impl Sink for Vec<f32> {
    fn start(&mut self, _rate: u32) {}

    fn push(&mut self, block: &[f32]) {
        self.extend_from_slice(block);
    }
}

/// What the decoder learnt besides the samples it handed to the sink.
struct Decoded {
    source: SourceInfo,
    sample_rate: u32,
}

/// Decode an upload of any supported format into mono samples at its native rate.
///
/// Never panics: a decoder panic on hostile input is caught and reported as [`AudioError::Corrupt`].
pub fn decode(bytes: &[u8], limits: &DecodeLimits) -> Result<DecodedAudio, AudioError> {
    let mut samples = Vec::new();
    let decoded = decode_into(bytes, limits, &mut samples)?;
    Ok(DecodedAudio {
        source: decoded.0,
        sample_rate: decoded.1,
        samples,
    })
}

/// Decode an upload block by block into `sink`, which receives mono audio at the native rate and never the
/// whole multichannel stream: memory stays with what the sink keeps. The source and its native rate.
pub fn decode_into(
    bytes: &[u8],
    limits: &DecodeLimits,
    sink: &mut dyn Sink,
) -> Result<(SourceInfo, u32), AudioError> {
    let bytes = tags::skip_id3v2(bytes)?;
    let container = sniff(bytes)?;
    structure::check_complete(container, bytes)?;
    catch_unwind(AssertUnwindSafe(|| {
        decode_container(bytes, container, limits, sink)
    }))
    .unwrap_or_else(|_| {
        Err(AudioError::Corrupt {
            format: container.name(),
            reason: "the decoder could not make sense of the stream".into(),
        })
    })
    .map(|d| (d.source, d.sample_rate))
}

fn decode_container(
    bytes: &[u8],
    container: Container,
    limits: &DecodeLimits,
    sink: &mut dyn Sink,
) -> Result<Decoded, AudioError> {
    let format = container.name();
    let corrupt = |reason: String| AudioError::Corrupt { format, reason };
    let from_symphonia = |e: SymphoniaError| match e {
        SymphoniaError::Unsupported(what) => {
            AudioError::Unsupported(format!("{format} with {what}"))
        }
        SymphoniaError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            AudioError::Truncated {
                format,
                detail: "the data ends inside the headers".into(),
            }
        }
        other => corrupt(other.to_string()),
    };

    let limit = limits.max_duration.as_secs_f64();
    // A WAV header's claim is checked before anything is decoded: a few bytes may promise hours.
    let wav_seconds = if container == Container::Wav {
        wav_declared_seconds(bytes)
    } else {
        None
    };
    if let Some(seconds) = wav_seconds.filter(|&s| s > limit) {
        return Err(AudioError::TooLong { seconds, limit });
    }

    let stream = MediaSourceStream::new(Box::new(Cursor::new(bytes.to_vec())), Default::default());
    let mut hint = Hint::new();
    hint.with_extension(container.extension());
    let options = FormatOptions {
        enable_gapless: true,
        ..Default::default()
    };
    let probed = symphonia::default::get_probe()
        .format(&hint, stream, &options, &MetadataOptions::default())
        .map_err(from_symphonia)?;
    let mut reader = probed.format;

    let track = reader
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL && t.codec_params.sample_rate.is_some())
        .ok_or_else(|| corrupt("no audio track found".into()))?;
    let track_id = track.id;
    let params = track.codec_params.clone();

    let mut engine = Engine::new(&params).map_err(from_symphonia)?;
    let source = SourceInfo {
        format,
        codec: engine.codec_name(&params),
        sample_rate: engine.sample_rate,
        channels: engine.channels,
    };
    if !(MIN_RATE..=MAX_RATE).contains(&engine.sample_rate) {
        return Err(AudioError::Unsupported(format!(
            "{format} at {} Hz (sample rates from {MIN_RATE} to {MAX_RATE} Hz are accepted)",
            engine.sample_rate
        )));
    }
    let rate = f64::from(engine.sample_rate);
    // Frames allowed: the duration cap, and the decoding work (frames × channels) cap.
    let channels = u64::from(engine.channels.max(1));
    let max_frames = ((limit * rate) as u64).min(limits.max_channel_samples() / channels) as usize;
    let (stream_channels, stream_rate) = (engine.channels, engine.sample_rate);
    let too_many = |frames: u64| AudioError::TooManySamples {
        channels: stream_channels,
        rate: stream_rate,
        seconds: frames as f64 / rate,
        limit_seconds: limit,
    };

    // What the container promises: used to refuse absurd claims early and to notice truncation.
    let declared_frames = match container {
        Container::Wav => wav_seconds.map(|s| (s * rate).round() as u64),
        Container::Mp3 | Container::Flac => params.n_frames,
        _ => None,
    };
    if let Some(declared) = declared_frames {
        let seconds = declared as f64 / rate;
        if seconds > limit {
            return Err(AudioError::TooLong { seconds, limit });
        }
        if declared > max_frames as u64 {
            return Err(too_many(declared));
        }
    }

    sink.start(engine.sample_rate);
    // Frames decoded so far; each packet is mixed to mono in `block` and handed on.
    let mut frames = 0usize;
    let mut block: Vec<f32> = Vec::new();
    let mut bad_run = 0usize;
    let mut first_error: Option<String> = None;
    loop {
        let packet = match reader.next_packet() {
            Ok(packet) => packet,
            Err(SymphoniaError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                break
            }
            Err(SymphoniaError::ResetRequired) => break,
            Err(e) if frames == 0 => return Err(from_symphonia(e)),
            Err(e) => {
                return Err(corrupt(format!(
                    "the stream breaks off after {:.2} s: {e}",
                    frames as f64 / rate
                )))
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        block.clear();
        match engine.decode_into(&packet, &mut block) {
            Ok(()) => bad_run = 0,
            Err(reason) => {
                bad_run += 1;
                first_error.get_or_insert(reason);
                if bad_run >= MAX_CONSECUTIVE_BAD_PACKETS {
                    break;
                }
            }
        }
        frames += block.len();
        if frames > max_frames {
            let seconds = frames as f64 / rate;
            if seconds > limit {
                return Err(AudioError::TooLong { seconds, limit });
            }
            return Err(too_many(frames as u64));
        }
        // A damaged stream can drive a codec to infinities or NaN (a one-bit flip in a Vorbis WebM did); such
        // audio is refused rather than handed to resampling and recognition.
        if !block.iter().all(|s| s.is_finite()) {
            return Err(AudioError::Corrupt {
                format,
                reason: "the decoder produced samples that are not numbers".into(),
            });
        }
        sink.push(&block);
    }

    if bad_run >= MAX_CONSECUTIVE_BAD_PACKETS || (frames == 0 && first_error.is_some()) {
        return Err(corrupt(first_error.unwrap_or_default()));
    }
    if let Some(declared) = declared_frames {
        // A little slack covers encoder padding that a container accounts for differently.
        let slack = (0.05 * rate) as u64 + declared / 100;
        if (frames as u64) + slack < declared {
            return Err(AudioError::Truncated {
                format,
                detail: format!(
                    "the header declares {:.2} s but only {:.2} s is present",
                    declared as f64 / rate,
                    frames as f64 / rate
                ),
            });
        }
    }
    if frames == 0 {
        return Err(AudioError::Empty("the stream holds no audio samples"));
    }
    Ok(Decoded {
        source,
        sample_rate: engine.sample_rate,
    })
}

/// The codec side: symphonia's decoder, or ours for Opus.
struct Engine {
    kind: EngineKind,
    sample_rate: u32,
    channels: u16,
}

enum EngineKind {
    Symphonia(Box<dyn Decoder>),
    Opus {
        stream: OpusStream,
        /// Pre-skip (OpusHead) still to drop; trims the demuxer already marked on packets count towards it.
        pending_skip: usize,
        scratch: Vec<f32>,
    },
}

impl Engine {
    fn new(params: &CodecParameters) -> Result<Self, SymphoniaError> {
        if params.codec == CODEC_TYPE_OPUS {
            let head = params
                .extra_data
                .as_deref()
                .ok_or(SymphoniaError::DecodeError(
                    "Opus track without an OpusHead header",
                ))
                .and_then(|data| {
                    OpusHead::parse(data)
                        .map_err(|_| SymphoniaError::DecodeError("invalid OpusHead"))
                })?;
            let stream = OpusStream::new(&head)
                .map_err(|_| SymphoniaError::Unsupported("this Opus channel layout"))?;
            return Ok(Self {
                kind: EngineKind::Opus {
                    stream,
                    pending_skip: usize::from(head.pre_skip),
                    scratch: Vec::new(),
                },
                sample_rate: OPUS_RATE,
                channels: u16::from(head.channels),
            });
        }
        let decoder = symphonia::default::get_codecs().make(params, &DecoderOptions::default())?;
        let channels = params
            .channels
            .map(|c| c.count())
            .or_else(|| params.channel_layout.map(|l| l.into_channels().count()))
            .unwrap_or(1);
        Ok(Self {
            kind: EngineKind::Symphonia(decoder),
            sample_rate: params.sample_rate.unwrap_or(0),
            channels: u16::try_from(channels).unwrap_or(u16::MAX),
        })
    }

    fn codec_name(&self, params: &CodecParameters) -> &'static str {
        match &self.kind {
            EngineKind::Opus { .. } => "opus",
            EngineKind::Symphonia(_) => symphonia::default::get_codecs()
                .get_codec(params.codec)
                .map_or("unknown", |d| d.short_name),
        }
    }

    /// Decode one packet, trim encoder delay/padding, and append the mono mix to `out`.
    fn decode_into(&mut self, packet: &Packet, out: &mut Vec<f32>) -> Result<(), String> {
        match &mut self.kind {
            EngineKind::Symphonia(decoder) => {
                let decoded = decoder.decode(packet).map_err(|e| e.to_string())?;
                let (skip, take) = trim_window(packet, decoded.frames());
                mix_to_mono(&decoded, skip, take, out);
                Ok(())
            }
            EngineKind::Opus {
                stream,
                pending_skip,
                scratch,
            } => {
                scratch.clear();
                let frames = stream.decode_mono(&packet.data, scratch)?;
                let (mut skip, take) = trim_window(packet, frames);
                *pending_skip = pending_skip.saturating_sub(skip);
                let extra = (*pending_skip).min(take);
                *pending_skip -= extra;
                skip += extra;
                out.extend_from_slice(&scratch[skip..skip + take - extra]);
                Ok(())
            }
        }
    }
}

/// Which decoded frames to keep. Gapless demuxers mark delay and padding on the packet; some decoders
/// trim it themselves (their output already matches `packet.dur`), the rest leave it to us.
fn trim_window(packet: &Packet, frames: usize) -> (usize, usize) {
    let start = packet.trim_start() as usize;
    let end = packet.trim_end() as usize;
    if start + end > 0 && frames == packet.dur as usize + start + end {
        (start, frames - start - end)
    } else {
        (0, frames)
    }
}

fn mix_to_mono(decoded: &AudioBufferRef<'_>, skip: usize, take: usize, out: &mut Vec<f32>) {
    match decoded {
        AudioBufferRef::U8(b) => mix(b, skip, take, out),
        AudioBufferRef::U16(b) => mix(b, skip, take, out),
        AudioBufferRef::U24(b) => mix(b, skip, take, out),
        AudioBufferRef::U32(b) => mix(b, skip, take, out),
        AudioBufferRef::S8(b) => mix(b, skip, take, out),
        AudioBufferRef::S16(b) => mix(b, skip, take, out),
        AudioBufferRef::S24(b) => mix(b, skip, take, out),
        AudioBufferRef::S32(b) => mix(b, skip, take, out),
        AudioBufferRef::F32(b) => mix(b, skip, take, out),
        AudioBufferRef::F64(b) => mix(b, skip, take, out),
    }
}

/// Average the channels of `buf[skip..skip + take]` onto the end of `out`.
fn mix<S: Sample + IntoSample<f32>>(
    buf: &AudioBuffer<S>,
    skip: usize,
    take: usize,
    out: &mut Vec<f32>,
) {
    let channels = buf.spec().channels.count();
    let start = out.len();
    out.resize(start + take, 0.0);
    let dst = &mut out[start..];
    for c in 0..channels {
        for (d, s) in dst.iter_mut().zip(&buf.chan(c)[skip..skip + take]) {
            *d += (*s).into_sample();
        }
    }
    if channels > 1 {
        let scale = 1.0 / channels as f32;
        dst.iter_mut().for_each(|d| *d *= scale);
    }
}
