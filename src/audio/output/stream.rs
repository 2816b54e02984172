//! Encoding as the speech comes: each piece of synthesised audio is resampled and encoded as it arrives, so
//! the first bytes leave after the first sentence. WAV is written with a streaming header (its sizes set to
//! the largest value, as for a stream of unknown length); MP3 has no Info tag; Ogg Opus and FLAC mark their
//! totals as unknown until the end. Every format decodes to the same audio as the whole-file encoding.

use super::flac::FlacStream;
use super::mp3::Mp3Stream;
use super::ogg_opus::OpusStream;
use super::{g711, Codec, OutputFormat};
use crate::audio::encode::{extend_pcm16, to_i16};
use crate::audio::resample::StreamResampler;
use crate::audio::SAMPLE_RATE;

enum Writer {
    /// WAV (the header still to send when `true`) and raw PCM.
    Pcm {
        header: bool,
    },
    Ulaw,
    Alaw,
    Mp3(Mp3Stream),
    Opus(Box<OpusStream>),
    Flac(Box<FlacStream>),
}

/// One answer's encoder, fed 16 kHz mono samples piece by piece.
pub struct StreamEncoder {
    rate: u32,
    resampler: StreamResampler,
    writer: Writer,
}

impl StreamEncoder {
    /// An encoder writing `format`.
    pub fn new(format: OutputFormat) -> Result<Self, String> {
        let kbps = format.kbps.unwrap_or(128);
        let writer = match format.codec {
            Codec::Wav => Writer::Pcm { header: true },
            Codec::Pcm => Writer::Pcm { header: false },
            Codec::Ulaw => Writer::Ulaw,
            Codec::Alaw => Writer::Alaw,
            Codec::Mp3 => Writer::Mp3(Mp3Stream::new(format.rate, kbps)?),
            // Opus takes 16 kHz as it is (decoders play it at 48 kHz).
            Codec::Opus => Writer::Opus(Box::new(OpusStream::new(SAMPLE_RATE, kbps)?)),
            Codec::Flac => Writer::Flac(Box::new(FlacStream::new(format.rate)?)),
        };
        let rate = match format.codec {
            Codec::Opus => SAMPLE_RATE,
            _ => format.rate,
        };
        Ok(Self {
            rate,
            resampler: StreamResampler::new(SAMPLE_RATE, rate),
            writer,
        })
    }

    /// Encode the next samples (16 kHz mono); the bytes ready to send.
    pub fn push(&mut self, samples_16k: &[f32]) -> Result<Vec<u8>, String> {
        self.resampler.push(samples_16k);
        let samples = self.resampler.take();
        self.write(&samples)
    }

    /// The bytes that end the stream.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let rest = std::mem::replace(&mut self.resampler, StreamResampler::new(1, 1)).finish();
        let mut out = self.write(&rest)?;
        match self.writer {
            Writer::Mp3(mp3) => out.extend(mp3.finish()?),
            Writer::Opus(opus) => out.extend(opus.finish()?),
            Writer::Flac(flac) => out.extend(flac.finish()?),
            Writer::Pcm { .. } | Writer::Ulaw | Writer::Alaw => {}
        }
        Ok(out)
    }

    fn write(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        match &mut self.writer {
            Writer::Pcm { header } => {
                let mut out = Vec::with_capacity(44 + samples.len() * 2);
                if std::mem::take(header) {
                    out.extend_from_slice(&streaming_wav_header(self.rate));
                }
                extend_pcm16(&mut out, samples);
                Ok(out)
            }
            Writer::Ulaw => Ok(samples.iter().map(|&s| g711::ulaw(to_i16(s))).collect()),
            Writer::Alaw => Ok(samples.iter().map(|&s| g711::alaw(to_i16(s))).collect()),
            Writer::Mp3(mp3) => mp3.push(samples),
            Writer::Opus(opus) => opus.push(samples),
            Writer::Flac(flac) => flac.push(samples),
        }
    }
}

/// A mono 16-bit WAV header for a stream of unknown length: the RIFF and data sizes are the largest value,
/// and readers take the data to run to the end of the stream.
fn streaming_wav_header(rate: u32) -> [u8; 44] {
    let mut header = crate::audio::encode::wav_header(rate, 0);
    header[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    header[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speech() -> Vec<f32> {
        crate::tts::Synthesizer::synthesize(
            &crate::tts::EmbeddedVoice::zuri(),
            "Habari ya asubuhi. Salio lako ni shilingi elfu kumi na mbili.",
            &crate::tts::VoiceSettings::default(),
        )
        .unwrap()
    }

    /// Decode `bytes` with sauti's own decoder: the samples at their own rate, and that rate.
    fn decode(bytes: Vec<u8>) -> (Vec<f32>, u32) {
        let decoded = crate::audio::decode::decode(&bytes, &Default::default()).expect("decodes");
        (decoded.samples, decoded.sample_rate)
    }

    #[test]
    fn pieces_streamed_decode_like_the_whole() {
        let samples = speech();
        let third = samples.len() / 3;
        for format in OutputFormat::all() {
            let mut encoder = StreamEncoder::new(format).unwrap();
            let mut streamed = Vec::new();
            for piece in [
                &samples[..third],
                &samples[third..2 * third],
                &samples[2 * third..],
            ] {
                streamed.extend(encoder.push(piece).unwrap());
            }
            streamed.extend(encoder.finish().unwrap());
            let name = format.name();
            if matches!(format.codec, Codec::Pcm | Codec::Ulaw | Codec::Alaw) {
                // Headerless: the same bytes as the whole-file encoding.
                assert_eq!(streamed, format.encode(&samples).unwrap(), "{name}");
                continue;
            }
            let (whole, rate) = decode(format.encode(&samples).unwrap());
            let (stream, stream_rate) = decode(streamed);
            assert_eq!(stream_rate, rate, "{name}");
            // Within 50 ms of the whole (MP3 without its tag keeps the encoder's delay).
            let gap = (stream.len() as i64 - whole.len() as i64).abs();
            assert!(
                gap <= i64::from(rate) / 20,
                "{name}: {} against {}",
                stream.len(),
                whole.len()
            );
        }
    }

    #[test]
    fn the_first_piece_gives_bytes_at_once() {
        let samples = speech();
        for format in OutputFormat::all() {
            let mut encoder = StreamEncoder::new(format).unwrap();
            let first = encoder.push(&samples[..samples.len() / 2]).unwrap();
            assert!(
                first.len() > 100,
                "{}: {} bytes",
                format.name(),
                first.len()
            );
        }
    }
}
