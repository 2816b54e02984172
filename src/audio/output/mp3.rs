//! MP3 with LAME (linked statically from the sources `mp3lame-sys` bundles; LGPL): constant bitrate, mono, at
//! exactly the requested rate, with the gapless (Info) tag where the frame is large enough to hold it.

use std::num::NonZeroU32;

use mp3lame_encoder::{Bitrate, Builder, FlushGap, Mode, MonoPcm, Quality};

use super::go_on;
use crate::cancel::Cancel;

/// LAME's bitrate for `kbps`.
fn bitrate(kbps: u32) -> Result<Bitrate, String> {
    Ok(match kbps {
        32 => Bitrate::Kbps32,
        48 => Bitrate::Kbps48,
        64 => Bitrate::Kbps64,
        96 => Bitrate::Kbps96,
        128 => Bitrate::Kbps128,
        192 => Bitrate::Kbps192,
        other => return Err(format!("no MP3 bitrate of {other} kbps")),
    })
}

/// A LAME encoder for mono audio at `rate` and `kbps`, reserving a first frame for the Info tag when `tagged`.
fn encoder(rate: u32, kbps: u32, tagged: bool) -> Result<mp3lame_encoder::Encoder, String> {
    let failed =
        |e: mp3lame_encoder::BuildError| format!("the MP3 encoder refused its settings: {e:?}");
    let mut builder = Builder::new().ok_or("the MP3 encoder could not start")?;
    builder.set_num_channels(1).map_err(failed)?;
    builder.set_sample_rate(rate).map_err(failed)?;
    // Without it LAME picks the output rate from the bitrate (44.1 kHz at 32 kbps would come out at 22.05).
    builder
        .set_output_sample_rate(NonZeroU32::new(rate))
        .map_err(failed)?;
    builder.set_mode(Mode::Mono).map_err(failed)?;
    builder.set_brate(bitrate(kbps)?).map_err(failed)?;
    builder.set_quality(Quality::Good).map_err(failed)?;
    builder.set_to_write_vbr_tag(tagged).map_err(failed)?;
    builder.build().map_err(failed)
}

fn encoding(e: mp3lame_encoder::EncodeError) -> String {
    format!("MP3 encoding failed: {e:?}")
}

/// Append the frames of `samples` that LAME has ready.
fn encode_into(
    encoder: &mut mp3lame_encoder::Encoder,
    samples: &[f32],
    out: &mut Vec<u8>,
    cancel: Option<&Cancel>,
) -> Result<(), String> {
    for chunk in samples.chunks(8_192) {
        if let Some(cancel) = cancel {
            go_on(cancel)?;
        }
        out.reserve(mp3lame_encoder::max_required_buffer_size(chunk.len()));
        encoder
            .encode_to_vec(MonoPcm(chunk), out)
            .map_err(encoding)?;
    }
    Ok(())
}

/// MP3 written as the samples come, behind an Info frame that declares the encoder's delay (the totals and
/// the end's padding are not known when it is sent).
pub struct Mp3Stream {
    encoder: mp3lame_encoder::Encoder,
    tag: Option<Vec<u8>>,
}

impl Mp3Stream {
    /// A stream of mono audio at `rate`, constant bitrate `kbps`.
    pub fn new(rate: u32, kbps: u32) -> Result<Self, String> {
        Ok(Self {
            encoder: encoder(rate, kbps, false)?,
            tag: Some(info_frame(rate, None, 0)),
        })
    }

    /// Encode the next samples; the frames ready to send (the Info frame first).
    pub fn push(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        let mut out = self.tag.take().unwrap_or_default();
        encode_into(&mut self.encoder, samples, &mut out, None)?;
        Ok(out)
    }

    /// The frames still buffered.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let mut out = self.tag.take().unwrap_or_default();
        out.reserve(7_200);
        self.encoder
            .flush_to_vec::<FlushGap>(&mut out)
            .map_err(encoding)?;
        Ok(out)
    }
}

/// Encode mono samples at `rate` as constant-bitrate MP3 at `kbps`.
/// Stops (with an error) soon after `cancel` is set.
pub fn encode(samples: &[f32], rate: u32, kbps: u32, cancel: &Cancel) -> Result<Vec<u8>, String> {
    let mut encoder = encoder(rate, kbps, true)?;
    let mut out = Vec::new();
    encode_into(&mut encoder, samples, &mut out, Some(cancel))?;
    out.reserve(7_200);
    // Flushing with a gap writes out everything still buffered (the gapless flush keeps the last frame back).
    encoder
        .flush_to_vec::<FlushGap>(&mut out)
        .map_err(encoding)?;
    // The Info tag goes into the zero-filled first frame LAME reserves for it, so decoders trim the encoder's
    // delay and padding.
    // At the smallest frame sizes LAME writes neither; a tag frame of a larger size goes in front instead.
    if encoder.lame_tag_size() == 0 {
        let frames = frame_count(&out);
        let per_frame = if rate >= 32_000 { 1_152 } else { 576 };
        let padding = (frames * per_frame).saturating_sub(ENCODER_DELAY + samples.len());
        let mut tagged = info_frame(rate, Some((frames, out.len())), padding);
        tagged.extend_from_slice(&out);
        return Ok(tagged);
    }
    {
        let mut tag = Vec::with_capacity(encoder.lame_tag_size());
        if let Some(written) = encoder.lame_tag_encode_to_vec(&mut tag) {
            let at = encoder.id3v2_tag_size();
            let written = written.get();
            if out.len() >= at + written {
                out[at..at + written].copy_from_slice(&tag[..written]);
            }
        }
    }
    Ok(out)
}

/// LAME's encoder delay in samples: what decoders drop from the start (besides their own 529).
const ENCODER_DELAY: usize = 576;

/// An Info frame of its own at 64 kbps, large enough for the LAME extension that tells decoders the delay and
/// `padding` to trim, to go in front of LAME's frames (`totals`: their count and bytes, when known).
fn info_frame(rate: u32, totals: Option<(usize, usize)>, padding: usize) -> Vec<u8> {
    let mpeg1 = rate >= 32_000;
    // Version and layer (MPEG-1 or MPEG-2 layer III, no CRC); 64 kbps; the rate's index; mono.
    let rate_index = match rate {
        44_100 | 22_050 => 0,
        48_000 | 24_000 => 1,
        _ => 2,
    };
    let (version, bitrate_index, side_info) = if mpeg1 { (0xFB, 5, 17) } else { (0xF3, 8, 9) };
    let size = if mpeg1 { 144_000 * 64 } else { 72_000 * 64 } / rate as usize;
    let mut frame = vec![0u8; size];
    frame[..4].copy_from_slice(&[
        0xFF,
        version,
        (bitrate_index << 4) | (rate_index << 2),
        0xC4,
    ]);
    let mut tag = Vec::with_capacity(60);
    let mut put = |bytes: &[u8]| tag.extend_from_slice(bytes);
    put(b"Info");
    let length = match totals {
        Some((frames, bytes)) => {
            put(&3u32.to_be_bytes()); // frames and bytes follow
            put(&(frames as u32).to_be_bytes());
            put(&((bytes + size) as u32).to_be_bytes());
            (bytes + size) as u32
        }
        None => {
            put(&0u32.to_be_bytes()); // a stream: neither is known
            0
        }
    };
    put(b"LAME3.100");
    put(&[0, 0]); // revision and VBR method; lowpass
    put(&[0; 8]); // peak, radio and audiophile gain
    put(&[0, 64]); // flags; bitrate
    let trim = ((ENCODER_DELAY.min(4095) as u32) << 12) | padding.min(4095) as u32;
    put(&trim.to_be_bytes()[1..]);
    put(&[0, 0, 0, 0]); // misc, gain, preset and surround
    put(&length.to_be_bytes());
    put(&[0, 0]); // audio CRC (not kept)
    let start = 4 + side_info;
    frame[start..start + tag.len()].copy_from_slice(&tag);
    // The tag's own CRC covers everything before it.
    let end = start + tag.len();
    let crc = crc16(&frame[..end]);
    frame[end..end + 2].copy_from_slice(&crc.to_be_bytes());
    frame
}

/// Frames in an MPEG audio layer III stream, counted by walking their headers.
fn frame_count(stream: &[u8]) -> usize {
    let (mut at, mut frames) = (0, 0);
    while at + 4 <= stream.len() && stream[at] == 0xFF && stream[at + 1] & 0xE0 == 0xE0 {
        let mpeg1 = stream[at + 1] & 0x08 != 0;
        let kbps = bitrate_kbps(mpeg1, stream[at + 2] >> 4);
        let rate = [[22_050, 24_000, 16_000], [44_100, 48_000, 32_000]][usize::from(mpeg1)]
            [usize::from((stream[at + 2] >> 2) & 3).min(2)];
        let padding = usize::from((stream[at + 2] >> 1) & 1);
        let size = if mpeg1 { 144_000 } else { 72_000 } * kbps / rate + padding;
        if size == 0 {
            break;
        }
        at += size;
        frames += 1;
    }
    frames
}

/// Kilobits per second of a layer III bitrate index.
fn bitrate_kbps(mpeg1: bool, index: u8) -> usize {
    const MPEG1: [usize; 15] = [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
    ];
    const MPEG2: [usize; 15] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
    let table = if mpeg1 { &MPEG1 } else { &MPEG2 };
    table.get(usize::from(index)).copied().unwrap_or(0)
}

/// CRC-16 (polynomial 0x8005, reflected, initial 0) of the LAME tag.
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (0..8).fold(crc ^ u16::from(b), |crc, _| match crc & 1 {
            1 => (crc >> 1) ^ 0xA001,
            _ => crc >> 1,
        })
    })
}
