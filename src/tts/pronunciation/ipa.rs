//! IPA as callers write it → the G2P's phoneme set. Common transcriptions of Swahili are accepted as they are
//! usually written: plain `e o` for `ɛ ɔ`, `ɑ` for `a`, tie bars (`t͡ʃ`), implosives (`ɓ ɗ ʄ`), prenasalised
//! stops written with or without the raised nasal (`mb`, `ᵐb`), and espeak's `ɟ` for `j`. Length marks,
//! stress marks, syllable dots, tones and slashes or brackets around the transcription are ignored: syllables
//! and the penultimate stress are worked out as for any other word.

use crate::tts::g2p::{Phoneme, PHONEME_SYMBOLS};

/// Why a transcription was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IpaError {
    /// A symbol outside the accepted set.
    #[error("unknown IPA symbol {symbol:?}{hint}")]
    UnknownSymbol {
        /// The symbol as written.
        symbol: String,
        /// A suggestion, with its leading separator, or empty.
        hint: &'static str,
    },
    /// Nothing but marks and spaces.
    #[error("the transcription has no phonemes")]
    Empty,
}

/// Spellings of each phoneme, longest first where one is a prefix of another.
const SPELLINGS: &[(&str, Phoneme)] = {
    use Phoneme::*;
    &[
        ("ⁿdʒ", Nj),
        ("ndʒ", Nj),
        ("ⁿɟ", Nj),
        ("nɟ", Nj),
        ("ɲɟ", Nj),
        ("ᵐb", Mb),
        ("mb", Mb),
        ("ᵐɓ", Mb),
        ("mɓ", Mb),
        ("ⁿd", Nd),
        ("nd", Nd),
        ("ⁿɗ", Nd),
        ("nɗ", Nd),
        ("ᵑg", Ngg),
        ("ᵑɡ", Ngg),
        ("ŋg", Ngg),
        ("ŋɡ", Ngg),
        ("ⁿz", Nz),
        ("nz", Nz),
        ("ᶬv", Mv),
        ("mv", Mv),
        ("tʃ", Ch),
        ("ʧ", Ch),
        ("dʒ", J),
        ("ʤ", J),
        ("ɟ", J),
        ("ʄ", J),
        ("m̩", SylM),
        ("m̍", SylM),
        ("n̩", SylN),
        ("n̍", SylN),
        ("a", A),
        ("ɑ", A),
        ("ɐ", A),
        ("æ", A),
        ("ʌ", A),
        ("ə", A),
        ("ɛ", E),
        ("e", E),
        ("i", I),
        ("ɪ", I),
        ("ɔ", O),
        ("o", O),
        ("u", U),
        ("ʊ", U),
        ("p", P),
        ("b", B),
        ("ɓ", B),
        ("t", T),
        ("d", D),
        ("ɗ", D),
        ("k", K),
        ("g", G),
        ("ɡ", G),
        ("ɠ", G),
        ("f", F),
        ("v", V),
        ("θ", Th),
        ("ð", Dh),
        ("s", S),
        ("z", Z),
        ("ʃ", Sh),
        ("ɣ", Gh),
        ("x", Kh),
        ("h", H),
        ("m", M),
        ("n", N),
        ("ɲ", Ny),
        ("ŋ", Ng),
        ("l", L),
        ("r", R),
        ("ɾ", R),
        ("ɹ", R),
        ("w", W),
        ("j", Y),
    ]
};

/// Marks that carry nothing the G2P uses: stress, length, syllable breaks, tones, delimiters, aspiration.
fn ignored(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            'ˈ' | 'ˌ' | '\'' | 'ː' | 'ˑ' | ':' | '.' | '-' | '/' | '[' | ']' | '|' | '‖' | '‿' | 'ʰ' | 'ʔ' | 'ʼ'
        )
        // Combining marks (tones, tie bars, nasalisation) other than the syllabic marks read above.
        || (('\u{0300}'..='\u{036F}').contains(&c) && c != '\u{0329}' && c != '\u{030D}')
}

/// Vowels written with a tone or stress accent, read as the plain vowel.
fn fold_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ā' => 'a',
        'é' | 'è' | 'ê' | 'ē' => 'e',
        'í' | 'ì' | 'î' | 'ī' => 'i',
        'ó' | 'ò' | 'ô' | 'ō' => 'o',
        'ú' | 'ù' | 'û' | 'ū' => 'u',
        other => other,
    }
}

/// A word of advice for symbols people often write by mistake.
fn hint(symbol: &str) -> &'static str {
    match symbol {
        "y" => " (write j for the y of \"yai\")",
        "c" => " (write tʃ for ch, or k)",
        "q" => " (write k)",
        "ʒ" => " (write dʒ for j)",
        _ => "",
    }
}

/// Read an IPA transcription into phonemes.
pub fn parse(ipa: &str) -> Result<Vec<Phoneme>, IpaError> {
    let cleaned: String = ipa
        .chars()
        .map(fold_accent)
        .filter(|&c| !ignored(c))
        .collect();
    let mut phonemes = Vec::new();
    let mut rest = cleaned.as_str();
    while let Some(c) = rest.chars().next() {
        let found = SPELLINGS
            .iter()
            .find(|(spelling, _)| rest.starts_with(spelling));
        match found {
            Some((spelling, phoneme)) => {
                phonemes.push(*phoneme);
                rest = &rest[spelling.len()..];
            }
            None => {
                let symbol = c.to_string();
                return Err(IpaError::UnknownSymbol {
                    hint: hint(&symbol),
                    symbol,
                });
            }
        }
    }
    if phonemes.is_empty() {
        return Err(IpaError::Empty);
    }
    Ok(phonemes)
}

/// The symbols accepted besides the G2P's own, for documentation.
pub fn also_accepted() -> &'static [&'static str] {
    &[
        "ɑ ɐ æ ʌ ə → a",
        "e → ɛ",
        "ɪ → i",
        "o → ɔ",
        "ʊ → u",
        "ɓ ɗ ʄ ɠ → b d dʒ g",
        "ɟ ʧ ʤ → dʒ tʃ dʒ",
        "ɾ ɹ → r",
        "mb nd ndʒ ŋg nz mv → ᵐb ⁿd ⁿdʒ ᵑg ⁿz ᶬv",
    ]
}

/// The G2P's own symbols (always accepted).
pub fn own_symbols() -> &'static [&'static str] {
    PHONEME_SYMBOLS
}

/// Phonemes written back in Swahili spelling (ng' for ŋ, ch for tʃ …), for voices that read letters.
pub fn spell(phonemes: &[Phoneme]) -> String {
    use Phoneme::*;
    phonemes
        .iter()
        .map(|p| match p {
            A => "a",
            E => "e",
            I => "i",
            O => "o",
            U => "u",
            P => "p",
            B => "b",
            T => "t",
            D => "d",
            K => "k",
            G => "g",
            Ch => "ch",
            J => "j",
            F => "f",
            V => "v",
            Th => "th",
            Dh => "dh",
            S => "s",
            Z => "z",
            Sh => "sh",
            Gh => "gh",
            Kh => "kh",
            H => "h",
            M | SylM => "m",
            N | SylN => "n",
            Ny => "ny",
            Ng => "ng'",
            L => "l",
            R => "r",
            W => "w",
            Y => "y",
            Mb => "mb",
            Nd => "nd",
            Nj => "nj",
            Ngg => "ng",
            Nz => "nz",
            Mv => "mv",
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Phoneme::*;

    #[test]
    fn swahili_transcriptions_as_usually_written_are_read() {
        assert_eq!(parse("/naiˈrɔbi/").unwrap(), vec![N, A, I, R, O, B, I]);
        assert_eq!(parse("nai.ˈro.bi").unwrap(), vec![N, A, I, R, O, B, I]);
        assert_eq!(parse("ˈt͡ʃai").unwrap(), vec![Ch, A, I]);
        assert_eq!(parse("tʃaːi").unwrap(), vec![Ch, A, I]);
        assert_eq!(parse("ᵐbuzi").unwrap(), parse("mbuzi").unwrap());
        assert_eq!(parse("ⁿdʒia").unwrap(), vec![Nj, I, A]);
        assert_eq!(parse("ɲama").unwrap(), vec![Ny, A, M, A]);
        assert_eq!(parse("ŋɔmbɛ").unwrap(), vec![Ng, O, Mb, E]);
        assert_eq!(parse("m̩tu").unwrap(), vec![SylM, T, U]);
        assert_eq!(parse("ɣali").unwrap(), vec![Gh, A, L, I]);
        assert_eq!(parse("ɓaɓa").unwrap(), vec![B, A, B, A]);
        assert_eq!(parse("dʒámbo").unwrap(), vec![J, A, Mb, O]);
    }

    #[test]
    fn the_g2p_symbols_read_as_themselves() {
        for symbol in PHONEME_SYMBOLS {
            let phoneme = Phoneme::from_symbol(symbol).unwrap();
            assert_eq!(parse(symbol).unwrap(), vec![phoneme], "{symbol}");
        }
        // The lexicon's own space-separated form.
        assert_eq!(parse("k ɔ m p j u t a").unwrap().len(), 8);
    }

    #[test]
    fn unknown_symbols_are_named() {
        assert_eq!(
            parse("naiʁobi"),
            Err(IpaError::UnknownSymbol {
                symbol: "ʁ".into(),
                hint: ""
            })
        );
        let error = parse("yai").unwrap_err().to_string();
        assert!(
            error.contains("\"y\"") && error.contains("write j"),
            "{error}"
        );
        assert_eq!(parse(" ˈ. "), Err(IpaError::Empty));
    }
}
