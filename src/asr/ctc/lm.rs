//! An n-gram language model read from an ARPA file (as KenLM's `lmplz` writes them), scored the way KenLM scores
//! it: log10 probabilities with back-off, `<s>` before the first word, `</s>` after the last, unknown words as
//! `<unk>`. The beam search ([`super::beam`]) weighs its scores as pyctcdecode does: `alpha` times the natural
//! log probability plus `beta` per word, and an offset for words outside the vocabulary.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The probability KenLM gives `<unk>` when the file names none.
const MISSING_UNKNOWN_LOG10: f32 = -100.0;
/// Natural log from log10.
const LOG10_TO_LN: f64 = std::f64::consts::LN_10;
/// Longer unknown words are penalised in proportion (pyctcdecode's expected word length).
const AVERAGE_WORD_CHARS: usize = 6;

/// How the model's scores are weighed against the acoustic ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// The language model's weight.
    pub alpha: f64,
    /// A bonus per word (against the model's preference for few words).
    pub beta: f64,
    /// Added for a word outside the vocabulary (and, scaled, for a partial word no known word starts with).
    pub unknown_offset: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            alpha: 0.5,
            beta: 1.5,
            unknown_offset: -10.0,
        }
    }
}

/// A loaded model.
#[derive(Debug)]
pub struct LanguageModel {
    order: usize,
    ids: HashMap<String, u32>,
    unknown: u32,
    begin: Option<u32>,
    end: Option<u32>,
    /// Per order, unigrams first.
    grams: Vec<Grams>,
    /// The words that count as known: unigrams listed with a back-off (as pyctcdecode reads an ARPA file).
    known: HashSet<String>,
    /// Every prefix of a known word.
    prefixes: HashSet<String>,
    weights: Weights,
}

/// One order's n-grams: word ids → (log10 probability, log10 back-off).
type Grams = HashMap<Box<[u32]>, (f32, f32)>;

/// The words that condition the next one (at most order − 1, oldest first).
pub type State = Vec<u32>;

/// Why an ARPA file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: line {line}: {why}")]
pub struct ArpaError {
    path: String,
    line: usize,
    why: String,
}

impl LanguageModel {
    /// Read the ARPA file at `path`.
    pub fn load(path: &Path, weights: Weights) -> Result<Self, ArpaError> {
        let text = std::fs::read_to_string(path).map_err(|e| ArpaError {
            path: path.display().to_string(),
            line: 0,
            why: e.to_string(),
        })?;
        Self::parse(&text, weights).map_err(|(line, why)| ArpaError {
            path: path.display().to_string(),
            line,
            why,
        })
    }

    /// Read ARPA text; an error gives the line and why.
    pub fn parse(text: &str, weights: Weights) -> Result<Self, (usize, String)> {
        let mut model = Self {
            order: 0,
            ids: HashMap::new(),
            unknown: 0,
            begin: None,
            end: None,
            grams: Vec::new(),
            known: HashSet::new(),
            prefixes: HashSet::new(),
            weights,
        };
        let mut section: Option<usize> = None;
        let mut declared: Vec<usize> = Vec::new();
        for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() {
                continue;
            }
            if line == "\\data\\" {
                section = Some(0);
                continue;
            }
            if line == "\\end\\" {
                break;
            }
            if let Some(n) = line
                .strip_prefix('\\')
                .and_then(|l| l.strip_suffix("-grams:"))
            {
                let n: usize = n.parse().map_err(|_| (number, "a bad section".into()))?;
                if n == 0 || n > declared.len() {
                    return Err((number, format!("{n}-grams are not declared in \\data\\")));
                }
                section = Some(n);
                continue;
            }
            match section {
                None => {}
                Some(0) => {
                    if let Some(count) = line.strip_prefix("ngram ") {
                        let (n, _) = count
                            .split_once('=')
                            .ok_or((number, "a bad count".into()))?;
                        let n: usize = n
                            .trim()
                            .parse()
                            .map_err(|_| (number, "a bad order".into()))?;
                        if n != declared.len() + 1 {
                            return Err((number, "the orders are not declared in turn".into()));
                        }
                        declared.push(n);
                    }
                }
                Some(n) => model.add(n, line).map_err(|why| (number, why))?,
            }
        }
        if model.grams.first().is_none_or(HashMap::is_empty) {
            return Err((0, "the file has no unigrams".into()));
        }
        model.order = model.grams.len();
        model.unknown = match model.ids.get("<unk>") {
            Some(&id) => id,
            None => {
                let id = model.word_id("<unk>");
                model.grams[0].insert(Box::new([id]), (MISSING_UNKNOWN_LOG10, 0.0));
                id
            }
        };
        model.begin = model.ids.get("<s>").copied();
        model.end = model.ids.get("</s>").copied();
        for word in &model.known {
            for (i, _) in word.char_indices().skip(1) {
                model.prefixes.insert(word[..i].to_string());
            }
            model.prefixes.insert(word.clone());
        }
        Ok(model)
    }

    fn word_id(&mut self, word: &str) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(word.to_string()).or_insert(next)
    }

    /// One n-gram line of the `n`-grams section.
    fn add(&mut self, n: usize, line: &str) -> Result<(), String> {
        let mut fields = line.split_whitespace();
        let probability: f32 = fields
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or("a bad probability")?;
        let words: Vec<&str> = fields.by_ref().take(n).collect();
        if words.len() != n {
            return Err(format!("an {n}-gram with {} words", words.len()));
        }
        let backoff: Option<f32> = match fields.next() {
            Some(b) => Some(b.parse().map_err(|_| "a bad back-off")?),
            None => None,
        };
        let ids: Box<[u32]> = words.iter().map(|w| self.word_id(w)).collect();
        while self.grams.len() < n {
            self.grams.push(HashMap::new());
        }
        if n == 1 && backoff.is_some() {
            self.known.insert(words[0].to_string());
        }
        self.grams[n - 1].insert(ids, (probability, backoff.unwrap_or(0.0)));
        Ok(())
    }

    /// The model's order.
    pub fn order(&self) -> usize {
        self.order
    }

    /// The context before the first word: `<s>`.
    pub fn start(&self) -> State {
        self.begin.into_iter().collect()
    }

    /// log10 p(`word` | `state`) with back-off, and the state after it.
    pub fn base_score(&self, state: &State, word: &str) -> (f32, State) {
        let id = self.ids.get(word).copied().unwrap_or(self.unknown);
        let score = self.log10(state, id);
        let mut next = state.clone();
        next.push(id);
        let keep = self.order.saturating_sub(1);
        if next.len() > keep {
            next.drain(..next.len() - keep);
        }
        (score, next)
    }

    fn log10(&self, context: &[u32], word: u32) -> f32 {
        let mut backoff = 0.0f32;
        for start in 0..=context.len() {
            let history = &context[start..];
            if history.len() + 1 > self.order {
                continue;
            }
            let mut gram: Vec<u32> = history.to_vec();
            gram.push(word);
            if let Some(&(probability, _)) = self.grams[history.len()].get(gram.as_slice()) {
                return probability + backoff;
            }
            if !history.is_empty() {
                if let Some(&(_, b)) = self.grams[history.len() - 1].get(history) {
                    backoff += b;
                }
            }
        }
        // Every word has a unigram (unknown ones are `<unk>`), so the loop always returns.
        backoff
    }

    /// Whether `word` is in the model's vocabulary (as KenLM's `in` answers).
    pub fn contains(&self, word: &str) -> bool {
        self.ids.contains_key(word)
    }

    /// The weighted score of `word` after `state` (with the end of the sentence when it is the last word), and
    /// the state after it.
    pub fn score(&self, state: &State, word: &str, last: bool) -> (f64, State) {
        let (log10, next) = self.base_score(state, word);
        let mut score = f64::from(log10);
        if !self.known.is_empty() && !self.known.contains(word) || !self.contains(word) {
            score += self.weights.unknown_offset;
        }
        if last {
            if let Some(end) = self.end {
                score += f64::from(self.log10(&next, end));
            }
        }
        (
            self.weights.alpha * score * LOG10_TO_LN + self.weights.beta,
            next,
        )
    }

    /// The penalty for a word being spelled: none while some known word starts with it, else the unknown
    /// offset (scaled up for long partial words).
    pub fn score_partial(&self, partial: &str) -> f64 {
        let unknown = match self.prefixes.contains(partial) {
            true => 0.0,
            false => self.weights.unknown_offset,
        };
        let chars = partial.chars().count();
        match chars > AVERAGE_WORD_CHARS {
            true => unknown * chars as f64 / AVERAGE_WORD_CHARS as f64,
            false => unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARPA: &str = "\\data\\\nngram 1=5\nngram 2=3\n\n\\1-grams:\n-99\t<s>\t-0.5\n-1.0\t</s>\n\
        -0.7\tmambo\t-0.2\n-0.9\tvipi\t-0.3\n-2.0\t<unk>\t0\n\n\\2-grams:\n-0.1\t<s> mambo\n\
        -0.2\tmambo vipi\n-0.3\tvipi </s>\n\n\\end\\\n";

    fn model() -> LanguageModel {
        LanguageModel::parse(ARPA, Weights::default()).unwrap()
    }

    #[test]
    fn found_bigrams_are_their_probability_and_others_back_off() {
        let lm = model();
        let start = lm.start();
        let (p, after) = lm.base_score(&start, "mambo");
        assert_eq!(p, -0.1);
        assert_eq!(lm.base_score(&after, "vipi").0, -0.2);
        // "vipi" after "<s>": back-off of <s> (-0.5) + p(vipi) (-0.9).
        assert!((lm.base_score(&start, "vipi").0 - -1.4).abs() < 1e-6);
        // An unknown word is <unk>.
        assert!((lm.base_score(&start, "habari").0 - -2.5).abs() < 1e-6);
    }

    #[test]
    fn scores_are_weighted_and_unknown_words_and_partials_pay() {
        let lm = model();
        let (known, state) = lm.score(&lm.start(), "mambo", false);
        assert!((known - (0.5 * -0.1 * LOG10_TO_LN + 1.5)).abs() < 1e-6);
        let (last, _) = lm.score(&state, "vipi", true);
        assert!((last - (0.5 * (-0.2f32 + -0.3) as f64 * LOG10_TO_LN + 1.5)).abs() < 1e-6);
        let (unknown, _) = lm.score(&lm.start(), "habari", false);
        assert!((unknown - (0.5 * (-2.5 - 10.0) * LOG10_TO_LN + 1.5)).abs() < 1e-5);
        assert_eq!(lm.score_partial("mam"), 0.0);
        assert_eq!(lm.score_partial("hab"), -10.0);
        assert_eq!(lm.score_partial("habarizenu"), -10.0 * 10.0 / 6.0);
    }

    #[test]
    fn malformed_files_say_where() {
        assert!(LanguageModel::parse(
            "\\data\\\nngram 1=1\n\\1-grams:\nx\ty\n",
            Weights::default()
        )
        .is_err_and(|(line, _)| line == 4));
        assert!(LanguageModel::parse("", Weights::default()).is_err());
        assert!(LanguageModel::parse("\\data\\\n\\2-grams:\n", Weights::default()).is_err());
    }
}
