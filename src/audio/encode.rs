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

/// Convert a float sample to 16-bit PCM with clamping and rounding.
fn to_i16(sample: f32) -> i16 {
    if sample.is_nan() {
        return 0;
    }
    (sample.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

#[cfg(test)]
mod tests {
    use super::*;

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
