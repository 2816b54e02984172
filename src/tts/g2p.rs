//! Swahili grapheme-to-phoneme conversion, syllabification, penultimate stress and phrase intonation.
//!
//! Swahili spelling is close to phonemic, so letter-to-sound rules cover nearly every word; the lexicon
//! (`config/lexicon.toml`) handles the rest. The symbol set (IPA):
//!
//! | kind | symbols |
//! |---|---|
//! | vowels | a ɛ i ɔ u |
//! | stops | p b t d k g; affricates tʃ (ch) dʒ (j — plain, not implosive) |
//! | fricatives | f v θ (th) ð (dh) s z ʃ (sh) ɣ (gh) x (kh) h |
//! | nasals | m n ɲ (ny) ŋ (ng') |
//! | liquids, glides | l r w j (y) |
//! | prenasalised | ᵐb (mb) ⁿd (nd) ⁿdʒ (nj) ᵑg (ng) ⁿz (nz) ᶬv (mv) |
//! | syllabic nasals | m̩ n̩ — a word-initial nasal before a consonant that is not its prenasalised partner (mtu, nchi), or a word-initial prenasalised stop in a word with one vowel (mbwa → m̩.bwa) |

use std::fmt;

use super::lexicon::Lexicon;

/// One Swahili phoneme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Phoneme {
    A,
    E,
    I,
    O,
    U,
    P,
    B,
    T,
    D,
    K,
    G,
    Ch,
    J,
    F,
    V,
    Th,
    Dh,
    S,
    Z,
    Sh,
    Gh,
    Kh,
    H,
    M,
    N,
    Ny,
    Ng,
    L,
    R,
    W,
    Y,
    Mb,
    Nd,
    Nj,
    Ngg,
    Nz,
    Mv,
    SylM,
    SylN,
}

/// Every phoneme with its IPA symbol, in the order of the table above.
const TABLE: &[(Phoneme, &str)] = &[
    (Phoneme::A, "a"),
    (Phoneme::E, "ɛ"),
    (Phoneme::I, "i"),
    (Phoneme::O, "ɔ"),
    (Phoneme::U, "u"),
    (Phoneme::P, "p"),
    (Phoneme::B, "b"),
    (Phoneme::T, "t"),
    (Phoneme::D, "d"),
    (Phoneme::K, "k"),
    (Phoneme::G, "g"),
    (Phoneme::Ch, "tʃ"),
    (Phoneme::J, "dʒ"),
    (Phoneme::F, "f"),
    (Phoneme::V, "v"),
    (Phoneme::Th, "θ"),
    (Phoneme::Dh, "ð"),
    (Phoneme::S, "s"),
    (Phoneme::Z, "z"),
    (Phoneme::Sh, "ʃ"),
    (Phoneme::Gh, "ɣ"),
    (Phoneme::Kh, "x"),
    (Phoneme::H, "h"),
    (Phoneme::M, "m"),
    (Phoneme::N, "n"),
    (Phoneme::Ny, "ɲ"),
    (Phoneme::Ng, "ŋ"),
    (Phoneme::L, "l"),
    (Phoneme::R, "r"),
    (Phoneme::W, "w"),
    (Phoneme::Y, "j"),
    (Phoneme::Mb, "ᵐb"),
    (Phoneme::Nd, "ⁿd"),
    (Phoneme::Nj, "ⁿdʒ"),
    (Phoneme::Ngg, "ᵑg"),
    (Phoneme::Nz, "ⁿz"),
    (Phoneme::Mv, "ᶬv"),
    (Phoneme::SylM, "m̩"),
    (Phoneme::SylN, "n̩"),
];

/// The IPA symbols accepted in lexicon `[phonemes]` entries.
pub const PHONEME_SYMBOLS: &[&str] = &[
    "a", "ɛ", "i", "ɔ", "u", "p", "b", "t", "d", "k", "g", "tʃ", "dʒ", "f", "v", "θ", "ð", "s",
    "z", "ʃ", "ɣ", "x", "h", "m", "n", "ɲ", "ŋ", "l", "r", "w", "j", "ᵐb", "ⁿd", "ⁿdʒ", "ᵑg", "ⁿz",
    "ᶬv", "m̩", "n̩",
];

impl Phoneme {
    /// The IPA symbol.
    pub fn symbol(self) -> &'static str {
        TABLE
            .iter()
            .find(|(p, _)| *p == self)
            .map_or("?", |(_, s)| s)
    }

    /// Parse an IPA symbol of the documented set.
    pub fn from_symbol(symbol: &str) -> Option<Self> {
        TABLE.iter().find(|(_, s)| *s == symbol).map(|(p, _)| *p)
    }

    /// Vowels.
    pub fn is_vowel(self) -> bool {
        matches!(
            self,
            Phoneme::A | Phoneme::E | Phoneme::I | Phoneme::O | Phoneme::U
        )
    }

    /// Phonemes that form a syllable nucleus: vowels and syllabic nasals.
    pub fn is_syllabic(self) -> bool {
        self.is_vowel() || matches!(self, Phoneme::SylM | Phoneme::SylN)
    }
}

impl fmt::Display for Phoneme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A syllable: onset consonants, a nucleus (vowel or syllabic nasal), and rarely a coda (loanword endings).
#[derive(Debug, Clone, PartialEq)]
pub struct Syllable {
    /// The phonemes in order.
    pub phonemes: Vec<Phoneme>,
}

/// A word with its syllables and the index of the stressed one (the penultimate).
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// The word as written (lowercase).
    pub text: String,
    /// Its syllables.
    pub syllables: Vec<Syllable>,
    /// Index of the stressed syllable.
    pub stressed: usize,
}

/// How a phrase ends, which decides its final pitch movement and pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhraseEnd {
    /// A comma, semicolon or colon: level pitch, short pause.
    Continue,
    /// A full stop (or the end of the text): final fall.
    Statement,
    /// An exclamation: fall from a higher peak.
    Exclamation,
    /// A question mark: final rise.
    Question,
}

/// Words between punctuation marks.
#[derive(Debug, Clone, PartialEq)]
pub struct Phrase {
    /// The words.
    pub words: Vec<Word>,
    /// The closing punctuation.
    pub end: PhraseEnd,
}

/// A whole text as phrases of syllabified, stressed words.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Utterance {
    /// The phrases in order.
    pub phrases: Vec<Phrase>,
}

/// Transcribe normalised text (words and punctuation) into phrases of phonemes.
pub fn transcribe(text: &str, lexicon: &Lexicon) -> Utterance {
    let mut phrases = Vec::new();
    let mut words = Vec::new();
    let mut token = String::new();
    let flush_word = |token: &mut String, words: &mut Vec<Word>| {
        if !token.is_empty() {
            if let Some(word) = word(token, lexicon) {
                words.push(word);
            }
            token.clear();
        }
    };
    for c in text.chars() {
        let end = match c {
            ',' | ';' | ':' => Some(PhraseEnd::Continue),
            '.' | '…' => Some(PhraseEnd::Statement),
            '!' => Some(PhraseEnd::Exclamation),
            '?' => Some(PhraseEnd::Question),
            _ => None,
        };
        if c.is_alphabetic() || c == '\'' {
            token.extend(c.to_lowercase());
            continue;
        }
        flush_word(&mut token, &mut words);
        if let Some(end) = end {
            if !words.is_empty() {
                phrases.push(Phrase {
                    words: std::mem::take(&mut words),
                    end,
                });
            } else if let Some(last) = phrases.last_mut() {
                // "?!" or "..." after a phrase: the strongest mark wins.
                if end == PhraseEnd::Question || last.end == PhraseEnd::Continue {
                    last.end = end;
                }
            }
        }
    }
    flush_word(&mut token, &mut words);
    if !words.is_empty() {
        phrases.push(Phrase {
            words,
            end: PhraseEnd::Statement,
        });
    }
    Utterance { phrases }
}

/// One word: lexicon phonemes or letter-to-sound rules, then syllables and stress.
pub fn word(text: &str, lexicon: &Lexicon) -> Option<Word> {
    let text = text.trim_matches('\'').to_lowercase();
    let phonemes = match lexicon.phonemes(&text) {
        Some(p) => p.to_vec(),
        None => letters_to_phonemes(&text),
    };
    if phonemes.is_empty() {
        return None;
    }
    let syllables = syllabify(&phonemes);
    let stressed = syllables.len().saturating_sub(2);
    Some(Word {
        text,
        syllables,
        stressed,
    })
}

/// Letter-to-sound rules for Swahili spelling.
pub fn letters_to_phonemes(word: &str) -> Vec<Phoneme> {
    use Phoneme::*;
    let letters: Vec<char> = word
        .chars()
        .map(fold_accent)
        .filter(|c| c.is_ascii_lowercase() || *c == '\'')
        .collect();
    let at = |i: usize| letters.get(i).copied().unwrap_or(' ');
    let is_vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u');
    let mut out = Vec::with_capacity(letters.len());
    let mut i = 0;
    while i < letters.len() {
        let (c, next) = (at(i), at(i + 1));
        let (phoneme, width) = match (c, next) {
            ('n', 'g') if at(i + 2) == '\'' => (Ng, 3),
            ('c', 'h') => (Ch, 2),
            ('s', 'h') => (Sh, 2),
            ('n', 'y') => (Ny, 2),
            ('t', 'h') => (Th, 2),
            ('d', 'h') => (Dh, 2),
            ('g', 'h') => (Gh, 2),
            ('k', 'h') => (Kh, 2),
            ('m', 'b') => (Mb, 2),
            ('m', 'v') => (Mv, 2),
            ('n', 'd') => (Nd, 2),
            ('n', 'j') => (Nj, 2),
            ('n', 'g') => (Ngg, 2),
            ('n', 'z') => (Nz, 2),
            // A word-initial nasal before a consonant is a syllable of its own (the m-/n- class prefixes);
            // inside a word the nasal joins the next syllable's onset (a.sa.ntɛ, a.ka.u.nti).
            ('m', n) if i == 0 && n != ' ' && !is_vowel(n) && n != 'w' && n != 'y' => (SylM, 1),
            ('n', n) if i == 0 && n != ' ' && !is_vowel(n) && n != 'w' && n != '\'' => (SylN, 1),
            ('a', _) => (A, 1),
            ('e', _) => (E, 1),
            ('i', _) => (I, 1),
            ('o', _) => (O, 1),
            ('u', _) => (U, 1),
            ('p', _) => (P, 1),
            ('b', _) => (B, 1),
            ('t', _) => (T, 1),
            ('d', _) => (D, 1),
            ('k' | 'c' | 'q', _) => (K, 1),
            ('g', _) => (G, 1),
            ('j', _) => (J, 1),
            ('f', _) => (F, 1),
            ('v', _) => (V, 1),
            ('s', _) => (S, 1),
            ('z', _) => (Z, 1),
            ('h', _) => (H, 1),
            ('m', _) => (M, 1),
            ('n', _) => (N, 1),
            ('l', _) => (L, 1),
            ('r', _) => (R, 1),
            ('w', _) => (W, 1),
            ('y', _) => (Y, 1),
            ('x', _) => {
                out.push(K);
                (S, 1)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push(phoneme);
        i += width;
    }
    split_monosyllable_nasal(out)
}

/// In a word with one vowel, a word-initial prenasalised stop is a syllabic nasal plus the stop:
/// mbwa → m̩.bwa, nzi → n̩.zi, nge → n̩.gɛ (so that the penultimate stress has a syllable to fall on).
fn split_monosyllable_nasal(mut phonemes: Vec<Phoneme>) -> Vec<Phoneme> {
    use Phoneme::*;
    if phonemes.iter().filter(|p| p.is_syllabic()).count() != 1 {
        return phonemes;
    }
    let split = match phonemes.first() {
        Some(Mb) => Some((SylM, B)),
        Some(Mv) => Some((SylM, V)),
        Some(Nd) => Some((SylN, D)),
        Some(Nj) => Some((SylN, J)),
        Some(Ngg) => Some((SylN, G)),
        Some(Nz) => Some((SylN, Z)),
        _ => None,
    };
    if let Some((nasal, stop)) = split {
        phonemes.splice(0..1, [nasal, stop]);
    }
    phonemes
}

fn fold_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ä' => 'a',
        'é' | 'è' | 'ê' | 'ë' => 'e',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ò' | 'ô' | 'ö' => 'o',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'ñ' => 'n',
        other => other,
    }
}

/// Open syllables: every nucleus takes the consonants before it; trailing consonants join the last syllable.
pub fn syllabify(phonemes: &[Phoneme]) -> Vec<Syllable> {
    let mut syllables: Vec<Syllable> = Vec::new();
    let mut pending: Vec<Phoneme> = Vec::new();
    for &p in phonemes {
        pending.push(p);
        if p.is_syllabic() {
            syllables.push(Syllable {
                phonemes: std::mem::take(&mut pending),
            });
        }
    }
    match syllables.last_mut() {
        Some(last) => last.phonemes.extend(pending),
        None if !pending.is_empty() => syllables.push(Syllable { phonemes: pending }),
        None => {}
    }
    syllables
}

impl fmt::Display for Word {
    /// Syllables joined by `.`, the stressed one marked `ˈ`: `a.su.ˈbu.hi`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, syllable) in self.syllables.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            if i == self.stressed && self.syllables.len() > 1 {
                f.write_str("ˈ")?;
            }
            for p in &syllable.phonemes {
                f.write_str(p.symbol())?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Utterance {
    /// Words separated by spaces, `|` after a minor phrase, `‖` after a sentence, `↗` before a question's end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, phrase) in self.phrases.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            let words: Vec<String> = phrase.words.iter().map(ToString::to_string).collect();
            f.write_str(&words.join(" "))?;
            f.write_str(match phrase.end {
                PhraseEnd::Continue => " |",
                PhraseEnd::Statement | PhraseEnd::Exclamation => " ‖",
                PhraseEnd::Question => " ↗‖",
            })?;
        }
        Ok(())
    }
}
