//! The audio of one transcription session: decoded at the caller's rate and kept for the turn under way (so a
//! committed turn is resampled in one piece, as an upload is, and the same audio gives the same transcript),
//! and followed by the voice-activity detector at 16 kHz when the server detects turns.

use crate::audio::resample::StreamResampler;
use crate::audio::vad::{StreamingVad, VadEvent};
use crate::audio::SAMPLE_RATE;
use crate::http::native::realtime::wire::{linear, InputFormat};

use super::wire::{Format, Settings};

/// The most audio a turn committed by the client may hold.
pub const MAX_BUFFER_SECONDS: usize = 120;
/// Audio kept from before speech starts is the padding asked for, plus what the detector needs to notice it.
const DETECTION_MS: usize = 200;

/// What the audio just taken in did.
#[derive(Debug, PartialEq)]
pub enum Heard {
    /// Speech started, this far into the session's audio.
    Started { audio_start_ms: u64 },
    /// The turn ended (silence), this far in: its audio at 16 kHz.
    Ended {
        audio_end_ms: u64,
        samples: Vec<f32>,
    },
}

/// One session's audio.
pub struct Live {
    rate: u32,
    format: Format,
    raw: Vec<f32>,
    vad: Option<(StreamingVad, StreamResampler)>,
    /// Samples the detector has heard, at 16 kHz.
    heard: usize,
    padding_ms: usize,
}

impl Live {
    /// Audio read as `settings` say.
    pub fn new(settings: &Settings, turns: &crate::turns::TurnModels) -> Self {
        let rate = match settings.format {
            Format::Pcm24k => 24_000,
            Format::Ulaw | Format::Alaw => 8_000,
        };
        let vad = settings.silence_ms.map(|silence| {
            (
                turns.silence(std::time::Duration::from_millis(silence)),
                StreamResampler::low_latency(rate, SAMPLE_RATE),
            )
        });
        Self {
            rate,
            format: settings.format,
            raw: Vec::new(),
            vad,
            heard: 0,
            padding_ms: settings.prefix_padding_ms as usize,
        }
    }

    /// Whether the caller is speaking (as the detector hears it).
    pub fn in_speech(&self) -> bool {
        self.vad.as_ref().is_some_and(|(vad, _)| vad.in_speech())
    }

    /// Seconds of audio held for the turn under way.
    pub fn held_seconds(&self) -> f64 {
        self.raw.len() as f64 / f64::from(self.rate)
    }

    /// Take encoded audio in: what the detector noticed, or why the audio is refused (odd PCM, a full buffer).
    pub fn take(&mut self, bytes: &[u8]) -> Result<Vec<Heard>, String> {
        let format = match self.format {
            Format::Pcm24k => InputFormat::Pcm(24_000),
            Format::Ulaw => InputFormat::Ulaw,
            Format::Alaw => InputFormat::Alaw,
        };
        let samples = linear(format, bytes)?;
        if self.vad.is_none()
            && self.raw.len() + samples.len() > MAX_BUFFER_SECONDS * self.rate as usize
        {
            return Err(format!(
                "the input audio buffer holds at most {MAX_BUFFER_SECONDS} s: commit it before appending more"
            ));
        }
        self.raw.extend_from_slice(&samples);
        let Some((vad, resampler)) = self.vad.as_mut() else {
            return Ok(Vec::new());
        };
        resampler.push(&samples);
        let at_16k = resampler.take();
        let events = vad.push(&at_16k);
        let speaking = vad.in_speech();
        self.heard += at_16k.len();
        let now_ms = self.heard as u64 * 1000 / u64::from(SAMPLE_RATE);
        let mut heard = Vec::new();
        for event in events {
            heard.push(match event {
                VadEvent::SpeechStarted => Heard::Started {
                    audio_start_ms: now_ms.saturating_sub(DETECTION_MS as u64),
                },
                VadEvent::TurnEnded(..) => Heard::Ended {
                    audio_end_ms: now_ms,
                    samples: self.commit(),
                },
                // Turns here end after a fixed silence, nothing is judged, and a turn is recognised once ended.
                VadEvent::Paused { .. } | VadEvent::Settled(_) => continue,
            });
        }
        if !speaking {
            // Between turns only the padding before the next is kept.
            let keep = (self.padding_ms + DETECTION_MS) * self.rate as usize / 1000;
            let excess = self.raw.len().saturating_sub(keep);
            self.raw.drain(..excess);
        }
        Ok(heard)
    }

    /// The turn under way at 16 kHz, resampled in one piece, without ending it.
    pub fn so_far(&self) -> Vec<f32> {
        crate::audio::resample::to_16k(&self.raw, self.rate)
    }

    /// End the turn: its audio at 16 kHz.
    pub fn commit(&mut self) -> Vec<f32> {
        let raw = std::mem::take(&mut self.raw);
        crate::audio::resample::to_16k(&raw, self.rate)
    }

    /// Drop the audio of the turn under way.
    pub fn clear(&mut self) {
        self.raw.clear();
    }
}
