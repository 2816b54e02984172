//! Hyphens between two things: a range ("hadi"), a score ("kwa").

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::nouns::cardinal_after;
use super::numbers::decimal;
use super::rules::{regex_cached, split_decimal, word_before, NUM};

/// "saa mbili asubuhi-saa kumi jioni" (two clock times already read) → "… asubuhi hadi saa kumi jioni".
pub(super) fn time_ranges(s: &str) -> String {
    re!(r"\b(alfajiri|asubuhi|mchana|jioni|usiku)\s?-\s?(saa)\b")
        .replace_all(s, "$1 hadi $2")
        .into_owned()
}

/// Words that make "2-1" a score.
fn about_sport(text: &str) -> bool {
    re!(r"(?i)\b(?:mabao|bao|magoli|goli|matokeo|ushindi|\w*shinda|\w*shindwa|\w*fungwa|\w*funga|sare|mechi|mchezo|fainali|ligi|timu|kipigo)\b")
        .is_match(text)
}

/// "2-1" in a text about a match → "mbili kwa moja".
pub(super) fn scores(s: &str) -> String {
    re!(r"(^|[\s(])([0-9]{1,2})\s?-\s?([0-9]{1,2})\b")
        .replace_all(s, |c: &Captures| {
            let whole = c.get(0).map_or(0..0, |m| m.range());
            let from = floor_char(s, whole.start.saturating_sub(120));
            let to = floor_char(s, (whole.end + 120).min(s.len()));
            if !about_sport(&s[from..to]) {
                return c[0].to_string();
            }
            let (a, b): (u64, u64) = (c[2].parse().unwrap_or(0), c[3].parse().unwrap_or(0));
            // "mabao 2-1": the first number counts the goals and agrees with them.
            let noun = word_before(&s[..c.get(2).map_or(0, |m| m.start())]);
            format!(
                "{}{} kwa {}",
                &c[1],
                cardinal_after(noun, a),
                decimal(b, "")
            )
        })
        .into_owned()
}

/// The nearest character boundary at or before `index`.
fn floor_char(s: &str, mut index: usize) -> usize {
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// "10-15" → "kumi hadi kumi na tano"; after a noun both ends agree with it ("watu 3-5" → "watatu hadi watano").
pub(super) fn ranges(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(&RE, &format!(r"(^|[\s(])({NUM})\s?-\s?({NUM})\b"))
        .replace_all(s, |c: &Captures| {
            let (a, f) = split_decimal(&c[2]);
            let (b, g) = split_decimal(&c[3]);
            let noun = word_before(&s[..c.get(2).map_or(0, |m| m.start())]);
            let read = |n: u64, fraction: &str| {
                if fraction.is_empty() {
                    cardinal_after(noun, n)
                } else {
                    decimal(n, fraction)
                }
            };
            format!("{}{} hadi {}", &c[1], read(a, f), read(b, g))
        })
        .into_owned()
}
