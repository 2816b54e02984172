//! The rewrite rules of the normaliser, in the order they run.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::nouns::cardinal_after;
use super::numbers::{cardinal, decimal, digit_groups, natural_groups, ordinal, parse_grouped};
use super::{calendar, classify, letters, quantities, ranges, web};
use crate::tts::lexicon::Lexicon;

/// A number as written: comma or dot thousands groups or plain digits, with an optional decimal part.
pub(super) const NUM: &str =
    r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,3}(?:\.[0-9]{3}){2,}|[0-9]+)(?:\.[0-9]+)?";

/// A pattern compiled on first use into `cell`.
pub(super) fn regex_cached<'a>(cell: &'a OnceLock<Regex>, pattern: &str) -> &'a Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid built-in pattern"))
}

/// Split "1,500.75" into 1500 and "75"; thousands separators are dropped.
pub(super) fn split_decimal(number: &str) -> (u64, &str) {
    let dots = number.matches('.').count();
    match number.rfind('.') {
        Some(pos) if dots == 1 => (
            parse_grouped(&number[..pos]).unwrap_or(0),
            &number[pos + 1..],
        ),
        _ => (parse_grouped(number).unwrap_or(0), ""),
    }
}

/// The rules after lexicon lookup, in order.
pub(super) const RULES: &[fn(&str) -> String] = &[
    web::addresses,
    classify::ussd_codes,
    web::hashtags,
    classify::codes,
    telephones,
    card_numbers,
    space_grouped_numbers,
    classify::named_digit_strings,
    calendar::day_and_month_ranges,
    calendar::date_ranges,
    calendar::dates,
    calendar::clock_times,
    ranges::time_ranges,
    ranges::scores,
    times,
    quantities::money,
    quantities::scales,
    quantities::percentages,
    quantities::temperatures,
    quantities::units,
    fractions,
    ranges::ranges,
    ordinals,
    long_digit_strings,
    numbers,
    abbreviations,
    symbols,
    letters::acronyms,
];

/// Replace words the lexicon knows (whole words, hyphenated brands included).
pub(super) fn apply_lexicon(s: &str, lexicon: &Lexicon) -> String {
    if lexicon.is_empty() {
        return s.to_string();
    }
    re!(r"\p{L}[\p{L}\p{N}]*(?:-\p{L}[\p{L}\p{N}]*)*")
        .replace_all(s, |c: &Captures| {
            lexicon.spelling(&c[0]).unwrap_or(&c[0]).to_string()
        })
        .into_owned()
}

/// "1 500 000" → "1500000" (a space-grouped number is one number).
fn space_grouped_numbers(s: &str) -> String {
    re!(r"(^|[^[0-9]+])([0-9]{1,3}(?: [0-9]{3})+)\b")
        .replace_all(s, |c: &Captures| {
            format!("{}{}", &c[1], c[2].replace(' ', ""))
        })
        .into_owned()
}

/// "+255 712 345 678" and "0712 345 678" read digit by digit in their groups.
fn telephones(s: &str) -> String {
    let international = re!(r"\+([0-9][[0-9] -]{7,16}[0-9])\b").replace_all(s, |c: &Captures| {
        let groups: Vec<&str> = c[1].split([' ', '-']).filter(|g| !g.is_empty()).collect();
        let spoken = if groups.len() > 1 {
            digit_groups(&groups)
        } else {
            let (country, rest) = c[1].split_at(country_code_len(&c[1]));
            let mut groups = vec![country];
            groups.extend(natural_groups(rest));
            digit_groups(&groups)
        };
        format!("jumlisha {spoken}")
    });
    re!(r"\b(0[0-9]{2,3})([ -]?)([0-9]{3})([ -]?)([0-9]{3,4})\b")
        .replace_all(&international, |c: &Captures| {
            // Written without spaces, only ten digits are a phone number: others are meter or account numbers.
            let digits = c[1].len() + c[3].len() + c[5].len();
            if c[2].is_empty() && c[4].is_empty() && digits != 10 {
                return c[0].to_string();
            }
            digit_groups(&[&c[1], &c[3], &c[5]])
        })
        .into_owned()
}

/// Calling codes of the region and the commonest others; anything else is read in threes.
fn country_code_len(number: &str) -> usize {
    const CODES: &[&str] = &[
        "255", "254", "256", "250", "257", "243", "211", "251", "252", "27", "44", "1",
    ];
    CODES
        .iter()
        .find(|c| number.starts_with(*c))
        .map_or(3, |c| c.len())
        .min(number.len())
}

/// "1234 5678 9012 3456" (cards, account numbers written in fours).
fn card_numbers(s: &str) -> String {
    re!(r"\b[0-9]{4}(?: [0-9]{4}){2,4}\b")
        .replace_all(s, |c: &Captures| {
            digit_groups(&c[0].split(' ').collect::<Vec<_>>())
        })
        .into_owned()
}

/// "2 x 3": *mara* in a dose ("kidonge 1 x 3" is one tablet three times), *kwa* otherwise (a size).
fn times(s: &str) -> String {
    re!(r"\b([0-9]+)\s?[x×X]\s?([0-9]+)\b")
        .replace_all(s, |c: &Captures| {
            let start = c.get(0).map_or(0, |m| m.start());
            let from = (0..=start.saturating_sub(60)).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
            let dose = re!(r"(?i)\b(?:kidonge|vidonge|dozi|kijiko|vijiko|matone|tone|sindano|kunywa|meza|dawa|mg|ml)\b")
                .is_match(&s[from..start]);
            let word = if dose { "mara" } else { "kwa" };
            format!("{} {word} {}", &c[1], &c[2])
        })
        .into_owned()
}

/// "1/2" → "nusu", "3/4" → "robo tatu", "2/3" → "theluthi mbili", others "tano kwa nane".
fn fractions(s: &str) -> String {
    let s = re!(r"(?:([0-9]+)\s?)?([½¼¾⅓⅔])").replace_all(s, |c: &Captures| {
        let part = match &c[2] {
            "½" => "nusu",
            "¼" => "robo",
            "¾" => "robo tatu",
            "⅓" => "theluthi moja",
            _ => "theluthi mbili",
        };
        match c.get(1) {
            Some(whole) => format!("{} na {part}", whole.as_str()),
            None => part.to_string(),
        }
    });
    re!(r"\b([0-9]{1,3})/([0-9]{1,3})\b")
        .replace_all(&s, |c: &Captures| {
            let (n, d): (u64, u64) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            match (n, d) {
                (1, 2) => "nusu".to_string(),
                (1, 4) => "robo".to_string(),
                (n, 4) => format!("robo {}", cardinal(n)),
                (n, 3) => format!("theluthi {}", cardinal(n)),
                (n, d) => format!("{} kwa {}", cardinal(n), cardinal(d)),
            }
        })
        .into_owned()
}

/// Nouns of measure: after them a concord introduces an amount, not a rank ("kiwango cha 5" is five).
const MEASURES: &[&str] = &[
    "kiwango", "ukubwa", "urefu", "uzito", "kiasi", "bei", "thamani", "joto", "kasi", "umri",
    "alama", "wastani", "jumla", "kimo", "upana", "kina", "idadi",
];

/// "wa 1" → "wa kwanza", "ya 3" → "ya tatu", "2nd" → "wa pili"; a decimal after a concord ("wa 5.8") and a whole
/// number after a noun of measure ("kiasi cha 1") are amounts.
fn ordinals(s: &str) -> String {
    let s = re!(
        r"\b(wa|ya|la|cha|vya|za|pa|mwa|Wa|Ya|La|Cha|Vya|Za)\s+([0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,6})(\.[0-9]+)?\b(?:\s*(?:st|nd|rd|th)\b)?"
    )
    .replace_all(s, |c: &Captures| {
        let n = parse_grouped(&c[2]).unwrap_or(0);
        let before = word_before(&s[..c.get(0).map_or(0, |m| m.start())]).to_lowercase();
        let reading = match c.get(3) {
            Some(fraction) => decimal(n, &fraction.as_str()[1..]),
            None if MEASURES.contains(&before.as_str()) => cardinal(n),
            None => ordinal(n),
        };
        format!("{} {reading}", &c[1])
    });
    re!(r"\b([0-9]{1,6})(?:st|nd|rd|th)\b")
        .replace_all(&s, |c: &Captures| {
            format!("wa {}", ordinal(c[1].parse().unwrap_or(0)))
        })
        .into_owned()
}

/// The word just before a position (letters and apostrophes only), or "" when there is none.
pub(super) fn word_before(before: &str) -> &str {
    let trimmed = before.trim_end();
    if trimmed.len() == before.len() && !before.is_empty() {
        return "";
    }
    let start = trimmed
        .rfind(|c: char| !(c.is_alphabetic() || c == '\''))
        .map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        });
    &trimmed[start..]
}

/// Account numbers and codes: digit strings with a leading zero or of ten or more digits, read in groups.
fn long_digit_strings(s: &str) -> String {
    re!(r"(^|[^[0-9],.])(0[0-9]+|[1-9][0-9]{9,})\b")
        .replace_all(s, |c: &Captures| {
            format!("{}{}", &c[1], digit_groups(&natural_groups(&c[2])))
        })
        .into_owned()
}

/// Plain numbers, decimals and negatives.
fn numbers(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(&RE, &format!(r"(^|[^\p{{L}}[0-9]])(-?)({NUM})"))
        .replace_all(s, |c: &Captures| {
            let sign = if c[2].is_empty() { "" } else { "hasi " };
            let (integer, fraction) = split_decimal(&c[3]);
            let digits_only: String = c[3].chars().filter(char::is_ascii_digit).collect();
            if parse_grouped(&c[3]).is_none() {
                return format!(
                    "{}{sign}{}",
                    &c[1],
                    digit_groups(&natural_groups(&digits_only))
                );
            }
            if sign.is_empty() && fraction.is_empty() {
                let noun = word_before(&s[..c.get(2).map_or(0, |m| m.start())]);
                return format!("{}{}", &c[1], cardinal_after(noun, integer));
            }
            format!("{}{sign}{}", &c[1], decimal(integer, fraction))
        })
        .into_owned()
}

/// Abbreviations of titles and common phrases, and what they stand for.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("k.m.", "kwa mfano"),
    ("K.m.", "Kwa mfano"),
    ("n.k.", "na kadhalika"),
    ("S.L.P.", "Sanduku la Posta"),
    ("Dkt.", "Daktari"),
    ("Dk.", "Daktari"),
    ("Bw.", "Bwana"),
    ("Bi.", "Bibi"),
    ("Mhe.", "Mheshimiwa"),
    ("Mh.", "Mheshimiwa"),
    ("Prof.", "Profesa"),
    ("Mt.", "Mtakatifu"),
    ("Na.", "Namba"),
    ("No.", "Namba"),
];

/// Expand abbreviations (at a word start). One that ends the text also ends its sentence: the stop is kept.
fn abbreviations(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        let alternatives: Vec<String> = ABBREVIATIONS
            .iter()
            .map(|(a, _)| regex::escape(a))
            .collect();
        Regex::new(&format!(r"(^|[\s(])({})(\s*$)?", alternatives.join("|")))
            .expect("escaped pattern")
    });
    re.replace_all(s, |c: &Captures| {
        let full = ABBREVIATIONS
            .iter()
            .find(|(a, _)| *a == &c[2])
            .map_or(&c[2], |(_, f)| f);
        let stop = if c.get(3).is_some() { "." } else { "" };
        format!("{}{full}{stop}", &c[1])
    })
    .into_owned()
}

/// Symbols that stand for words.
fn symbols(s: &str) -> String {
    re!(r"\s?([&+=@%#/])\s?")
        .replace_all(s, |c: &Captures| {
            let word = match &c[1] {
                "&" => "na",
                "+" => "jumlisha",
                "=" => "ni sawa na",
                "@" => "et",
                "%" => "asilimia",
                "#" => "namba",
                _ => "au",
            };
            format!(" {word} ")
        })
        .into_owned()
}
