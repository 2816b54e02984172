//! Voice-activity detection on live audio, for turn-taking. A [`SpeechJudge`] says of each frame of 16 kHz audio
//! whether it is speech: the energy judge here (a frame well above a noise floor that follows the line: the
//! quietest recent frame while nobody speaks, so steady hum or hiss is never speech), or a model
//! (`crate::turns`). Speech starts after 100 ms of speech frames in a row (a click or a cough is too short).
//! The turn ends after a stretch of silence as long as the end-of-turn setting, or, when an end-of-turn model
//! judges the turn, after a short pause it judges complete (or a longer one, up to a bound, when it does not).
//! The turn's audio keeps a little of what came before the first speech frame, so soft onsets are not cut.

use std::collections::VecDeque;
use std::time::Duration;

/// Samples per second.
const RATE: usize = 16_000;
/// Audio kept from before speech starts.
const PREROLL_MS: usize = 300;
/// Speech in a row that starts a turn.
const START_MS: usize = 100;
/// Silence kept after the last speech frame.
const TAIL_MS: usize = 200;
/// The most audio one turn carries (30 s of speech, preroll and tail included); a longer turn ends there
/// (its audio is recognised as it is).
pub const MAX_TURN_SAMPLES: usize = (30_000 + PREROLL_MS + TAIL_MS) * RATE / 1000;
/// The audio an end-of-turn judgement reads: the last 8 s of the turn.
pub const JUDGED_SAMPLES: usize = 8 * RATE;
/// Audio held while a judgement is awaited; past this the pause is taken as not judged.
const MAX_HELD: usize = RATE;

/// Says whether each frame of a stream is speech.
pub trait SpeechJudge: Send {
    /// Samples (16 kHz) in a frame.
    fn frame_len(&self) -> usize;
    /// Whether `frame` is speech; `in_turn` while the caller is speaking (a judge may be slower to let go).
    fn is_speech(&mut self, frame: &[f32], in_turn: bool) -> bool;
}

/// How a turn ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ending {
    /// After this much silence.
    Silence(Duration),
    /// After a pause this long, if judged complete; otherwise after `longest` of silence.
    Judged {
        /// The pause after which the turn is judged.
        pause: Duration,
        /// The silence that ends a turn whatever the judgement.
        longest: Duration,
    },
}

/// What ended a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedBy {
    /// The end-of-turn silence.
    Silence,
    /// A pause judged complete.
    Judged,
    /// The longest silence, after a pause judged incomplete.
    Longest,
    /// The longest turn.
    Length,
}

impl EndedBy {
    /// Its name in metrics and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Silence => "silence",
            Self::Judged => "judged",
            Self::Longest => "longest",
            Self::Length => "length",
        }
    }
}

/// What the detector noticed in the audio just pushed.
#[derive(Debug, Clone, PartialEq)]
pub enum VadEvent {
    /// The caller started speaking.
    SpeechStarted,
    /// The caller paused: judge whether the turn is complete and answer with [`StreamingVad::decide`].
    Paused {
        /// Which pause.
        id: u64,
        /// The last [`JUDGED_SAMPLES`] of the turn so far.
        audio: Vec<f32>,
    },
    /// The caller has been quiet long enough for the turn's audio to be what it will be if the silence goes on
    /// to end it: that audio, to recognise ahead of the end (a turn that ends in this silence carries the same).
    Settled(Vec<f32>),
    /// The caller's turn ended: its audio (16 kHz mono), and what ended it.
    TurnEnded(Vec<f32>, EndedBy),
}

/// The energy judge: 20 ms frames against the line's noise floor.
#[derive(Debug, Default)]
pub struct EnergyJudge {
    /// Levels of recent frames without speech, in dB.
    recent: VecDeque<f64>,
}

/// How far above the noise floor a speech frame is.
const MARGIN_DB: f64 = 12.0;
/// No frame quieter than this is speech, however quiet the line.
const FLOOR_DBFS: f64 = -48.0;
/// The noise floor is the quietest frame of this many recent frames without speech (1.5 s).
const NOISE_WINDOW: usize = 75;

impl SpeechJudge for EnergyJudge {
    fn frame_len(&self) -> usize {
        320
    }

    fn is_speech(&mut self, frame: &[f32], in_turn: bool) -> bool {
        let energy =
            frame.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>() / frame.len().max(1) as f64;
        let db = if energy > 0.0 {
            10.0 * energy.log10()
        } else {
            -120.0
        };
        if !in_turn {
            self.recent.push_back(db);
            if self.recent.len() > NOISE_WINDOW {
                self.recent.pop_front();
            }
        }
        let noise = self.recent.iter().copied().fold(f64::INFINITY, f64::min);
        db > (noise + MARGIN_DB).max(FLOOR_DBFS)
    }
}

/// A detector for one live stream.
pub struct StreamingVad {
    judge: Box<dyn SpeechJudge>,
    frame: usize,
    ending: Ending,
    /// Frames of silence that end a turn (the longest, when judged).
    end_frames: usize,
    /// Frames of silence after which a judged turn is judged.
    pause_frames: Option<usize>,
    preroll_frames: usize,
    start_frames: usize,
    tail_frames: usize,
    partial: Vec<f32>,
    preroll: VecDeque<Vec<f32>>,
    voiced_run: usize,
    silent_run: usize,
    /// The turn so far, while the caller speaks.
    turn: Option<Vec<f32>>,
    /// Speech frames in the turn so far.
    voiced_frames: usize,
    /// This pause has been judged (not complete): wait for the longest silence or more speech.
    judged: bool,
    /// The pause awaiting its judgement, and the audio pushed meanwhile.
    awaiting: Option<(u64, Vec<f32>)>,
    pauses: u64,
    /// Frames of silence after which the turn is [`VadEvent::Settled`], if it is to be.
    settle_frames: Option<usize>,
}

impl std::fmt::Debug for StreamingVad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamingVad")
            .field("ending", &self.ending)
            .field("in_speech", &self.turn.is_some())
            .finish()
    }
}

fn frames_in(ms: usize, frame: usize) -> usize {
    (ms * RATE / 1000).div_ceil(frame).max(1)
}

impl StreamingVad {
    /// The energy detector, ending a turn after `end_of_turn` of silence.
    pub fn new(end_of_turn: Duration) -> Self {
        Self::with(
            Box::new(EnergyJudge::default()),
            Ending::Silence(end_of_turn),
        )
    }

    /// A detector with its judge of speech frames and its way of ending turns.
    pub fn with(judge: Box<dyn SpeechJudge>, ending: Ending) -> Self {
        let frame = judge.frame_len().max(1);
        let ms = |d: Duration| d.as_millis() as usize;
        let (end_frames, pause_frames) = match ending {
            Ending::Silence(silence) => (frames_in(ms(silence), frame), None),
            Ending::Judged { pause, longest } => (
                frames_in(ms(longest), frame),
                Some(frames_in(ms(pause), frame)),
            ),
        };
        Self {
            judge,
            frame,
            ending,
            end_frames,
            pause_frames,
            preroll_frames: frames_in(PREROLL_MS, frame),
            start_frames: frames_in(START_MS, frame),
            tail_frames: frames_in(TAIL_MS, frame),
            partial: Vec::with_capacity(frame),
            preroll: VecDeque::new(),
            voiced_run: 0,
            silent_run: 0,
            turn: None,
            voiced_frames: 0,
            judged: false,
            awaiting: None,
            pauses: 0,
            settle_frames: None,
        }
    }

    /// Say when the turn is [`VadEvent::Settled`]: after `after` of silence (no earlier than the silence a turn
    /// keeps at its end, 200 ms, so the audio is the same as the turn's if it ends).
    pub fn settling_after(mut self, after: Duration) -> Self {
        let frames = frames_in(after.as_millis() as usize, self.frame).max(self.tail_frames);
        self.settle_frames = (frames < self.end_frames).then_some(frames);
        self
    }

    /// Whether the caller is speaking now.
    pub fn in_speech(&self) -> bool {
        self.turn.is_some()
    }

    /// The audio of the turn under way so far (from a little before its first speech).
    pub fn turn_so_far(&self) -> Option<&[f32]> {
        self.turn.as_deref()
    }

    /// Whether the caller is speaking at this moment (in a turn, the last frame speech).
    pub fn speaking(&self) -> bool {
        self.turn.is_some() && self.silent_run == 0
    }

    /// How much of the turn under way is speech (its pauses left out); zero between turns.
    pub fn voiced(&self) -> Duration {
        match self.turn {
            Some(_) => {
                Duration::from_millis((self.voiced_frames * self.frame * 1000 / RATE) as u64)
            }
            None => Duration::ZERO,
        }
    }

    /// Feed 16 kHz mono samples; what happened in them, in order. While a pause awaits its judgement the audio
    /// is held (up to a second, after which the pause is taken as not judged) and looked at once it comes.
    pub fn push(&mut self, samples: &[f32]) -> Vec<VadEvent> {
        if let Some((id, held)) = self.awaiting.as_mut() {
            held.extend_from_slice(samples);
            if held.len() <= MAX_HELD {
                return Vec::new();
            }
            let id = *id;
            return self.decide(id, false);
        }
        self.frames(samples)
    }

    /// The judgement of pause `id`: a complete turn ends now; otherwise it waits for more speech or the longest
    /// silence. A judgement that comes too late for its pause changes nothing.
    pub fn decide(&mut self, id: u64, complete: bool) -> Vec<VadEvent> {
        let Some((_, held)) = self.awaiting.take_if(|(pause, _)| *pause == id) else {
            return Vec::new();
        };
        let mut events = Vec::new();
        if complete {
            events.extend(self.end_turn(EndedBy::Judged));
        } else {
            self.judged = true;
        }
        events.extend(self.push(&held));
        events
    }

    fn frames(&mut self, mut samples: &[f32]) -> Vec<VadEvent> {
        let mut events = Vec::new();
        while !samples.is_empty() {
            if let Some((_, held)) = self.awaiting.as_mut() {
                held.extend_from_slice(samples);
                break;
            }
            let take = (self.frame - self.partial.len()).min(samples.len());
            self.partial.extend_from_slice(&samples[..take]);
            samples = &samples[take..];
            if self.partial.len() == self.frame {
                let frame = std::mem::replace(&mut self.partial, Vec::with_capacity(self.frame));
                self.frame(frame, &mut events);
            }
        }
        events
    }

    fn frame(&mut self, frame: Vec<f32>, events: &mut Vec<VadEvent>) {
        let voiced = self.judge.is_speech(&frame, self.turn.is_some());
        let Some(turn) = self.turn.as_mut() else {
            self.preroll.push_back(frame);
            if self.preroll.len() > self.preroll_frames {
                self.preroll.pop_front();
            }
            self.voiced_run = if voiced { self.voiced_run + 1 } else { 0 };
            if self.voiced_run < self.start_frames {
                return;
            }
            self.turn = Some(self.preroll.drain(..).flatten().collect());
            self.silent_run = 0;
            self.voiced_frames = self.start_frames;
            self.judged = false;
            events.push(VadEvent::SpeechStarted);
            return;
        };
        turn.extend_from_slice(&frame);
        let full = turn.len() + self.frame > MAX_TURN_SAMPLES;
        if voiced {
            self.silent_run = 0;
            self.judged = false;
        } else {
            self.silent_run += 1;
        }
        self.voiced_frames += usize::from(voiced);
        if self.silent_run >= self.end_frames || full {
            let by = match (full, self.pause_frames) {
                (true, _) => EndedBy::Length,
                (false, None) => EndedBy::Silence,
                (false, Some(_)) => EndedBy::Longest,
            };
            events.extend(self.end_turn(by));
            return;
        }
        if self.settle_frames == Some(self.silent_run) {
            // What the turn will be if it ends in this silence: its audio less the silence past the tail.
            let trailing = self.silent_run.saturating_sub(self.tail_frames) * self.frame;
            events.push(VadEvent::Settled(turn[..turn.len() - trailing].to_vec()));
        }
        if self.pause_frames == Some(self.silent_run) && !self.judged {
            self.pauses += 1;
            let audio = turn[turn.len().saturating_sub(JUDGED_SAMPLES)..].to_vec();
            self.awaiting = Some((self.pauses, Vec::new()));
            events.push(VadEvent::Paused {
                id: self.pauses,
                audio,
            });
        }
    }

    /// End the turn under way, keeping a little of the silence after it.
    fn end_turn(&mut self, by: EndedBy) -> Option<VadEvent> {
        let mut turn = self.turn.take()?;
        let trailing = self.silent_run.saturating_sub(self.tail_frames) * self.frame;
        turn.truncate(turn.len().saturating_sub(trailing));
        self.voiced_run = 0;
        self.silent_run = 0;
        self.judged = false;
        Some(VadEvent::TurnEnded(turn, by))
    }
}

#[cfg(test)]
mod tests;
