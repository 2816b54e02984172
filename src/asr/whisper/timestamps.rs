//! Whisper's timestamp tokens (`<|0.00|>` … `<|30.00|>`, 20 ms apart, right after `<|notimestamps|>`): the rules
//! that decide where one may be written, as transformers' `WhisperTimeStampLogitsProcessor` applies them, and
//! the segments they mark.
//!
//! The first token is a timestamp no later than `max_initial` steps; timestamps come in pairs (the end of one
//! segment, the start of the next) except right before the end; they never go back; and when the timestamps
//! together are likelier than the likeliest text token, a timestamp is written.

use super::decoder::Greedy;

/// Seconds between two timestamp tokens.
pub const STEP_SECONDS: f64 = 0.02;

/// Where the timestamps are in the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timestamps {
    /// `<|0.00|>`; every later id is a timestamp.
    pub first: u32,
    /// `<|notimestamps|>`, never written while timestamps are.
    pub no_timestamps: u32,
    /// The latest first timestamp, in steps (50: one second).
    pub max_initial: Option<u32>,
}

/// The next token after `generated` under the suppress lists and the timestamp rules (the first of equals, as
/// argmax takes it); `None` when every token is ruled out.
pub fn pick(logits: &[f32], greedy: &Greedy, rules: &Timestamps, generated: &[u32]) -> Option<u32> {
    let mut scores = logits.to_vec();
    let width = scores.len();
    let forbid = |range: std::ops::Range<usize>, scores: &mut Vec<f32>| {
        for score in &mut scores[range.start.min(width)..range.end.min(width)] {
            *score = f32::NEG_INFINITY;
        }
    };
    let first_step = generated.is_empty();
    if first_step {
        for &t in &greedy.begin_suppress {
            forbid(t as usize..t as usize + 1, &mut scores);
        }
    }
    for &t in &greedy.suppress {
        forbid(t as usize..t as usize + 1, &mut scores);
    }
    let no_timestamps = rules.no_timestamps as usize;
    forbid(no_timestamps..no_timestamps + 1, &mut scores);
    let begin = rules.first as usize;
    let is_timestamp = |t: &u32| *t >= rules.first;
    let last = generated.last().is_some_and(is_timestamp);
    let penultimate = generated.len() < 2 || is_timestamp(&generated[generated.len() - 2]);
    if last {
        match penultimate {
            true => forbid(begin..width, &mut scores),
            false => forbid(0..greedy.end_of_text as usize, &mut scores),
        }
    }
    if let Some(&latest) = generated.iter().rev().find(|t| is_timestamp(t)) {
        let until = match last && !penultimate {
            true => latest as usize,
            false => latest as usize + 1,
        };
        forbid(begin..until, &mut scores);
    }
    if first_step {
        forbid(0..begin, &mut scores);
        if let Some(max) = rules.max_initial {
            forbid(begin + max as usize + 1..width, &mut scores);
        }
    }
    if timestamps_likelier(&scores, begin) {
        forbid(0..begin, &mut scores);
    }
    let mut best: Option<(usize, f32)> = None;
    for (id, &score) in scores.iter().enumerate() {
        if score.is_nan() || score == f32::NEG_INFINITY || best.is_some_and(|(_, b)| score <= b) {
            continue;
        }
        best = Some((id, score));
    }
    best.map(|(id, _)| id as u32)
}

/// Whether the timestamps together are likelier than the likeliest text token.
fn timestamps_likelier(scores: &[f32], begin: usize) -> bool {
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() || begin >= scores.len() {
        return false;
    }
    let log_sum = scores.iter().map(|&s| (s - max).exp()).sum::<f32>().ln();
    let log_prob = |s: f32| s - max - log_sum;
    let stamps = &scores[begin..];
    let stamp_max = stamps.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if stamp_max == f32::NEG_INFINITY {
        return false;
    }
    let stamps_log = log_prob(stamp_max)
        + stamps
            .iter()
            .map(|&s| (s - stamp_max).exp())
            .sum::<f32>()
            .ln();
    let text_max = scores[..begin]
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    stamps_log > log_prob(text_max)
}

/// The segments of one window's tokens: text between a timestamp and the next, times from `offset` seconds (the
/// window's start) and no later than `end` (the window's end). Text after the last timestamp runs to `end`. Returns (segment start, segment end, its text
/// tokens).
pub fn segments(
    tokens: &[u32],
    rules: &Timestamps,
    offset: f64,
    end: f64,
) -> Vec<(f64, f64, Vec<u32>)> {
    let seconds = |t: u32| (offset + f64::from(t - rules.first) * STEP_SECONDS).min(end);
    let mut out = Vec::new();
    let mut start: Option<f64> = None;
    let mut latest = offset;
    let mut text: Vec<u32> = Vec::new();
    for &token in tokens {
        if token >= rules.first {
            let at = seconds(token);
            latest = at;
            match start {
                Some(from) if !text.is_empty() => {
                    push(&mut out, from, at, std::mem::take(&mut text));
                    start = None;
                }
                _ => start = Some(at),
            }
        } else {
            start.get_or_insert(latest);
            text.push(token);
        }
    }
    if let (Some(from), false) = (start, text.is_empty()) {
        push(&mut out, from, end, text);
    }
    out
}

/// Add a segment; one with no length (timestamps at or past the window's end) joins the one before.
fn push(out: &mut Vec<(f64, f64, Vec<u32>)>, from: f64, to: f64, text: Vec<u32>) {
    match out.last_mut() {
        Some(last) if to <= from => {
            last.1 = last.1.max(to);
            last.2.extend(text);
        }
        _ => out.push((from, to.max(from), text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asr::Segment;

    const RULES: Timestamps = Timestamps {
        first: 10,
        no_timestamps: 9,
        max_initial: Some(2),
    };

    fn greedy() -> Greedy {
        Greedy {
            suppress: vec![],
            begin_suppress: vec![],
            end_of_text: 5,
            max_new_tokens: 10,
            timestamps: Some(RULES),
        }
    }

    #[test]
    fn the_first_token_is_an_early_timestamp_and_pairs_are_kept() {
        let mut logits = vec![0.0f32; 20];
        logits[1] = 9.0; // text
        logits[19] = 8.0; // a late timestamp
        logits[11] = 1.0;
        assert_eq!(pick(&logits, &greedy(), &RULES, &[]), Some(11));
        // After a lone timestamp, text is ruled out (only a timestamp or the end may follow).
        assert!(pick(&logits, &greedy(), &RULES, &[11, 1, 12]).unwrap() >= 5);
        // After a pair, a timestamp is ruled out.
        assert_eq!(pick(&logits, &greedy(), &RULES, &[11, 1, 12, 12]), Some(1));
    }

    #[test]
    fn segments_run_between_timestamps_and_words_share_their_time() {
        let segments = segments(&[10, 1, 2, 15, 15, 3, 20, 4], &RULES, 30.0, 31.0);
        assert_eq!(segments.len(), 3);
        assert_eq!(segments[0].2, vec![1, 2]);
        assert!((segments[0].0 - 30.0).abs() < 1e-9 && (segments[0].1 - 30.1).abs() < 1e-9);
        assert!((segments[1].1 - 30.2).abs() < 1e-9);
        assert_eq!((segments[2].2.clone(), segments[2].1), (vec![4], 31.0));
        let words = Segment {
            start: 1.0,
            end: 2.0,
            text: "ab abc".into(),
        }
        .words_by_length();
        assert!((words[0].end - 1.4).abs() < 1e-9 && (words[1].end - 2.0).abs() < 1e-9);
    }
}
