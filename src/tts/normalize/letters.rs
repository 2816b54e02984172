//! Words in capitals: acronyms spelled with the letter names Swahili speakers use, and capital words that can
//! be said (a name, *UKIMWI*) read as words.

use regex::Captures;

use super::numbers::UNITS;

/// Letter names, A to Z, as said in Swahili when a word is spelled.
const NAMES: [&str; 26] = [
    "ei", "bi", "si", "di", "i", "ef", "ji", "eichi", "ai", "jei", "kei", "el", "em", "en", "ou",
    "pi", "kyu", "ar", "es", "ti", "yu", "vi", "dabuliu", "eksi", "wai", "zedi",
];

/// The name of a capital letter ("" for anything else).
pub(super) fn letter_name(c: char) -> &'static str {
    let index = (c as u8).wrapping_sub(b'A') as usize;
    if c.is_ascii_uppercase() {
        NAMES[index]
    } else {
        ""
    }
}

/// A code read character by character: letters by name, digits as digits.
pub(super) fn spell_code(code: &str) -> String {
    code.chars()
        .filter_map(|c| match c {
            'A'..='Z' => Some(letter_name(c)),
            '0'..='9' => Some(UNITS[c as usize - '0' as usize]),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Capital words: spelled when they cannot be said (NMB, CRDB), read as words when they can (MARY, AMANI).
pub(super) fn acronyms(s: &str) -> String {
    re!(r"\b[A-Z]{2,}\b")
        .replace_all(s, |c: &Captures| {
            let word = &c[0];
            if sayable(word) {
                word.to_lowercase()
            } else {
                spell_code(word)
            }
        })
        .into_owned()
}

/// Whether a word of four or more letters can be said as a Swahili speaker would: vowels in it, a first
/// consonant cluster a word may start with, no run of three consonants, and at most a simple final cluster.
pub(super) fn sayable(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let letters = lower.as_bytes();
    let is_vowel = |b: &u8| b"aeiou".contains(b);
    // Three letters are a word only as a name is: two vowels around or after one consonant (ALI, EVA, JOE).
    if letters.len() == 3 {
        let shape: Vec<bool> = letters.iter().map(is_vowel).collect();
        return shape == [true, false, true] || shape == [false, true, true];
    }
    if letters.len() < 4 {
        return false;
    }
    // 'y' is a vowel unless a vowel follows it (MARY, but YUSUFU).
    let vowel = |i: usize| match letters[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => true,
        b'y' => letters.get(i + 1).is_none_or(|&n| !b"aeiou".contains(&n)),
        _ => false,
    };
    let runs: Vec<(usize, usize)> = consonant_runs(letters.len(), &vowel);
    if runs.len() == 1 && runs[0] == (0, letters.len()) {
        return false;
    }
    runs.iter().all(|&(start, end)| {
        let cluster = &lower[start..end];
        match (start == 0, end == letters.len()) {
            (true, _) => cluster.len() == 1 || ONSETS.contains(&cluster),
            (false, true) => cluster.len() == 1 || CODAS.contains(&cluster),
            (false, false) => cluster.len() <= 2 || ONSETS.contains(&&cluster[1..]),
        }
    })
}

/// (start, end) of each run of consonants.
fn consonant_runs(len: usize, vowel: &dyn Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for i in 0..=len {
        match (i < len && !vowel(i), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

/// Consonant clusters a word may start with (Swahili's own and those of common loanwords and names).
const ONSETS: &[&str] = &[
    "mb", "nd", "ng", "nj", "nz", "mv", "ch", "sh", "th", "dh", "gh", "kh", "ny", "bw", "kw", "gw",
    "mw", "nw", "pw", "tw", "sw", "fy", "vy", "by", "ky", "py", "my", "br", "bl", "cl", "cr", "dr",
    "fr", "fl", "gr", "gl", "kr", "pl", "pr", "st", "sp", "sk", "tr", "sl", "sm", "sn", "str",
    "ngw", "nyw", "mbw", "ndw", "shw", "chw",
    // Swahili's syllabic nasals before a consonant: mtu, mkono, msaada, nchi.
    "mt", "mk", "ms", "mz", "mf", "mp", "mg", "md", "ml", "mn", "mch", "msh", "nch", "nt", "nk",
    "ns",
];

/// Final clusters of names and loanwords said as words.
const CODAS: &[&str] = &[
    "ng", "nd", "nt", "nk", "st", "rt", "rd", "rk", "ck", "ll", "ss", "sh", "ch", "th", "rn", "rs",
    "hn",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sayable_capitals_are_words_and_the_rest_are_spelled() {
        assert_eq!(acronyms("MARY na AMANI"), "mary na amani");
        assert_eq!(acronyms("NMB CRDB"), "en em bi si ar di bi");
        assert_eq!(acronyms("TCRA NEMC BOT"), "ti si ar ei en i em si bi ou ti");
        assert_eq!(acronyms("ALI na CCM"), "ali na si si em");
        assert_eq!(acronyms("TANAPA EWURA UKIMWI"), "tanapa ewura ukimwi");
    }

    #[test]
    fn codes_are_spelled_by_letter_and_digit() {
        assert_eq!(spell_code("QF4H"), "kyu ef nne eichi");
    }
}
