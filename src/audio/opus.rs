//! Opus packets (from Ogg or WebM/Matroska demuxed by symphonia) decoded with `ropus`, a pure-Rust port of the
//! reference decoder (bit-exact with libopus, so no C toolchain or system library is needed).

use ropus::{Channels, DecodeMode, Decoder, OpusMSDecoder};

/// Opus always decodes at 48 kHz here; the resampler takes it to 16 kHz with a proper low-pass.
pub(crate) const OPUS_RATE: u32 = 48_000;
/// The longest Opus packet is 120 ms.
const MAX_FRAME_48K: usize = 5_760;

/// The identification header ("OpusHead", RFC 7845 §5.1) carried as codec extra data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpusHead {
    /// Output channel count.
    pub channels: u8,
    /// Samples at 48 kHz to drop from the start of the decoded stream.
    pub pre_skip: u16,
    /// Output gain in dB, Q7.8 fixed point.
    gain_q8: i16,
    /// Channel mapping family (0: mono/stereo, 1: Vorbis order surround, 255: unordered).
    family: u8,
    /// Streams and coupled streams in each packet (families 1 and 255).
    streams: u8,
    coupled: u8,
    /// Decoded channel index for each output channel.
    mapping: Vec<u8>,
}

impl OpusHead {
    /// Parse the header, rejecting what would make the decoder misbehave.
    pub fn parse(data: &[u8]) -> Result<Self, String> {
        if data.len() < 19 || !data.starts_with(b"OpusHead") {
            return Err("missing or short OpusHead header".into());
        }
        let channels = data[9];
        if channels == 0 {
            return Err("OpusHead declares zero channels".into());
        }
        let pre_skip = u16::from_le_bytes([data[10], data[11]]);
        let gain_q8 = i16::from_le_bytes([data[16], data[17]]);
        let family = data[18];
        let (streams, coupled, mapping) = if family == 0 {
            if channels > 2 {
                return Err(format!("mapping family 0 cannot carry {channels} channels"));
            }
            (1, channels - 1, (0..channels).collect())
        } else {
            let table = data
                .get(19..21 + usize::from(channels))
                .ok_or("OpusHead channel mapping table is truncated")?;
            (table[0], table[1], table[2..].to_vec())
        };
        if streams == 0 || coupled > streams {
            return Err("OpusHead stream counts are inconsistent".into());
        }
        Ok(Self {
            channels,
            pre_skip,
            gain_q8,
            family,
            streams,
            coupled,
            mapping,
        })
    }
}

enum Inner {
    /// Mono or stereo (mapping family 0).
    Single(Box<Decoder>),
    /// Surround or unordered multistream (families 1 and 255); 16-bit output is all this decoder offers.
    Multi(Box<OpusMSDecoder>, Vec<i16>),
}

/// Decodes one Opus stream packet by packet, downmixing to mono.
pub(crate) struct OpusStream {
    inner: Inner,
    /// Channels in the decoder's output (1 for mono and stereo streams, which are mixed inside the decoder).
    channels: usize,
    gain: f32,
    interleaved: Vec<f32>,
}

impl OpusStream {
    pub fn new(head: &OpusHead) -> Result<Self, String> {
        let (inner, channels) = if head.family == 0 {
            // The reference decoder mixes a stereo stream down to mono itself (mid channel for SILK, L+R
            // for CELT), which is the channel average we want at about half the work.
            let decoder = Decoder::new(OPUS_RATE, Channels::Mono).map_err(|e| e.to_string())?;
            (Inner::Single(Box::new(decoder)), 1)
        } else {
            let channels = usize::from(head.channels);
            let decoder = OpusMSDecoder::new(
                OPUS_RATE as i32,
                i32::from(head.channels),
                i32::from(head.streams),
                i32::from(head.coupled),
                &head.mapping,
            )
            .map_err(|code| format!("cannot set up the Opus multistream decoder (code {code})"))?;
            (
                Inner::Multi(Box::new(decoder), vec![0; MAX_FRAME_48K * channels]),
                channels,
            )
        };
        Ok(Self {
            inner,
            channels,
            gain: 10f32.powf(f32::from(head.gain_q8) / 256.0 / 20.0),
            interleaved: vec![0.0; MAX_FRAME_48K * channels],
        })
    }

    /// Decode one packet and append its mono mix to `out`; returns the frames appended.
    pub fn decode_mono(&mut self, packet: &[u8], out: &mut Vec<f32>) -> Result<usize, String> {
        if packet.is_empty() {
            // An empty packet would ask for loss concealment; in a file it is just nothing.
            return Ok(0);
        }
        let frames = match &mut self.inner {
            Inner::Single(d) => d
                .decode_float(packet, &mut self.interleaved, DecodeMode::Normal)
                .map_err(|e| e.to_string())?,
            Inner::Multi(d, pcm) => {
                let len =
                    i32::try_from(packet.len()).map_err(|_| "Opus packet too large".to_string())?;
                let frames = d
                    .decode(Some(packet), len, pcm, MAX_FRAME_48K as i32, false)
                    .map_err(|code| format!("invalid Opus packet (code {code})"))?;
                let frames = usize::try_from(frames).unwrap_or(0);
                for (f, &s) in self
                    .interleaved
                    .iter_mut()
                    .zip(&pcm[..frames * self.channels])
                {
                    *f = f32::from(s) / 32_768.0;
                }
                frames
            }
        };
        let scale = self.gain / self.channels as f32;
        out.extend(
            self.interleaved[..frames * self.channels]
                .chunks_exact(self.channels)
                .map(|frame| frame.iter().sum::<f32>() * scale),
        );
        Ok(frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(channels: u8, family: u8) -> Vec<u8> {
        let mut h = b"OpusHead\x01".to_vec();
        h.push(channels);
        h.extend_from_slice(&312u16.to_le_bytes());
        h.extend_from_slice(&48_000u32.to_le_bytes());
        h.extend_from_slice(&0i16.to_le_bytes());
        h.push(family);
        h
    }

    #[test]
    fn parses_family_zero_and_rejects_bad_headers() {
        let parsed = OpusHead::parse(&head(2, 0)).expect("valid header");
        assert_eq!(
            (parsed.channels, parsed.pre_skip, parsed.coupled),
            (2, 312, 1)
        );
        assert!(OpusHead::parse(&head(0, 0)).is_err());
        assert!(OpusHead::parse(&head(6, 0)).is_err());
        assert!(
            OpusHead::parse(&head(6, 1)).is_err(),
            "family 1 needs a mapping table"
        );
        assert!(OpusHead::parse(b"OpusHea").is_err());
    }
}
