//! Greedy CTC decoding and its alignment: the best token per frame, repeats merged, blanks dropped, words cut at
//! the word delimiter, each word timed by the frames its characters held (as transformers'
//! `Wav2Vec2CTCTokenizer` computes `word_offsets`).

/// What the decoder needs to know about the vocabulary.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Each id's text (`""` for ids the vocabulary file does not name).
    pub tokens: Vec<String>,
    /// The CTC blank (the `[PAD]` token of wav2vec2 exports).
    pub blank: u32,
    /// Between words (`|`).
    pub delimiter: Option<u32>,
    /// The unknown token: it keeps its frames in its word but writes nothing.
    pub unknown: Option<u32>,
}

impl Vocabulary {
    /// The id of the one-letter token `c` (not the blank nor the word delimiter), if the model has one.
    pub fn letter(&self, c: char) -> Option<u32> {
        let id = self.tokens.iter().position(|t| t.chars().eq([c]))? as u32;
        (id != self.blank && Some(id) != self.delimiter).then_some(id)
    }
}

/// One recognised word and the frames it spans: `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameWord {
    /// The word's text.
    pub text: String,
    /// First frame of its first character.
    pub start: usize,
    /// One past the last frame of its last character.
    pub end: usize,
}

/// The index of the largest value of each `width`-wide row of `logits`.
pub fn best_per_frame(logits: &[f32], width: usize) -> Vec<u32> {
    if width == 0 {
        return Vec::new();
    }
    logits
        .chunks_exact(width)
        .map(|row| {
            let mut best = 0;
            for (i, &value) in row.iter().enumerate() {
                if value > row[best] {
                    best = i;
                }
            }
            best as u32
        })
        .collect()
}

/// The words of a best-path id sequence, with their frame spans.
pub fn words(ids: &[u32], vocabulary: &Vocabulary) -> Vec<FrameWord> {
    let mut words = Vec::new();
    let mut current: Option<FrameWord> = None;
    let finish = |word: Option<FrameWord>, words: &mut Vec<FrameWord>| {
        if let Some(word) = word.filter(|w| !w.text.is_empty()) {
            words.push(word);
        }
    };
    let mut start = 0;
    while start < ids.len() {
        let id = ids[start];
        let end = start + ids[start..].iter().take_while(|&&i| i == id).count();
        if id == vocabulary.blank {
            // A blank separates repeats and belongs to no word.
        } else if Some(id) == vocabulary.delimiter {
            finish(current.take(), &mut words);
        } else {
            let text = match Some(id) == vocabulary.unknown {
                true => "",
                false => vocabulary
                    .tokens
                    .get(id as usize)
                    .map_or("", String::as_str),
            };
            let word = current.get_or_insert_with(|| FrameWord {
                text: String::new(),
                start,
                end,
            });
            word.text.push_str(text);
            word.end = end;
        }
        start = end;
    }
    finish(current, &mut words);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        Vocabulary {
            tokens: ["[PAD]", "[UNK]", "|", "a", "b", "c"]
                .map(String::from)
                .to_vec(),
            blank: 0,
            delimiter: Some(2),
            unknown: Some(1),
        }
    }

    fn spans(ids: &[u32]) -> Vec<(String, usize, usize)> {
        words(ids, &vocabulary())
            .into_iter()
            .map(|w| (w.text, w.start, w.end))
            .collect()
    }

    #[test]
    fn repeats_merge_unless_a_blank_separates_them() {
        assert_eq!(spans(&[3, 3, 4, 0, 4, 5, 5]), [("abbc".into(), 0, 7)]);
        assert_eq!(spans(&[3, 3, 3]), [("a".into(), 0, 3)]);
    }

    #[test]
    fn delimiters_cut_words_and_blanks_belong_to_none() {
        assert_eq!(
            spans(&[0, 0, 3, 4, 0, 2, 2, 0, 5, 5, 0, 0]),
            [("ab".into(), 2, 4), ("c".into(), 8, 10)]
        );
        assert_eq!(spans(&[0, 2, 0]), []);
        assert_eq!(spans(&[]), []);
    }

    #[test]
    fn the_unknown_token_keeps_its_frames_but_writes_nothing() {
        assert_eq!(spans(&[3, 1, 1, 4]), [("ab".into(), 0, 4)]);
        assert_eq!(spans(&[1, 1, 2, 3]), [("a".into(), 3, 4)]);
    }

    #[test]
    fn the_best_token_per_frame_is_the_first_of_equals() {
        assert_eq!(best_per_frame(&[0.1, 0.9, 0.2, 0.5, 0.5, -1.0], 3), [1, 0]);
        assert!(best_per_frame(&[], 0).is_empty());
    }
}
