//! Written Swahili → words a voice can say. Every voice (embedded and neural) reads through this.
//!
//! The pipeline is an ordered list of rewrite rules, most specific first, so that a telephone number is never
//! read as an amount and a date never as a range: lexicon respellings → telephone and card numbers → dates →
//! clock times → money → percentages and temperatures → fractions → ranges → ordinals → long digit strings →
//! units → plain numbers → abbreviations → symbols → acronyms. Each rule writes lowercase words, which no later
//! rule matches again.

mod calendar;
mod classify;
mod letters;
pub mod nouns;
pub mod numbers;
mod quantities;
mod ranges;
mod rules;
mod sentences;
mod web;

pub use numbers::{cardinal, ordinal};
pub use sentences::{split_clauses, split_pieces, split_sentences, PIECE_CHARS};

use super::lexicon::Lexicon;

/// Normalise Swahili text for speech with the shipped lexicon.
pub fn normalize(text: &str) -> String {
    normalize_with(text, Lexicon::embedded())
}

/// Normalise Swahili text for speech with a given lexicon.
pub fn normalize_with(text: &str, lexicon: &Lexicon) -> String {
    let mut s = clean_characters(text);
    if is_shouting(&s) {
        s = s.to_lowercase();
    }
    s = rules::apply_lexicon(&lexicon.respell_phrases(&s), lexicon);
    for rule in rules::RULES {
        s = rule(&s);
    }
    collapse_spaces(&spell_leftover_digits(&s))
}

/// Digits no rule claimed (glued to a word, say) are read one by one rather than left for the voice to skip.
fn spell_leftover_digits(s: &str) -> String {
    if !s.chars().any(|c| c.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut run = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            out.push(' ');
            out.push_str(&numbers::digits(&run));
            out.push(' ');
            run.clear();
        }
        out.push(c);
    }
    out.pop();
    out
}

/// Unify the characters people paste: typographic quotes and dashes, non-breaking and thin spaces.
fn clean_characters(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2009}' | '\u{202F}' | '\t' | '\r' | '\n' => ' ',
            '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{02BC}' => '\'',
            '\u{201C}' | '\u{201D}' | '«' | '»' => '"',
            // Emoji and their joiners are not read.
            '\u{1F000}'..='\u{1FAFF}'
            | '\u{2600}'..='\u{27BF}'
            | '\u{2B00}'..='\u{2BFF}'
            | '\u{FE0F}'
            | '\u{200D}'
            | '\u{E0020}'..='\u{E007F}' => ' ',
            other => other,
        })
        .collect()
}

/// Text written all in capitals is read as ordinary words, not as a string of acronyms.
fn is_shouting(text: &str) -> bool {
    let letters: Vec<char> = text.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() > 12
        && letters.iter().filter(|c| c.is_uppercase()).count() * 10 >= letters.len() * 8
}

fn collapse_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        let attaches = word.starts_with([',', '.', '?', '!', ';', ':']);
        if !out.is_empty() && !attaches {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_no_rule_claims_are_read_one_by_one() {
        assert_eq!(normalize("0%0,"), "asilimia sifuri sifuri,");
    }

    #[test]
    fn digits_of_other_scripts_do_not_break_the_number_rules() {
        // Unicode digits are not ASCII: they pass through instead of being cut mid-character.
        assert_eq!(normalize("namba ٣٤٥٦٧٨٩٠١٢"), "namba ٣٤٥٦٧٨٩٠١٢");
    }
}
