//! A call's recording, when `records.recording` is on: a stereo WAV at 8 kHz (telephone quality), the caller on
//! the left and the agent on the right. The caller's audio is laid down as it arrives; each piece of the agent's
//! speech at the moment it starts to play (after the piece before it), and a reply the caller talked over is cut
//! where it stopped. At most `records.max_recording_seconds` of each side is kept (32 KB a second of call).

use std::time::Instant;

/// Samples a second of recording, each side.
pub const RATE: u32 = 8_000;

/// A recording under way.
pub struct Recording {
    started: Instant,
    caller: Vec<i16>,
    agent: Vec<i16>,
    max: usize,
}

/// 16 kHz samples as the recording keeps them (8 kHz, 16-bit).
pub fn telephone(samples: &[f32]) -> Vec<i16> {
    samples
        .chunks(2)
        .map(|pair| {
            let mean = pair.iter().sum::<f32>() / pair.len() as f32;
            (mean.clamp(-1.0, 1.0) * f32::from(i16::MAX)) as i16
        })
        .collect()
}

impl Recording {
    /// A recording starting now, of at most `max_seconds` a side.
    pub fn new(max_seconds: u64) -> Self {
        Self {
            started: Instant::now(),
            caller: Vec::new(),
            agent: Vec::new(),
            max: usize::try_from(max_seconds.saturating_mul(u64::from(RATE))).unwrap_or(usize::MAX),
        }
    }

    fn now(&self) -> usize {
        (self.started.elapsed().as_secs_f64() * f64::from(RATE)) as usize
    }

    /// The caller's audio (16 kHz), as it arrives.
    pub fn caller(&mut self, samples: &[f32]) {
        let room = self.max.saturating_sub(self.caller.len());
        let heard = telephone(samples);
        self.caller
            .extend_from_slice(&heard[..heard.len().min(room)]);
    }

    /// A piece of the agent's speech (already at 8 kHz), played after the pieces before it.
    pub fn agent(&mut self, samples: &[i16]) {
        let at = self.now().max(self.agent.len()).min(self.max);
        self.agent.resize(at, 0);
        let room = self.max.saturating_sub(self.agent.len());
        self.agent
            .extend_from_slice(&samples[..samples.len().min(room)]);
    }

    /// The caller talked over the agent: what was still to play of the reply was never heard.
    pub fn cut_agent(&mut self) {
        let now = self.now();
        self.agent.truncate(now.max(1));
    }

    /// The whole recording as a WAV file.
    pub fn wav(&self) -> Vec<u8> {
        let frames = self.caller.len().max(self.agent.len());
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: RATE,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = std::io::Cursor::new(Vec::with_capacity(44 + frames * 4));
        if let Ok(mut writer) = hound::WavWriter::new(&mut out, spec) {
            for i in 0..frames {
                let _ = writer.write_sample(self.caller.get(i).copied().unwrap_or(0));
                let _ = writer.write_sample(self.agent.get(i).copied().unwrap_or(0));
            }
            let _ = writer.finalize();
        }
        out.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_is_its_own_channel_and_bounded() {
        let mut recording = Recording::new(1);
        recording.caller(&vec![0.5; 4_000]);
        recording.agent(&[1_000; 3_000]);
        recording.caller(&vec![0.5; 40_000]);
        let wav = recording.wav();
        let reader = hound::WavReader::new(std::io::Cursor::new(wav)).unwrap();
        assert_eq!(reader.spec().channels, 2);
        assert_eq!(reader.spec().sample_rate, RATE);
        let samples: Vec<i16> = reader.into_samples().map(Result::unwrap).collect();
        assert_eq!(samples.len(), 2 * 8_000, "a second a side at most");
        let left: Vec<i16> = samples.iter().step_by(2).copied().collect();
        let right: Vec<i16> = samples.iter().skip(1).step_by(2).copied().collect();
        assert!(
            left.iter().all(|&s| s > 10_000),
            "the caller on the left, all of it"
        );
        let spoken: Vec<usize> = (0..right.len()).filter(|&i| right[i] == 1_000).collect();
        assert_eq!(spoken.len(), 3_000, "the agent's piece on the right, once");
        assert_eq!(spoken[2_999] - spoken[0], 2_999, "in one run");
        assert!(spoken[0] < 800, "where it began to play");
    }
}
