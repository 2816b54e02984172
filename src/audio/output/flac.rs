//! FLAC with `flacenc` (pure Rust): 16-bit mono, fixed block size.

use flacenc::component::BitRepr;
use flacenc::error::Verify;

use crate::audio::encode::to_i16;

/// Encode mono samples at `rate` as FLAC.
pub fn encode(samples: &[f32], rate: u32) -> Result<Vec<u8>, String> {
    let failed = |what: &str, e: &dyn std::fmt::Debug| format!("FLAC {what} failed: {e:?}");
    let pcm: Vec<i32> = samples.iter().map(|&s| i32::from(to_i16(s))).collect();
    let config = flacenc::config::Encoder::default()
        .into_verified()
        .map_err(|e| failed("configuration", &e))?;
    let source = flacenc::source::MemSource::from_samples(&pcm, 1, 16, rate as usize);
    let mut stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size)
        .map_err(|e| failed("encoding", &e))?;
    // The stream info must not count the short last block as the smallest (decoders would take the stream
    // for a variable block size one).
    let largest = stream.stream_info().max_block_size();
    stream
        .stream_info_mut()
        .set_block_sizes(largest, largest)
        .map_err(|e| failed("stream info", &e))?;
    let mut sink = flacenc::bitsink::ByteSink::new();
    stream.write(&mut sink).map_err(|e| failed("writing", &e))?;
    Ok(sink.as_slice().to_vec())
}
