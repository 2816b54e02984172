//! Prosody: from phrases of syllables to a track of synthesizer controls every 5 ms — durations (stress,
//! phrase-final lengthening, speaking rate), smooth formant transitions and the F0 contour (declination,
//! penultimate accent, final fall or question rise).

use super::phones::{pieces, Params, Piece, NEUTRAL};
use super::Preset;
use crate::tts::g2p::{PhraseEnd, Utterance};
use crate::tts::VoiceSettings;

/// Control frames are this far apart.
pub const FRAME_MS: f32 = 5.0;

/// Controls for one frame.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Tract and source controls.
    pub params: Params,
    /// Fundamental frequency in Hz.
    pub f0: f32,
}

struct Segment {
    piece: Piece,
    /// Index into `syllables`, or `None` for pauses.
    syllable: Option<usize>,
}

struct SyllableSpan {
    start: f32,
    end: f32,
    stressed: bool,
    phrase: usize,
    /// Random pitch offset (fraction) and loudness factor drawn for this syllable.
    pitch_jitter: f32,
    loudness: f32,
}

struct PhraseSpan {
    start: f32,
    end: f32,
    end_kind: PhraseEnd,
    last_syllable: Option<usize>,
}

/// Deterministic noise for prosodic variation (xorshift64* with a Box–Muller-free approximate Gaussian).
pub struct Rng(u64);

impl Rng {
    /// A generator whose output depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Approximately standard normal (sum of three uniforms, variance 1).
    pub fn gaussian(&mut self) -> f32 {
        self.uniform() + self.uniform() + self.uniform()
    }
}

/// Plan the control track for an utterance, with when each word of it is spoken: start and end in
/// milliseconds, in order.
pub fn plan(
    utterance: &Utterance,
    preset: &Preset,
    settings: &VoiceSettings,
    seed: u64,
) -> (Vec<Frame>, Vec<(f32, f32)>) {
    let mut rng = Rng::new(seed);
    let rate = settings.speaking_rate.max(0.01);
    let variation = settings.noise_scale / 0.667;
    let duration_variation = settings.noise_scale_duration / 0.8;
    let mut segments: Vec<Segment> = Vec::new();
    let mut syllables: Vec<SyllableSpan> = Vec::new();
    let mut phrases: Vec<PhraseSpan> = Vec::new();
    let mut words: Vec<(f32, f32)> = Vec::new();
    let mut t = 0.0f32;
    let pause = |ms: f32, t: &mut f32, segments: &mut Vec<Segment>| {
        let ms = ms / rate;
        segments.push(Segment {
            piece: Piece {
                params: NEUTRAL,
                ms,
                transparent: true,
            },
            syllable: None,
        });
        *t += ms;
    };
    pause(60.0, &mut t, &mut segments);

    for (p, phrase) in utterance.phrases.iter().enumerate() {
        let phrase_start = t;
        let word_count = phrase.words.len();
        for (w, word) in phrase.words.iter().enumerate() {
            let word_start = t;
            let syllable_count = word.syllables.len();
            for (s, syllable) in word.syllables.iter().enumerate() {
                let stressed = s == word.stressed;
                let phrase_final = w + 1 == word_count && s + 1 == syllable_count;
                let index = syllables.len();
                let start = t;
                for &phoneme in &syllable.phonemes {
                    for mut piece in pieces(phoneme) {
                        let nucleus = phoneme.is_syllabic();
                        let mut factor = 1.0;
                        if stressed {
                            factor *= if nucleus { 1.3 } else { 1.1 };
                        }
                        if phrase_final && nucleus {
                            factor *= 1.4;
                        }
                        factor *= (0.12 * duration_variation * rng.gaussian()).exp();
                        piece.ms = piece.ms * factor / rate;
                        t += piece.ms;
                        segments.push(Segment {
                            piece,
                            syllable: Some(index),
                        });
                    }
                }
                syllables.push(SyllableSpan {
                    start,
                    end: t,
                    stressed,
                    phrase: p,
                    pitch_jitter: 0.04 * variation * rng.gaussian(),
                    loudness: (0.1 * variation * rng.gaussian()).exp(),
                });
            }
            words.push((word_start, t));
        }
        let last_syllable = syllables.iter().rposition(|s| s.phrase == p);
        phrases.push(PhraseSpan {
            start: phrase_start,
            end: t,
            end_kind: phrase.end,
            last_syllable,
        });
        let last = p + 1 == utterance.phrases.len();
        let gap = match (phrase.end, last) {
            (_, true) => 150.0,
            (PhraseEnd::Continue, false) => 160.0,
            _ => 320.0,
        };
        pause(gap, &mut t, &mut segments);
    }

    borrow_neighbour_formants(&mut segments);
    let mut frames = sample_frames(&segments, &syllables, t);
    smooth(&mut frames);
    let contour = Contour::new(preset, &syllables, &phrases);
    for (i, frame) in frames.iter_mut().enumerate() {
        frame.f0 = contour.at(i as f32 * FRAME_MS);
    }
    (frames, words)
}

/// Pauses, /h/ and aspiration take the formants of the vowel they lead into (or out of). One pass each way, so
/// the cost stays linear in the utterance however few vowels it has.
fn borrow_neighbour_formants(segments: &mut [Segment]) {
    let source = |s: &Segment| !s.piece.transparent && s.piece.params.voicing >= 0.7;
    let mut next: Vec<Option<usize>> = vec![None; segments.len()];
    let mut after = None;
    for i in (0..segments.len()).rev() {
        next[i] = after;
        if source(&segments[i]) {
            after = Some(i);
        }
    }
    let mut before = None;
    for i in 0..segments.len() {
        if segments[i].piece.transparent {
            if let Some(from) = next[i].or(before) {
                let params = segments[from].piece.params;
                segments[i].piece.params.formants = params.formants;
                segments[i].piece.params.bandwidths = params.bandwidths;
            }
        }
        if source(&segments[i]) {
            before = Some(i);
        }
    }
}

fn sample_frames(segments: &[Segment], syllables: &[SyllableSpan], total_ms: f32) -> Vec<Frame> {
    let count = (total_ms / FRAME_MS).ceil() as usize + 1;
    let mut frames = Vec::with_capacity(count);
    let mut seg = 0;
    let mut seg_end = segments.first().map_or(0.0, |s| s.piece.ms);
    for i in 0..count {
        let t = i as f32 * FRAME_MS;
        while t >= seg_end && seg + 1 < segments.len() {
            seg += 1;
            seg_end += segments[seg].piece.ms;
        }
        let mut params = segments.get(seg).map_or(NEUTRAL, |s| s.piece.params);
        if let Some(syllable) = segments.get(seg).and_then(|s| s.syllable) {
            let loudness = syllables[syllable].loudness;
            params.voicing *= loudness;
            params.frication *= loudness;
            params.aspiration *= loudness;
        }
        frames.push(Frame { params, f0: 0.0 });
    }
    frames
}

/// Moving averages: formants glide over ~35 ms, amplitudes over ~15 ms.
fn smooth(frames: &mut [Frame]) {
    let original: Vec<Params> = frames.iter().map(|f| f.params).collect();
    let n = original.len();
    let window = |i: usize, half: usize| (i.saturating_sub(half), (i + half + 1).min(n));
    for (i, frame) in frames.iter_mut().enumerate() {
        let (a, b) = window(i, 3);
        let span = (b - a) as f32;
        let p = &mut frame.params;
        for k in 0..5 {
            p.formants[k] = original[a..b].iter().map(|o| o.formants[k]).sum::<f32>() / span;
            p.bandwidths[k] = original[a..b].iter().map(|o| o.bandwidths[k]).sum::<f32>() / span;
        }
        p.nasal_zero = original[a..b].iter().map(|o| o.nasal_zero).sum::<f32>() / span;
        let (a, b) = window(i, 1);
        let span = (b - a) as f32;
        p.voicing = original[a..b].iter().map(|o| o.voicing).sum::<f32>() / span;
        p.aspiration = original[a..b].iter().map(|o| o.aspiration).sum::<f32>() / span;
        p.frication = original[a..b].iter().map(|o| o.frication).sum::<f32>() / span;
    }
}

/// Syllables further than this from a frame add nothing audible to its pitch accent (the accent's Gaussian has
/// a 90 ms width: at 450 ms it weighs e^-25).
const ACCENT_REACH_MS: f32 = 450.0;

/// The F0 contour, read frame by frame in time order: each frame looks only at its own phrase and at the
/// syllables within reach, so the whole contour costs time linear in the utterance (a long text without
/// punctuation is one long phrase).
struct Contour<'a> {
    preset: &'a Preset,
    syllables: &'a [SyllableSpan],
    phrases: &'a [PhraseSpan],
    /// Syllable indices ordered by centre, for the window around each frame.
    by_centre: Vec<usize>,
    phrase: std::cell::Cell<usize>,
    first: std::cell::Cell<usize>,
}

impl<'a> Contour<'a> {
    fn new(preset: &'a Preset, syllables: &'a [SyllableSpan], phrases: &'a [PhraseSpan]) -> Self {
        let mut by_centre: Vec<usize> = (0..syllables.len()).collect();
        by_centre.sort_by(|&a, &b| {
            let centre = |s: &SyllableSpan| s.start + s.end;
            centre(&syllables[a]).total_cmp(&centre(&syllables[b]))
        });
        Self {
            preset,
            syllables,
            phrases,
            by_centre,
            phrase: std::cell::Cell::new(0),
            first: std::cell::Cell::new(0),
        }
    }

    /// F0 at time `t` (ms); calls must come in increasing `t`.
    fn at(&self, t: f32) -> f32 {
        let (preset, syllables, phrases) = (self.preset, self.syllables, self.phrases);
        if phrases.is_empty() {
            return preset.f0;
        }
        let mut phrase = self.phrase.get();
        while phrase + 1 < phrases.len() && t >= phrases[phrase].end + 1.0 {
            phrase += 1;
        }
        self.phrase.set(phrase);
        let span = &phrases[phrase];
        let progress = ((t - span.start) / (span.end - span.start).max(1.0)).clamp(0.0, 1.0);
        let mut f0 = preset.f0 * (1.08 - 0.16 * progress);

        let accent_size = if span.end_kind == PhraseEnd::Exclamation {
            0.2
        } else {
            0.11
        };
        let centre = |i: usize| 0.5 * (syllables[i].start + syllables[i].end);
        let mut first = self.first.get();
        while first < self.by_centre.len() && centre(self.by_centre[first]) < t - ACCENT_REACH_MS {
            first += 1;
        }
        self.first.set(first);
        let mut accent = 0.0;
        for &i in self.by_centre[first..]
            .iter()
            .take_while(|&&i| centre(i) <= t + ACCENT_REACH_MS)
        {
            let s = &syllables[i];
            if s.phrase != phrase {
                continue;
            }
            let weight = (-((t - centre(i)) / 90.0).powi(2)).exp();
            if s.stressed {
                accent += accent_size * weight;
            }
            accent += s.pitch_jitter * weight;
        }
        f0 *= 1.0 + accent;

        if let Some(last) = span.last_syllable.map(|i| &syllables[i]) {
            let x = ((t - last.start) / (last.end - last.start).max(1.0)).clamp(0.0, 1.0);
            let target = match span.end_kind {
                PhraseEnd::Statement | PhraseEnd::Exclamation => 0.8,
                PhraseEnd::Question => 1.45,
                PhraseEnd::Continue => 1.06,
            };
            f0 *= 1.0 + (target - 1.0) * x;
        }
        f0
    }
}

/// A phoneme held at its target for `ms`, on the preset's level pitch, with 20 ms onset and offset ramps.
pub fn sustained(phoneme: crate::tts::g2p::Phoneme, ms: f32, preset: &Preset) -> Vec<Frame> {
    let params = pieces(phoneme).first().map_or(NEUTRAL, |p| p.params);
    let count = (ms / FRAME_MS).ceil() as usize + 1;
    let ramp = 20.0 / FRAME_MS;
    (0..count)
        .map(|i| {
            let edge = (i as f32).min((count - 1 - i) as f32);
            let gain = (edge / ramp).min(1.0);
            let mut p = params;
            p.voicing *= gain;
            p.aspiration *= gain;
            p.frication *= gain;
            Frame {
                params: p,
                f0: preset.f0,
            }
        })
        .collect()
}
