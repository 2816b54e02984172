//! Voice-activity detection on live audio, for turn-taking: 20 ms frames of 16 kHz audio are compared with a
//! noise floor that follows the line (the quietest recent frame while nobody speaks, so steady hum or hiss is
//! never speech). Speech
//! starts after a run of voiced frames (a click or a cough is too short); the turn ends after a stretch of
//! silence as long as the end-of-turn setting. The turn's audio keeps a little of what came before the first
//! voiced frame, so soft onsets are not cut.

use std::collections::VecDeque;
use std::time::Duration;

/// Samples per frame (20 ms at 16 kHz).
const FRAME: usize = 320;
/// Audio kept from before speech starts.
const PREROLL_FRAMES: usize = 15;
/// Voiced frames in a row that start speech (100 ms).
const START_FRAMES: usize = 5;
/// How far above the noise floor a voiced frame is.
const MARGIN_DB: f64 = 12.0;
/// No frame quieter than this is voiced, however quiet the line.
const FLOOR_DBFS: f64 = -48.0;
/// The noise floor is the quietest frame of this many recent frames without speech (1.5 s).
const NOISE_WINDOW: usize = 75;
/// A turn longer than this ends here (its audio is recognised as it is).
const MAX_TURN_FRAMES: usize = 30 * 50;
/// The most audio one turn carries (30 s at 16 kHz), preroll and tail included.
pub const MAX_TURN_SAMPLES: usize = (MAX_TURN_FRAMES + PREROLL_FRAMES + TAIL_FRAMES) * FRAME;
/// Silence kept after the last voiced frame.
const TAIL_FRAMES: usize = 10;

/// What the detector noticed in the audio just pushed.
#[derive(Debug, Clone, PartialEq)]
pub enum VadEvent {
    /// The caller started speaking.
    SpeechStarted,
    /// The caller's turn ended: its audio (16 kHz mono).
    TurnEnded(Vec<f32>),
}

/// A detector for one live stream.
#[derive(Debug)]
pub struct StreamingVad {
    end_frames: usize,
    partial: Vec<f32>,
    /// Levels of recent frames without speech, in dB.
    recent: VecDeque<f64>,
    preroll: VecDeque<Vec<f32>>,
    voiced_run: usize,
    silent_run: usize,
    /// The turn so far, while the caller speaks.
    turn: Option<Vec<f32>>,
    turn_frames: usize,
    /// Voiced frames in the turn so far.
    voiced_frames: usize,
}

impl StreamingVad {
    /// A detector ending a turn after `end_of_turn` of silence.
    pub fn new(end_of_turn: Duration) -> Self {
        Self {
            end_frames: (end_of_turn.as_millis() as usize / 20).max(1),
            partial: Vec::with_capacity(FRAME),
            recent: VecDeque::with_capacity(NOISE_WINDOW + 1),
            preroll: VecDeque::with_capacity(PREROLL_FRAMES + 1),
            voiced_run: 0,
            silent_run: 0,
            turn: None,
            turn_frames: 0,
            voiced_frames: 0,
        }
    }

    /// Whether the caller is speaking now.
    pub fn in_speech(&self) -> bool {
        self.turn.is_some()
    }

    /// How much of the turn under way is speech (its pauses left out); zero between turns.
    pub fn voiced(&self) -> Duration {
        match self.turn {
            Some(_) => Duration::from_millis((self.voiced_frames * 20) as u64),
            None => Duration::ZERO,
        }
    }

    /// Feed 16 kHz mono samples; what happened in them, in order.
    pub fn push(&mut self, mut samples: &[f32]) -> Vec<VadEvent> {
        let mut events = Vec::new();
        while !samples.is_empty() {
            let take = (FRAME - self.partial.len()).min(samples.len());
            self.partial.extend_from_slice(&samples[..take]);
            samples = &samples[take..];
            if self.partial.len() == FRAME {
                let frame = std::mem::replace(&mut self.partial, Vec::with_capacity(FRAME));
                events.extend(self.frame(frame));
            }
        }
        events
    }

    fn frame(&mut self, frame: Vec<f32>) -> Option<VadEvent> {
        let energy = frame
            .iter()
            .map(|&s| f64::from(s) * f64::from(s))
            .sum::<f64>()
            / FRAME as f64;
        let db = if energy > 0.0 {
            10.0 * energy.log10()
        } else {
            -120.0
        };
        if self.turn.is_none() {
            self.recent.push_back(db);
            if self.recent.len() > NOISE_WINDOW {
                self.recent.pop_front();
            }
        }
        let noise = self.recent.iter().copied().fold(f64::INFINITY, f64::min);
        let voiced = db > (noise + MARGIN_DB).max(FLOOR_DBFS);
        match self.turn.as_mut() {
            None => {
                self.preroll.push_back(frame);
                if self.preroll.len() > PREROLL_FRAMES {
                    self.preroll.pop_front();
                }
                self.voiced_run = if voiced { self.voiced_run + 1 } else { 0 };
                if self.voiced_run < START_FRAMES {
                    return None;
                }
                let turn: Vec<f32> = self.preroll.drain(..).flatten().collect();
                self.turn_frames = turn.len() / FRAME;
                self.turn = Some(turn);
                self.silent_run = 0;
                self.voiced_frames = START_FRAMES;
                Some(VadEvent::SpeechStarted)
            }
            Some(turn) => {
                turn.extend_from_slice(&frame);
                self.turn_frames += 1;
                self.silent_run = if voiced { 0 } else { self.silent_run + 1 };
                self.voiced_frames += usize::from(voiced);
                if self.silent_run < self.end_frames && self.turn_frames < MAX_TURN_FRAMES {
                    return None;
                }
                let mut turn = self.turn.take().unwrap_or_default();
                let trailing = self.silent_run.saturating_sub(TAIL_FRAMES) * FRAME;
                turn.truncate(turn.len().saturating_sub(trailing));
                self.voiced_run = 0;
                self.silent_run = 0;
                Some(VadEvent::TurnEnded(turn))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(seconds: f64, amplitude: f32) -> Vec<f32> {
        (0..(seconds * 16_000.0) as usize)
            .map(|i| (i as f32 * 0.07).sin() * amplitude)
            .collect()
    }

    fn noise(seconds: f64, amplitude: f32) -> Vec<f32> {
        let mut state = 12345u32;
        (0..(seconds * 16_000.0) as usize)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * amplitude
            })
            .collect()
    }

    fn feed(vad: &mut StreamingVad, samples: &[f32], block: usize) -> Vec<VadEvent> {
        samples.chunks(block).flat_map(|b| vad.push(b)).collect()
    }

    #[test]
    fn a_turn_starts_with_speech_and_ends_after_the_silence_setting() {
        for block in [160, 320, 999, 4000] {
            let mut vad = StreamingVad::new(Duration::from_millis(500));
            let mut audio = noise(0.5, 0.002);
            audio.extend(tone(1.2, 0.3));
            let mut line = noise(0.3, 0.002);
            // A pause shorter than the setting does not end the turn.
            audio.append(&mut line);
            audio.extend(tone(0.8, 0.3));
            audio.extend(noise(0.7, 0.002));
            let events = feed(&mut vad, &audio, block);
            assert_eq!(events.len(), 2, "{block}: {events:?}");
            assert_eq!(events[0], VadEvent::SpeechStarted);
            let VadEvent::TurnEnded(turn) = &events[1] else {
                panic!("{events:?}");
            };
            let seconds = turn.len() as f64 / 16_000.0;
            // Both bursts and the pause, a little before and after: not the leading or trailing line noise.
            assert!((2.3..2.9).contains(&seconds), "{block}: {seconds}");
            assert!(!vad.in_speech());
        }
    }

    #[test]
    fn clicks_and_steady_line_noise_are_not_speech() {
        let mut vad = StreamingVad::new(Duration::from_millis(300));
        let mut audio = noise(2.0, 0.05);
        audio.extend(tone(0.04, 0.8));
        audio.extend(noise(2.0, 0.05));
        assert!(feed(&mut vad, &audio, 320).is_empty());
        // Speech over that noise is still heard.
        let speech = tone(0.6, 0.5);
        let events = feed(&mut vad, &speech, 320);
        assert_eq!(events, vec![VadEvent::SpeechStarted]);
    }

    #[test]
    fn the_speech_of_a_turn_leaves_its_pauses_out() {
        let mut vad = StreamingVad::new(Duration::from_millis(500));
        assert_eq!(vad.voiced(), Duration::ZERO);
        let mut audio = vec![0.0; 16_000];
        audio.extend(tone(0.3, 0.3));
        audio.extend(vec![0.0; 6_400]);
        vad.push(&audio);
        assert!(vad.in_speech());
        let voiced = vad.voiced().as_millis();
        assert!((260..=320).contains(&voiced), "{voiced} ms");
        vad.push(&vec![0.0; 8_000]);
        assert_eq!(vad.voiced(), Duration::ZERO, "between turns");
    }

    #[test]
    fn digital_silence_never_starts_a_turn() {
        let mut vad = StreamingVad::new(Duration::from_millis(500));
        assert!(feed(&mut vad, &vec![0.0; 48_000], 320).is_empty());
    }
}
