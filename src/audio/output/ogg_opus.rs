//! Ogg Opus (RFC 7845) with `ropus`' encoder and the `ogg` page writer: 20 ms voice frames, pages of about a
//! second, the encoder's look-ahead declared as pre-skip and the padding trimmed by the last granule position.

use ogg::writing::PacketWriteEndInfo;
use ogg::PacketWriter;
use ropus::{Application, Bitrate, Channels, Encoder, Signal};

/// Granule positions count 48 kHz samples whatever the input rate.
const GRANULE_RATE: u32 = 48_000;
/// Frames per Ogg page (about a second).
const FRAMES_PER_PAGE: usize = 50;

/// Encode mono samples at `rate` (8, 12, 16, 24 or 48 kHz) as Ogg Opus at `kbps`.
pub fn encode(samples: &[f32], rate: u32, kbps: u32) -> Result<Vec<u8>, String> {
    let failed = |e: &dyn std::fmt::Debug| format!("Opus encoding failed: {e:?}");
    let frame = (rate / 50) as usize;
    let scale = u64::from(GRANULE_RATE / rate);
    let mut encoder = Encoder::builder(rate, Channels::Mono, Application::Voip)
        .bitrate(Bitrate::Bits(kbps * 1_000))
        .signal(Signal::Voice)
        .complexity(10)
        .build()
        .map_err(|e| failed(&e))?;
    // The look-ahead comes in input-rate samples; pre-skip is counted at 48 kHz.
    let lookahead = encoder.lookahead() as usize;
    let pre_skip = lookahead as u64 * scale;
    let serial: u32 = rand::random();
    let mut writer = PacketWriter::new(Vec::new());
    let page = |e: std::io::Error| format!("writing Ogg pages failed: {e}");
    writer
        .write_packet(
            head(rate, pre_skip as u16),
            serial,
            PacketWriteEndInfo::EndPage,
            0,
        )
        .map_err(page)?;
    writer
        .write_packet(tags(), serial, PacketWriteEndInfo::EndPage, 0)
        .map_err(page)?;
    // Silence after the speech pushes its end out of the encoder; whole frames only.
    let mut padded = samples.to_vec();
    padded.resize(
        (samples.len() + lookahead).div_ceil(frame).max(1) * frame,
        0.0,
    );
    let last_granule = pre_skip + samples.len() as u64 * scale;
    let frames = padded.len() / frame;
    let mut packet = vec![0u8; 1_500];
    for (i, chunk) in padded.chunks_exact(frame).enumerate() {
        let written = encoder
            .encode_float(chunk, &mut packet)
            .map_err(|e| failed(&e))?;
        let (end, granule) = match i + 1 {
            n if n == frames => (PacketWriteEndInfo::EndStream, last_granule),
            n if n % FRAMES_PER_PAGE == 0 => {
                (PacketWriteEndInfo::EndPage, (n * frame) as u64 * scale)
            }
            n => (PacketWriteEndInfo::NormalPacket, (n * frame) as u64 * scale),
        };
        writer
            .write_packet(packet[..written].to_vec(), serial, end, granule)
            .map_err(page)?;
    }
    Ok(writer.into_inner())
}

/// The identification header (RFC 7845 §5.1): version 1, mono, pre-skip, the input rate, no gain, family 0.
fn head(rate: u32, pre_skip: u16) -> Vec<u8> {
    let mut head = b"OpusHead".to_vec();
    head.extend_from_slice(&[1, 1]);
    head.extend_from_slice(&pre_skip.to_le_bytes());
    head.extend_from_slice(&rate.to_le_bytes());
    head.extend_from_slice(&0i16.to_le_bytes());
    head.push(0);
    head
}

/// The comment header (RFC 7845 §5.2): the vendor string and no comments.
fn tags() -> Vec<u8> {
    let vendor = concat!("sauti ", env!("CARGO_PKG_VERSION"));
    let mut tags = b"OpusTags".to_vec();
    tags.extend_from_slice(&(vendor.len() as u32).to_le_bytes());
    tags.extend_from_slice(vendor.as_bytes());
    tags.extend_from_slice(&0u32.to_le_bytes());
    tags
}
