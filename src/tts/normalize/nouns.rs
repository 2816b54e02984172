//! Numbers after a noun agree with its class: *watu watatu*, *miaka mitano*, *vitabu vinne*, *nyumba tatu*.
//! The classes come from `config/nouns.tsv`, a lexicon of common countable nouns compiled into the binary.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::numbers::cardinal;

const EMBEDDED: &str = include_str!("../../../config/nouns.tsv");

/// The concord a number takes after a noun (the forms of 1, 2, 3, 4, 5 and 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concord {
    /// People and animals, whatever their class: *mmoja, wawili, watatu*.
    Animate,
    /// Classes 3/4 (*mti, miti*): *mmoja, miwili, mitatu*.
    Mi,
    /// Classes 5/6 (*gari, magari*): *moja, mawili, matatu*.
    Ma,
    /// Classes 7/8 (*kitabu, vitabu*): *kimoja, viwili, vitatu*.
    Ki,
    /// Classes 9/10 (*nyumba*): *moja, mbili, tatu*, the plain forms.
    N,
    /// Class 11 (*ukurasa*, plural in class 10): *mmoja*, then the plain forms.
    U,
    /// Class 16 (*mahali*): *pamoja, pawili, patatu*.
    Pa,
}

impl Concord {
    fn from_label(label: &str) -> Option<Self> {
        Some(match label {
            "A" => Self::Animate,
            "MI" => Self::Mi,
            "MA" => Self::Ma,
            "KI" => Self::Ki,
            "N" => Self::N,
            "U" => Self::U,
            "PA" => Self::Pa,
            _ => return None,
        })
    }

    /// The agreeing form of a units digit, where it differs from the plain one.
    fn form(self, digit: u64) -> Option<&'static str> {
        let index = match digit {
            1..=5 => digit as usize - 1,
            8 => 5,
            _ => return None,
        };
        let forms: [&str; 6] = match self {
            Self::Animate => ["mmoja", "wawili", "watatu", "wanne", "watano", "wanane"],
            Self::Mi => ["mmoja", "miwili", "mitatu", "minne", "mitano", "minane"],
            Self::Ma => ["moja", "mawili", "matatu", "manne", "matano", "manane"],
            Self::Ki => ["kimoja", "viwili", "vitatu", "vinne", "vitano", "vinane"],
            Self::N => return None,
            Self::U => ["mmoja", "mbili", "tatu", "nne", "tano", "nane"],
            Self::Pa => ["pamoja", "pawili", "patatu", "panne", "patano", "panane"],
        };
        Some(forms[index])
    }
}

fn lexicon() -> &'static HashMap<String, (Concord, bool)> {
    static NOUNS: OnceLock<HashMap<String, (Concord, bool)>> = OnceLock::new();
    NOUNS.get_or_init(|| {
        EMBEDDED
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut fields = l.split('\t');
                let noun = fields.next()?.trim().to_lowercase();
                let concord = Concord::from_label(fields.next()?.trim())?;
                let singular = match fields.next() {
                    None => false,
                    Some("one") => true,
                    Some(_) => return None,
                };
                Some((noun, (concord, singular)))
            })
            .collect()
    })
}

/// A noun's concord and whether the form is singular, if the lexicon knows it (any case).
fn entry(word: &str) -> Option<(Concord, bool)> {
    lexicon().get(&word.to_lowercase()).copied()
}

/// A noun's concord, if the lexicon knows it (any case).
pub fn concord_of(word: &str) -> Option<Concord> {
    entry(word).map(|(concord, _)| concord)
}

/// Whether a word is a plural noun of the lexicon (a count of something).
pub fn is_plural_count(word: &str) -> bool {
    let word: String = word
        .chars()
        .filter(|c| c.is_alphabetic() || *c == '\'')
        .collect();
    entry(&word).is_some_and(|(_, singular)| !singular)
}

/// `n` in words, agreeing with `noun` when it counts it: "watu" 21 → "ishirini na mmoja". After a singular noun
/// a number other than 1 is a label (*mwaka 2025*, *chumba 12*) and is read plainly.
pub fn cardinal_after(noun: &str, n: u64) -> String {
    let plain = cardinal(n);
    let Some((concord, singular)) = entry(noun) else {
        return plain;
    };
    let counts = !singular || n == 1;
    match concord.form(n % 10) {
        Some(form) if counts => match plain.rsplit_once(' ') {
            Some((head, _)) => format!("{head} {form}"),
            None => form.to_string(),
        },
        _ => plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_agree_with_the_noun_they_count() {
        assert_eq!(cardinal_after("watu", 3), "watatu");
        assert_eq!(cardinal_after("miaka", 25), "ishirini na mitano");
        assert_eq!(cardinal_after("vitabu", 4), "vinne");
        assert_eq!(cardinal_after("nyumba", 3), "tatu");
        assert_eq!(cardinal_after("watoto", 1001), "elfu moja na mmoja");
        assert_eq!(cardinal_after("watu", 1000), "elfu moja");
        assert_eq!(cardinal_after("mwaka", 2025), cardinal(2025));
        assert_eq!(cardinal_after("mtoto", 1), "mmoja");
        assert_eq!(cardinal_after("watu", 7), "saba");
    }

    #[test]
    fn the_shipped_lexicon_parses_every_line() {
        let lines = EMBEDDED
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(
            lexicon().len(),
            lines,
            "a line of config/nouns.tsv is not `noun<TAB>CLASS`"
        );
    }
}
