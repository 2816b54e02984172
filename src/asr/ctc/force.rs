//! Forced alignment: another engine's text (Whisper's) timed word by word against a CTC model's frames, as
//! WhisperX does with wav2vec2. Each word is spelled in the model's tokens (lower case; characters it has no
//! token for are left out), words are joined by the delimiter, and the Viterbi path through the blank-interleaved
//! token sequence gives every token its frames. A word with nothing the model can spell (a number, a sign) takes
//! the gap between its neighbours.

use super::align::Vocabulary;

/// One word of the text and the frames it spans: `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignedWord {
    /// The word as the text writes it.
    pub word: String,
    /// First frame.
    pub start: usize,
    /// One past the last frame.
    pub end: usize,
}

/// The tokens of `word` as the model spells it.
fn spelled(word: &str, vocabulary: &Vocabulary) -> Vec<u32> {
    word.to_lowercase()
        .chars()
        .filter_map(|c| vocabulary.letter(c))
        .collect()
}

/// The words of `text` timed against `log_probs` (`width` log probabilities per frame): frame spans relative to
/// the first row. `None` when the frames are too few to hold the text.
pub fn align(
    text: &str,
    log_probs: &[f32],
    width: usize,
    vocabulary: &Vocabulary,
) -> Option<Vec<AlignedWord>> {
    let frames = log_probs.len() / width.max(1);
    let words: Vec<&str> = text.split_whitespace().collect();
    // The token sequence, and for each token the word it belongs to (delimiters belong to none).
    let mut tokens: Vec<u32> = Vec::new();
    let mut owner: Vec<Option<usize>> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let spelled = spelled(word, vocabulary);
        if spelled.is_empty() {
            continue;
        }
        if let (Some(delimiter), false) = (vocabulary.delimiter, tokens.is_empty()) {
            tokens.push(delimiter);
            owner.push(None);
        }
        owner.extend(std::iter::repeat_n(Some(i), spelled.len()));
        tokens.extend(spelled);
    }
    let mut spans: Vec<Option<(usize, usize)>> = vec![None; words.len()];
    if !tokens.is_empty() {
        let path = viterbi(&tokens, log_probs, width, frames, vocabulary.blank)?;
        for (frame, state) in path.into_iter().enumerate() {
            if state % 2 == 1 {
                if let Some(word) = owner[state / 2] {
                    let span = spans[word].get_or_insert((frame, frame + 1));
                    span.1 = frame + 1;
                }
            }
        }
    }
    Some(fill_gaps(&words, &spans, frames))
}

/// The best path's state per frame through `blank t1 blank t2 … blank`: states are even for blanks, odd for
/// tokens (token `i` is state `2i + 1`).
fn viterbi(
    tokens: &[u32],
    log_probs: &[f32],
    width: usize,
    frames: usize,
    blank: u32,
) -> Option<Vec<usize>> {
    let states = tokens.len() * 2 + 1;
    // Each token needs a frame, and a repeated token a blank between.
    let needed = tokens.len() + tokens.windows(2).filter(|w| w[0] == w[1]).count();
    if frames < needed {
        return None;
    }
    let label = |state: usize| match state % 2 {
        0 => blank,
        _ => tokens[state / 2],
    };
    let score =
        |frame: usize, state: usize| f64::from(log_probs[frame * width + label(state) as usize]);
    let mut previous = vec![f64::NEG_INFINITY; states];
    previous[0] = score(0, 0);
    previous[1] = score(0, 1);
    // How each state was reached: 0 stayed, 1 from the state before, 2 skipped a blank.
    let mut steps: Vec<u8> = vec![0; frames * states];
    let mut current = vec![f64::NEG_INFINITY; states];
    for frame in 1..frames {
        for state in 0..states {
            let mut best = (previous[state], 0u8);
            if state >= 1 && previous[state - 1] > best.0 {
                best = (previous[state - 1], 1);
            }
            let skips = state >= 2 && state % 2 == 1 && label(state) != label(state - 2);
            if skips && previous[state - 2] > best.0 {
                best = (previous[state - 2], 2);
            }
            current[state] = best.0 + score(frame, state);
            steps[frame * states + state] = best.1;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let mut state = match previous[states - 1] >= previous[states - 2] {
        true => states - 1,
        false => states - 2,
    };
    if !previous[state].is_finite() {
        return None;
    }
    let mut path = vec![0; frames];
    for frame in (0..frames).rev() {
        path[frame] = state;
        state -= usize::from(steps[frame * states + state]);
    }
    Some(path)
}

/// Every word with a span: those the model could not spell take the gap between their timed neighbours.
fn fill_gaps(words: &[&str], spans: &[Option<(usize, usize)>], frames: usize) -> Vec<AlignedWord> {
    (0..words.len())
        .map(|i| {
            let (start, end) = spans[i].unwrap_or_else(|| {
                let before = spans[..i].iter().rev().flatten().next().map_or(0, |s| s.1);
                let after = spans[i + 1..]
                    .iter()
                    .flatten()
                    .next()
                    .map_or(frames, |s| s.0);
                (before, after.max(before))
            });
            AlignedWord {
                word: words[i].to_string(),
                start,
                end,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        Vocabulary {
            tokens: ["[PAD]", "[UNK]", "|", "a", "b", "n"]
                .map(String::from)
                .to_vec(),
            blank: 0,
            delimiter: Some(2),
            unknown: Some(1),
        }
    }

    /// Log probabilities that make `ids` the certain token of each frame.
    fn certain(ids: &[u32]) -> Vec<f32> {
        ids.iter()
            .flat_map(|&id| (0..6).map(move |t| if t == id { -0.01 } else { -6.0 }))
            .collect()
    }

    #[test]
    fn words_take_the_frames_of_their_letters() {
        // "baba na" over: b a blank b a | n a blank
        let logits = certain(&[4, 3, 0, 4, 3, 2, 5, 3, 0]);
        let words = align("Baba na", &logits, 6, &vocabulary()).unwrap();
        assert_eq!(
            words,
            [
                AlignedWord {
                    word: "Baba".into(),
                    start: 0,
                    end: 5
                },
                AlignedWord {
                    word: "na".into(),
                    start: 6,
                    end: 8
                },
            ]
        );
    }

    #[test]
    fn unspellable_words_fill_the_gap_and_too_few_frames_are_none() {
        let logits = certain(&[4, 3, 0, 2, 0, 5, 3]);
        let words = align("ba 250 na.", &logits, 6, &vocabulary()).unwrap();
        assert_eq!(
            words[1],
            AlignedWord {
                word: "250".into(),
                start: 2,
                end: 5
            }
        );
        assert_eq!(words[2].word, "na.");
        assert!(align("baba nana", &certain(&[4, 3]), 6, &vocabulary()).is_none());
        assert_eq!(align("", &logits, 6, &vocabulary()), Some(Vec::new()));
    }
}
