//! Ogg Opus (RFC 7845) with `ropus`' encoder and the `ogg` page writer: 20 ms voice frames, pages of about a
//! second, the encoder's look-ahead declared as pre-skip and the padding trimmed by the last granule position.

use ogg::writing::PacketWriteEndInfo;
use ogg::PacketWriter;
use ropus::{Application, Bitrate, Channels, Encoder, Signal};

use super::go_on;
use crate::cancel::Cancel;

/// Granule positions count 48 kHz samples whatever the input rate.
const GRANULE_RATE: u32 = 48_000;
/// Frames per Ogg page (about a second).
const FRAMES_PER_PAGE: usize = 50;

/// Frames encoded between looks at whether the caller still waits (half a second of audio).
const FRAMES_PER_CHECK: usize = 25;

/// Encode mono samples at `rate` (8, 12, 16, 24 or 48 kHz) as Ogg Opus at `kbps`; stops (with an error) soon
/// after `cancel` is set.
pub fn encode(samples: &[f32], rate: u32, kbps: u32, cancel: &Cancel) -> Result<Vec<u8>, String> {
    let mut stream = OpusStream::new(rate, kbps)?;
    stream.cancel = Some(cancel.clone());
    let mut out = stream.push(samples)?;
    out.extend(stream.finish()?);
    Ok(out)
}

/// Ogg Opus written as the samples come: the headers at once, then each push's whole frames in a page of
/// their own (so they can be sent at once), the last frame held back until it is known whether it ends the
/// stream (its page carries the end flag and the final granule position, which trims the padding).
pub struct OpusStream {
    encoder: Encoder,
    writer: PacketWriter<'static, Vec<u8>>,
    serial: u32,
    /// Samples per 20 ms frame at the input rate.
    frame: usize,
    /// 48 kHz granule ticks per input sample.
    scale: u64,
    lookahead: usize,
    pre_skip: u64,
    /// Input not yet a whole frame.
    buffered: Vec<f32>,
    /// The last encoded frame, not yet written.
    held: Option<Vec<u8>>,
    /// Frames encoded so far.
    frames: usize,
    /// Frames written so far.
    written: usize,
    /// Input samples pushed so far.
    samples: u64,
    /// Set when the caller no longer waits for the audio.
    cancel: Option<Cancel>,
}

fn failed(e: &dyn std::fmt::Debug) -> String {
    format!("Opus encoding failed: {e:?}")
}

fn page(e: std::io::Error) -> String {
    format!("writing Ogg pages failed: {e}")
}

impl OpusStream {
    /// A stream of mono audio at `rate` (8, 12, 16, 24 or 48 kHz) at `kbps`; its headers are the first bytes
    /// [`OpusStream::push`] returns.
    pub fn new(rate: u32, kbps: u32) -> Result<Self, String> {
        let encoder = Encoder::builder(rate, Channels::Mono, Application::Voip)
            .bitrate(Bitrate::Bits(kbps * 1_000))
            .signal(Signal::Voice)
            .complexity(10)
            .build()
            .map_err(|e| failed(&e))?;
        let scale = u64::from(GRANULE_RATE / rate);
        // The look-ahead comes in input-rate samples; pre-skip is counted at 48 kHz.
        let lookahead = encoder.lookahead() as usize;
        let pre_skip = lookahead as u64 * scale;
        let serial: u32 = rand::random();
        let mut writer = PacketWriter::new(Vec::new());
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
        Ok(Self {
            encoder,
            writer,
            serial,
            frame: (rate / 50) as usize,
            scale,
            lookahead,
            pre_skip,
            buffered: Vec::new(),
            held: None,
            frames: 0,
            written: 0,
            samples: 0,
            cancel: None,
        })
    }

    /// Encode the next samples; the bytes ready to send.
    pub fn push(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        self.samples += samples.len() as u64;
        self.buffered.extend_from_slice(samples);
        let whole = self.buffered.len() / self.frame * self.frame;
        let input: Vec<f32> = self.buffered.drain(..whole).collect();
        let mut packets = self.encode_frames(&input)?;
        if let Some(last) = packets.pop() {
            let ready = self.held.replace(last).into_iter().chain(packets).collect();
            self.write(ready, false)?;
        }
        Ok(std::mem::take(self.writer.inner_mut()))
    }

    /// Pad the end with silence (pushing the speech out of the encoder's look-ahead) and write the last page.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let total = (self.samples as usize + self.lookahead)
            .div_ceil(self.frame)
            .max(1);
        let mut input = std::mem::take(&mut self.buffered);
        input.resize((total - self.frames) * self.frame, 0.0);
        let mut packets: Vec<Vec<u8>> = self.held.take().into_iter().collect();
        packets.extend(self.encode_frames(&input)?);
        self.write(packets, true)?;
        Ok(self.writer.into_inner())
    }

    fn encode_frames(&mut self, input: &[f32]) -> Result<Vec<Vec<u8>>, String> {
        let mut packet = vec![0u8; 1_500];
        let mut packets = Vec::with_capacity(input.len() / self.frame);
        for (i, chunk) in input.chunks_exact(self.frame).enumerate() {
            if let Some(cancel) = self.cancel.as_ref().filter(|_| i % FRAMES_PER_CHECK == 0) {
                go_on(cancel)?;
            }
            let written = self
                .encoder
                .encode_float(chunk, &mut packet)
                .map_err(|e| failed(&e))?;
            packets.push(packet[..written].to_vec());
            self.frames += 1;
        }
        Ok(packets)
    }

    /// Write packets that follow those written so far, the last ending a page (or, at the end, the stream).
    fn write(&mut self, packets: Vec<Vec<u8>>, last: bool) -> Result<(), String> {
        let count = packets.len();
        for (i, packet) in packets.into_iter().enumerate() {
            self.written += 1;
            let n = self.written;
            let granule = (n * self.frame) as u64 * self.scale;
            let (end, granule) = match (i + 1 == count, last) {
                (true, true) => (
                    PacketWriteEndInfo::EndStream,
                    self.pre_skip + self.samples * self.scale,
                ),
                (true, false) => (PacketWriteEndInfo::EndPage, granule),
                _ if n.is_multiple_of(FRAMES_PER_PAGE) => (PacketWriteEndInfo::EndPage, granule),
                _ => (PacketWriteEndInfo::NormalPacket, granule),
            };
            self.writer
                .write_packet(packet, self.serial, end, granule)
                .map_err(page)?;
        }
        Ok(())
    }
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
