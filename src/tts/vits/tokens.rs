//! Text → token ids for the two published VITS layouts.
//!
//! - MMS-TTS (Hugging Face `VitsTokenizer`): characters of a vocabulary (`vocab.json`, or `tokens.txt` with one
//!   `token id` per line); characters outside it are lower-cased, what is still unknown is dropped, and with
//!   `add_blank` every character is surrounded by the blank token (id 0).
//! - Piper: single-codepoint phonemes from `phoneme_id_map`, `^` and `$` around the sentence, `_` after `^` and
//!   after every phoneme; phonemes the voice does not know are skipped.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use crate::models::ModelError;

/// A character vocabulary (MMS-TTS layout).
#[derive(Debug, Clone)]
pub struct CharVocab {
    ids: HashMap<char, i64>,
    add_blank: bool,
    blank: i64,
}

impl CharVocab {
    /// From `vocab.json` (`{"a": 1, …}`).
    pub fn from_json(path: &Path, add_blank: bool) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::invalid(path, e))?;
        let map: HashMap<String, i64> =
            serde_json::from_str(&text).map_err(|e| ModelError::invalid(path, e))?;
        Self::new(path, map, add_blank)
    }

    /// From `tokens.txt` (`token id` per line; a space token is written as a line starting with a space).
    pub fn from_tokens_txt(path: &Path, add_blank: bool) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::invalid(path, e))?;
        let mut map = HashMap::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (token, id) = line.rsplit_once(' ').ok_or_else(|| {
                ModelError::invalid(path, format!("line {}: expected `token id`", number + 1))
            })?;
            let id = id.trim().parse::<i64>().map_err(|_| {
                ModelError::invalid(path, format!("line {}: `{id}` is not an id", number + 1))
            })?;
            let token = if token.is_empty() { " " } else { token };
            map.insert(token.to_string(), id);
        }
        Self::new(path, map, add_blank)
    }

    fn new(path: &Path, map: HashMap<String, i64>, add_blank: bool) -> Result<Self, ModelError> {
        let blank = map.values().copied().min().unwrap_or(0);
        if blank != 0 {
            return Err(ModelError::invalid(
                path,
                "the vocabulary has no token with id 0 (the blank)",
            ));
        }
        // Multi-character entries (`<pad>`, `<unk>`) never match single characters of text.
        let ids: HashMap<char, i64> = map
            .into_iter()
            .filter_map(|(token, id)| {
                let mut chars = token.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some((c, id)),
                    _ => None,
                }
            })
            .collect();
        if ids.is_empty() {
            return Err(ModelError::invalid(
                path,
                "the vocabulary has no characters",
            ));
        }
        Ok(Self {
            ids,
            add_blank,
            blank,
        })
    }

    /// Token ids of normalised text.
    pub fn encode(&self, text: &str) -> Vec<i64> {
        self.encode_words(text).0
    }

    /// [`Self::encode`], with the tokens of each word (a run of text between spaces, as the voice reads it:
    /// lowercase, without the punctuation around it). Words the vocabulary has no letter of are left out.
    pub fn encode_words(&self, text: &str) -> (Vec<i64>, Vec<(String, Range<usize>)>) {
        // Each kept id with the word it belongs to (`None` between words).
        let mut kept: Vec<(i64, Option<usize>)> = Vec::with_capacity(text.len());
        let mut spans: Vec<&str> = Vec::new();
        let mut word_start: Option<usize> = None;
        for (at, c) in text.char_indices() {
            if c.is_whitespace() {
                if let Some(from) = word_start.take() {
                    spans.push(&text[from..at]);
                }
            } else if word_start.is_none() {
                word_start = Some(at);
            }
            let word = word_start.map(|_| spans.len());
            if let Some(&id) = self.ids.get(&c) {
                kept.push((id, word));
            } else {
                kept.extend(
                    c.to_lowercase()
                        .filter_map(|l| self.ids.get(&l).map(|&id| (id, word))),
                );
            }
        }
        if let Some(from) = word_start {
            spans.push(&text[from..]);
        }
        let space = self.ids.get(&' ').copied();
        let start = kept
            .iter()
            .position(|&(id, _)| Some(id) != space)
            .unwrap_or(kept.len());
        let end = kept
            .iter()
            .rposition(|&(id, _)| Some(id) != space)
            .map_or(start, |i| i + 1);
        let kept = &kept[start..end];
        // Kept position k is token 2k + 1 when blanks are interleaved; a word runs to the blank after it.
        let token = |k: usize| if self.add_blank { 2 * k + 1 } else { k };
        let mut runs: Vec<(usize, Range<usize>)> = Vec::new();
        for (k, &(_, word)) in kept.iter().enumerate() {
            let Some(word) = word else { continue };
            let end = token(k) + 1 + usize::from(self.add_blank);
            match runs.last_mut() {
                Some((last, range)) if *last == word => range.end = end,
                _ => runs.push((word, token(k)..end)),
            }
        }
        let words = runs
            .into_iter()
            .map(|(word, range)| {
                let text = spans[word]
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                (text, range)
            })
            .filter(|(text, _)| !text.is_empty())
            .collect();
        let ids = match self.add_blank {
            false => kept.iter().map(|&(id, _)| id).collect(),
            true => {
                let mut ids = Vec::with_capacity(kept.len() * 2 + 1);
                ids.push(self.blank);
                for &(id, _) in kept {
                    ids.push(id);
                    ids.push(self.blank);
                }
                ids
            }
        };
        (ids, words)
    }
}

/// A Piper voice's `phoneme_id_map`.
#[derive(Debug, Clone)]
pub struct PhonemeIds {
    ids: HashMap<char, Vec<i64>>,
    pad: Vec<i64>,
    bos: Vec<i64>,
    eos: Vec<i64>,
}

impl PhonemeIds {
    /// From the `phoneme_id_map` object of a Piper `*.onnx.json`.
    pub fn new(path: &Path, map: HashMap<String, Vec<i64>>) -> Result<Self, ModelError> {
        let mut ids = HashMap::new();
        for (phoneme, id) in map {
            let mut chars = phoneme.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                ids.insert(c, id);
            }
        }
        let special = |symbol: char| {
            ids.get(&symbol).cloned().ok_or_else(|| {
                ModelError::invalid(path, format!("phoneme_id_map has no `{symbol}`"))
            })
        };
        Ok(Self {
            pad: special('_')?,
            bos: special('^')?,
            eos: special('$')?,
            ids,
        })
    }

    /// Ids of an IPA string (one phoneme per codepoint).
    pub fn encode(&self, ipa: &str) -> Vec<i64> {
        let mut out = self.bos.clone();
        out.extend(&self.pad);
        for c in ipa.chars() {
            if let Some(id) = self.ids.get(&c) {
                out.extend(id);
                out.extend(&self.pad);
            }
        }
        out.extend(&self.eos);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(add_blank: bool) -> CharVocab {
        let map = [
            ("_", 0),
            (" ", 1),
            ("a", 2),
            ("b", 3),
            ("'", 4),
            ("<unk>", 5),
        ]
        .into_iter()
        .map(|(t, i)| (t.to_string(), i))
        .collect();
        CharVocab::new(Path::new("vocab.json"), map, add_blank).unwrap()
    }

    #[test]
    fn characters_are_lowercased_filtered_stripped_and_interspersed() {
        assert_eq!(vocab(false).encode(" Ab, b'a! "), vec![2, 3, 1, 3, 4, 2]);
        assert_eq!(vocab(true).encode("ab"), vec![0, 2, 0, 3, 0]);
        assert_eq!(vocab(true).encode("?!"), vec![0]);
    }

    #[test]
    fn piper_ids_put_pad_after_every_phoneme() {
        let map = [("_", 0), ("^", 1), ("$", 2), (" ", 3), ("a", 4), ("ˈ", 5)]
            .into_iter()
            .map(|(t, i)| (t.to_string(), vec![i]))
            .collect();
        let ids = PhonemeIds::new(Path::new("v.onnx.json"), map).unwrap();
        assert_eq!(ids.encode("ˈa a?"), vec![1, 0, 5, 0, 4, 0, 3, 0, 4, 0, 2]);
    }
}
