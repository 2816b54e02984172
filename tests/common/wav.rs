//! Audio bytes the tests read and write: WAV properties, PCM in and out of WAV, float fixtures.

use std::path::Path;

/// (sample rate, channels, seconds) of WAV bytes.
pub fn wav_properties(bytes: &[u8]) -> (u32, u16, f64) {
    let reader = hound::WavReader::new(std::io::Cursor::new(bytes)).expect("valid WAV");
    let spec = reader.spec();
    (
        spec.sample_rate,
        spec.channels,
        f64::from(reader.duration()) / f64::from(spec.sample_rate),
    )
}

/// Little-endian float32 values of a fixture file.
pub fn floats(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The 16-bit PCM bytes of a WAV file's data chunk.
pub fn wav_pcm(wav: &[u8]) -> &[u8] {
    let at = wav
        .windows(4)
        .position(|w| w == b"data")
        .expect("a data chunk")
        + 8;
    &wav[at..]
}

/// A WAV file of 16 kHz mono 16-bit little-endian `pcm`.
pub fn wav_16k(pcm: &[u8]) -> Vec<u8> {
    let mut wav = Vec::with_capacity(44 + pcm.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + pcm.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&16_000u32.to_le_bytes());
    wav.extend_from_slice(&32_000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(pcm.len() as u32).to_le_bytes());
    wav.extend_from_slice(pcm);
    wav
}
