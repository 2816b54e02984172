//! 16 kHz mono 16-bit PCM WAV, written in memory with hound.

use std::io::Cursor;

use super::SAMPLE_RATE;

/// Encode mono samples at 16 kHz as a complete WAV file (44-byte header, 16-bit PCM).
///
/// Samples are clamped to `-1.0..=1.0` and rounded; NaN becomes silence.
pub fn encode_wav_16k(samples: &[f32]) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = Vec::with_capacity(44 + samples.len() * 2);
    {
        // Writing to a growable in-memory buffer cannot fail for any length below hound's 4 GiB limit,
        // which callers never approach (the longest output is capped far below it).
        let mut writer =
            hound::WavWriter::new(Cursor::new(&mut bytes), spec).expect("in-memory WAV header");
        {
            let mut i16_writer = writer.get_i16_writer(samples.len() as u32);
            for &s in samples {
                i16_writer.write_sample(to_i16(s));
            }
            i16_writer.flush().expect("in-memory WAV samples");
        }
        writer.finalize().expect("in-memory WAV finalise");
    }
    bytes
}

/// Length of the canonical WAV header [`encode_wav_16k`] and [`wav_header_16k`] write.
pub const WAV_HEADER_LEN: usize = 44;

/// Bytes in the 16 kHz mono 16-bit WAV of `samples` samples.
pub const fn wav_len_16k(samples: usize) -> usize {
    WAV_HEADER_LEN + 2 * samples
}

/// The 44-byte header of a 16 kHz mono 16-bit PCM WAV holding `samples` samples: the bytes
/// [`encode_wav_16k`] starts with, for writers that stream the samples after it ([`extend_pcm16`]).
pub fn wav_header_16k(samples: usize) -> [u8; WAV_HEADER_LEN] {
    wav_header(SAMPLE_RATE, samples)
}

/// The 44-byte header of a mono 16-bit PCM WAV at `rate` holding `samples` samples.
pub fn wav_header(rate: u32, samples: usize) -> [u8; WAV_HEADER_LEN] {
    let data = u32::try_from(2 * samples).unwrap_or(u32::MAX - 36);
    let byte_rate = rate * 2;
    let mut header = [0u8; WAV_HEADER_LEN];
    let fields: [&[u8]; 12] = [
        b"RIFF",
        &(36 + data).to_le_bytes(),
        b"WAVEfmt ",
        &16u32.to_le_bytes(), // fmt chunk size
        &1u16.to_le_bytes(),  // PCM
        &1u16.to_le_bytes(),  // mono
        &rate.to_le_bytes(),
        &byte_rate.to_le_bytes(),
        &2u16.to_le_bytes(),  // block align
        &16u16.to_le_bytes(), // bits per sample
        b"data",
        &data.to_le_bytes(),
    ];
    let mut at = 0;
    for field in fields {
        header[at..at + field.len()].copy_from_slice(field);
        at += field.len();
    }
    header
}

/// Append `samples` as 16-bit little-endian PCM (clamped, rounded, NaN as silence).
pub fn extend_pcm16(out: &mut Vec<u8>, samples: &[f32]) {
    out.reserve(samples.len() * 2);
    for &sample in samples {
        out.extend_from_slice(&to_i16(sample).to_le_bytes());
    }
}

/// Convert a float sample to 16-bit PCM: clamped, rounded half away from zero, NaN as silence.
///
/// `as` saturates and maps NaN to 0; adding ±0.5 before truncating rounds without a libm call, which keeps
/// the loop vectorisable (several times faster than `f32::round` here).
pub fn to_i16(sample: f32) -> i16 {
    let scaled = sample.clamp(-1.0, 1.0) * 32767.0;
    (scaled + 0.5f32.copysign(scaled)) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_header_and_pcm_equal_the_whole_file() {
        let samples: Vec<f32> = (0..1001).map(|i| ((i as f32) * 0.37).sin() * 1.2).collect();
        let mut streamed = wav_header_16k(samples.len()).to_vec();
        let (a, b) = samples.split_at(333);
        extend_pcm16(&mut streamed, a);
        extend_pcm16(&mut streamed, b);
        assert_eq!(streamed, encode_wav_16k(&samples));
        assert_eq!(streamed.len(), wav_len_16k(samples.len()));
    }

    #[test]
    fn rounding_matches_round_half_away_from_zero() {
        for i in -70_000..70_000 {
            let x = i as f32 / 65_534.0;
            let expected = (x.clamp(-1.0, 1.0) * 32767.0).round() as i16;
            assert_eq!(to_i16(x), expected, "{x}");
        }
        assert_eq!((to_i16(f32::NAN), to_i16(f32::INFINITY)), (0, 32767));
        assert_eq!(to_i16(f32::NEG_INFINITY), -32767);
    }

    #[test]
    fn header_and_samples_round_trip_through_a_reader() {
        let samples = [0.0, 0.5, -0.5, 1.5, -2.0, f32::NAN];
        let wav = encode_wav_16k(&samples);
        assert_eq!(wav.len(), 44 + samples.len() * 2);
        let reader = hound::WavReader::new(Cursor::new(&wav)).expect("valid WAV");
        let spec = reader.spec();
        assert_eq!(
            (spec.channels, spec.sample_rate, spec.bits_per_sample),
            (1, 16_000, 16)
        );
        let back: Vec<i16> = reader
            .into_samples::<i16>()
            .map(|s| s.expect("sample"))
            .collect();
        assert_eq!(back, vec![0, 16384, -16384, 32767, -32767, 0]);
    }
}
