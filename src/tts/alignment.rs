//! When each character of a text is spoken, from when each word was (what the voices report): for captions,
//! karaoke-style highlighting and lip sync (ElevenLabs' `alignment` and `normalized_alignment`).
//!
//! - The **normalised** text is the words as read, joined by spaces: each word's characters share its time
//!   evenly, and the space between two words takes the pause between them.
//! - The **written** text is placed on the same timeline: a written word that was read as itself takes that
//!   word's time; a stretch that was read otherwise (`12,500` read as five words) takes the time of the words it
//!   became, shared by length; spaces and punctuation take the gaps between words. Every character of the text
//!   is there, in order, with times that never go back.

use super::SpokenWord;

/// Characters with their start and end in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CharacterTimes {
    /// Each character, as a string of one.
    pub characters: Vec<String>,
    /// When each starts.
    pub starts: Vec<f64>,
    /// When each ends.
    pub ends: Vec<f64>,
}

impl CharacterTimes {
    fn push(&mut self, c: char, start: f64, end: f64) {
        let start = self.ends.last().map_or(start, |&last| start.max(last));
        self.characters.push(c.to_string());
        self.starts.push(start);
        self.ends.push(end.max(start));
    }

    /// The characters of `text` shared evenly over `start..end`.
    fn spread(&mut self, text: &str, start: f64, end: f64) {
        let count = text.chars().count().max(1) as f64;
        for (i, c) in text.chars().enumerate() {
            let at = |k: f64| start + (end - start) * k / count;
            self.push(c, at(i as f64), at(i as f64 + 1.0));
        }
    }
}

/// The normalised text (the words as read, joined by spaces) with its character times.
pub fn normalized(words: &[SpokenWord]) -> CharacterTimes {
    let mut times = CharacterTimes::default();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            times.push(' ', words[i - 1].end, word.start);
        }
        times.spread(&word.text, word.start, word.end);
    }
    times
}

/// A run of letters and digits in the written text: its byte range and lowercase form.
struct Token {
    range: std::ops::Range<usize>,
    lower: String,
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                out.push(Token {
                    range: from..at,
                    lower: text[from..at].to_lowercase(),
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// How far ahead a written word is looked for among the words read.
const LOOK_AHEAD: usize = 12;

/// The written `text` with its character times, placed on the timeline of `words` (what was read from it).
pub fn written(text: &str, words: &[SpokenWord]) -> CharacterTimes {
    let tokens = tokens(text);
    // Each token's time: matched to a word read as itself, or shared out of the words between matches.
    let mut spans: Vec<(f64, f64)> = vec![(0.0, 0.0); tokens.len()];
    let mut next_word = 0;
    let mut pending: Vec<usize> = Vec::new();
    let settle = |pending: &mut Vec<usize>, spans: &mut Vec<(f64, f64)>, from: usize, to: usize| {
        let (start, end) = match (
            words.get(from),
            to.checked_sub(1).and_then(|t| words.get(t)),
        ) {
            (Some(first), Some(last)) if from < to => (first.start, last.end),
            _ => {
                let at = from
                    .checked_sub(1)
                    .and_then(|w| words.get(w))
                    .map_or(0.0, |w| w.end);
                (at, at)
            }
        };
        let total: usize = pending
            .iter()
            .map(|&t| tokens[t].lower.chars().count())
            .sum();
        let mut done = 0;
        for &t in pending.iter() {
            let length = tokens[t].lower.chars().count();
            let at = |k: usize| start + (end - start) * k as f64 / total.max(1) as f64;
            spans[t] = (at(done), at(done + length));
            done += length;
        }
        pending.clear();
    };
    let mut unmatched_from = 0;
    for (t, token) in tokens.iter().enumerate() {
        let limit = (next_word + LOOK_AHEAD).min(words.len());
        match (next_word..limit).find(|&w| words[w].text.to_lowercase() == token.lower) {
            Some(w) => {
                settle(&mut pending, &mut spans, unmatched_from, w);
                spans[t] = (words[w].start, words[w].end);
                next_word = w + 1;
                unmatched_from = next_word;
            }
            None => pending.push(t),
        }
    }
    settle(&mut pending, &mut spans, unmatched_from, words.len());
    let mut times = CharacterTimes::default();
    let mut at = 0;
    let mut last_end = words.first().map_or(0.0, |w| w.start);
    for (token, &(start, end)) in tokens.iter().zip(&spans) {
        for c in text[at..token.range.start].chars() {
            times.push(c, last_end, start);
        }
        times.spread(&text[token.range.clone()], start, end);
        at = token.range.end;
        last_end = end;
    }
    for c in text[at..].chars() {
        times.push(c, last_end, last_end);
    }
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, start: f64, end: f64) -> SpokenWord {
        SpokenWord {
            text: text.into(),
            start,
            end,
        }
    }

    fn monotonic(times: &CharacterTimes) {
        for i in 0..times.characters.len() {
            assert!(times.starts[i] <= times.ends[i], "{times:?}");
            if i > 0 {
                assert!(times.starts[i] >= times.ends[i - 1] - 1e-12, "{times:?}");
            }
        }
    }

    #[test]
    fn the_normalised_text_is_the_words_with_their_pauses() {
        let words = [word("habari", 0.1, 0.5), word("yako", 0.6, 0.9)];
        let times = normalized(&words);
        assert_eq!(times.characters.concat(), "habari yako");
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9, "{a} {b}");
        close(times.starts[0], 0.1);
        close(times.ends[5], 0.5);
        close(times.starts[6], 0.5);
        close(times.ends[6], 0.6);
        assert!((times.ends[10] - 0.9).abs() < 1e-12);
        monotonic(&times);
    }

    #[test]
    fn written_words_read_as_themselves_keep_their_times_and_expansions_share_theirs() {
        let words = [
            word("salio", 0.0, 0.4),
            word("ni", 0.5, 0.6),
            word("elfu", 0.7, 1.0),
            word("kumi", 1.0, 1.3),
            word("asante", 1.6, 2.0),
        ];
        let text = "Salio ni 10,000. Asante!";
        let times = written(text, &words);
        assert_eq!(times.characters.concat(), text);
        monotonic(&times);
        let at = |c: usize| (times.starts[c], times.ends[c]);
        assert_eq!(at(0).0, 0.0); // S
        assert!((at(4).1 - 0.4).abs() < 1e-12); // o of Salio
                                                // "10" and "000" take the time of "elfu kumi".
        assert!((at(9).0 - 0.7).abs() < 1e-12);
        assert!((at(14).1 - 1.3).abs() < 1e-12);
        assert!((at(17).0 - 1.6).abs() < 1e-12); // A of Asante
        assert!((at(23).0 - 2.0).abs() < 1e-12); // the final !
    }

    #[test]
    fn text_with_nothing_matched_still_covers_every_character_in_order() {
        let words = [word("moja", 0.2, 0.5), word("mbili", 0.6, 1.0)];
        let times = written("1, 2 (sawa?)", &words);
        assert_eq!(times.characters.concat(), "1, 2 (sawa?)");
        monotonic(&times);
        assert!(times.ends.iter().all(|&e| e <= 1.0 + 1e-12));
    }
}
