//! FLAC with `flacenc` (pure Rust): 16-bit mono, fixed block size.

use flacenc::component::BitRepr;
use flacenc::error::Verify;

use super::go_on;
use crate::audio::encode::to_i16;
use crate::cancel::Cancel;

/// Encode mono samples at `rate` as FLAC; stops (with an error) soon after `cancel` is set.
pub fn encode(samples: &[f32], rate: u32, cancel: &Cancel) -> Result<Vec<u8>, String> {
    let pcm: Vec<i32> = samples.iter().map(|&s| i32::from(to_i16(s))).collect();
    let config = flacenc::config::Encoder::default()
        .into_verified()
        .map_err(|e| failed("configuration", &e))?;
    let source = Until {
        samples: flacenc::source::MemSource::from_samples(&pcm, 1, 16, rate as usize),
        cancel,
    };
    let encoded = flacenc::encode_with_fixed_block_size(&config, source, config.block_size);
    go_on(cancel)?;
    let mut stream = encoded.map_err(|e| failed("encoding", &e))?;
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

/// Samples read block by block (a quarter of a second or so) until the caller stops waiting: the encoder
/// then reads an error and stops.
struct Until<'a> {
    samples: flacenc::source::MemSource,
    cancel: &'a Cancel,
}

impl flacenc::source::Source for Until<'_> {
    fn channels(&self) -> usize {
        self.samples.channels()
    }

    fn bits_per_sample(&self) -> usize {
        self.samples.bits_per_sample()
    }

    fn sample_rate(&self) -> usize {
        self.samples.sample_rate()
    }

    fn read_samples<F: flacenc::source::Fill>(
        &mut self,
        block_size: usize,
        dest: &mut F,
    ) -> Result<usize, flacenc::error::SourceError> {
        if self.cancel.is_cancelled() {
            return Err(flacenc::error::SourceError::from_unknown());
        }
        self.samples.read_samples(block_size, dest)
    }

    fn len_hint(&self) -> Option<usize> {
        self.samples.len_hint()
    }
}

/// FLAC written as the samples come: the stream header first, with the totals and checksum left unknown (as
/// FLAC allows for streams), then a frame for each whole block, the short last block at the end.
pub struct FlacStream {
    config: flacenc::error::Verified<flacenc::config::Encoder>,
    info: flacenc::component::StreamInfo,
    buffer: flacenc::source::FrameBuf,
    pending: Vec<i32>,
    frames: usize,
    header: Option<Vec<u8>>,
}

fn failed(what: &str, e: &dyn std::fmt::Debug) -> String {
    format!("FLAC {what} failed: {e:?}")
}

impl FlacStream {
    /// A stream of 16-bit mono audio at `rate`.
    pub fn new(rate: u32) -> Result<Self, String> {
        let config = flacenc::config::Encoder::default()
            .into_verified()
            .map_err(|e| failed("configuration", &e))?;
        let block = config.block_size;
        let mut stream = flacenc::component::Stream::new(rate as usize, 1, 16)
            .map_err(|e| failed("stream info", &e))?;
        let info = stream.stream_info_mut();
        info.set_block_sizes(block, block)
            .and_then(|()| info.set_frame_sizes(0, 0))
            .map_err(|e| failed("stream info", &e))?;
        let info = info.clone();
        let mut sink = flacenc::bitsink::ByteSink::new();
        stream.write(&mut sink).map_err(|e| failed("writing", &e))?;
        Ok(Self {
            buffer: flacenc::source::FrameBuf::with_size(1, block)
                .map_err(|e| failed("configuration", &e))?,
            config,
            info,
            pending: Vec::new(),
            frames: 0,
            header: Some(sink.as_slice().to_vec()),
        })
    }

    /// Encode the next samples; the bytes ready to send (the header first).
    pub fn push(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        self.pending
            .extend(samples.iter().map(|&s| i32::from(to_i16(s))));
        let mut out = self.header.take().unwrap_or_default();
        let block = self.buffer.size();
        let whole = self.pending.len() / block * block;
        let blocks: Vec<i32> = self.pending.drain(..whole).collect();
        for samples in blocks.chunks_exact(block) {
            self.frame(samples, &mut out)?;
        }
        Ok(out)
    }

    /// The short last block.
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        let mut out = self.header.take().unwrap_or_default();
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.frame(&rest, &mut out)?;
        }
        Ok(out)
    }

    fn frame(&mut self, samples: &[i32], out: &mut Vec<u8>) -> Result<(), String> {
        use flacenc::source::Fill as _;
        self.buffer
            .fill_interleaved(samples)
            .map_err(|e| failed("reading samples", &e))?;
        let frame =
            flacenc::encode_fixed_size_frame(&self.config, &self.buffer, self.frames, &self.info)
                .map_err(|e| failed("encoding", &e))?;
        self.frames += 1;
        let mut sink = flacenc::bitsink::ByteSink::new();
        frame.write(&mut sink).map_err(|e| failed("writing", &e))?;
        out.extend_from_slice(sink.as_slice());
        Ok(())
    }
}
