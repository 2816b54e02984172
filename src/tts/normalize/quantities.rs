//! Quantities: money in every currency our users write, percentages, temperatures and units.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::numbers::{cardinal, decimal};
use super::rules::{regex_cached, split_decimal, NUM};

/// Spoken name of a currency symbol or code.
fn currency_word(code: &str) -> &'static str {
    match code.trim_end_matches('.').to_ascii_lowercase().as_str() {
        "$" | "us$" | "usd" => "dola",
        "€" | "eur" => "yuro",
        "£" | "gbp" => "pauni",
        _ => "shilingi",
    }
}

/// A multiplier after a number: a letter ("5k", "1.5m", "2bn") or a scale word ("1.2 bilioni", "3 million").
const MULTIPLIER: &str = r"(?:\s?(?:k|m|bn|K|M|BN)|\s(?i:elfu|milioni|bilioni|trilioni|thousand|million|billion|trillion))\b";

/// The scale word of a multiplier.
fn scale_word(multiplier: &str) -> Option<&'static str> {
    Some(match multiplier.trim().to_lowercase().as_str() {
        "k" | "elfu" | "thousand" => "elfu",
        "m" | "milioni" | "million" => "milioni",
        "bn" | "b" | "bilioni" | "billion" => "bilioni",
        "trilioni" | "trillion" => "trilioni",
        _ => return None,
    })
}

/// An amount with an optional multiplier: "1.5m" → "milioni moja nukta tano".
fn amount_words(number: &str, multiplier: Option<&str>, minor_unit: bool) -> String {
    let scale = multiplier.and_then(scale_word);
    let (integer, fraction) = split_decimal(number);
    match (scale, minor_unit && fraction.len() == 2) {
        (Some(scale), _) => format!("{scale} {}", decimal(integer, fraction)),
        (None, true) if fraction != "00" => {
            let cents = fraction.parse::<u64>().unwrap_or(0);
            format!("{} na senti {}", cardinal(integer), cardinal(cents))
        }
        (None, true) => cardinal(integer),
        (None, false) => decimal(integer, fraction),
    }
}

const CURRENCY: &str = r"(?:TShs|Tshs|TSh|Tsh|TSH|tsh|Kshs|KShs|KSh|Ksh|KSH|ksh)\.?|TZS|KES|USh|Ush|UGX|Shs\.?|shs\.?|Sh\.?|sh\.|US\$|\$|USD|€|EUR|£|GBP";

/// TSh 5,000 · KSh200 · $10.50 · 5,000/= · 500/- · 100 USD · TSh 1,000-2,000 · TSh 1.5m.
pub(super) fn money(s: &str) -> String {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    static SUFFIX: OnceLock<Regex> = OnceLock::new();
    let prefix = format!(
        r"(?:^|\b|\B)({CURRENCY})\s?({NUM})({MULTIPLIER})?(?:\s?-\s?({NUM})({MULTIPLIER})?)?"
    );
    // "TSh bilioni 1.2": the scale word already comes first.
    let s = re!(
        r"\b(TSh|Tsh|TZS|KSh|Ksh|KES|USh|UGX|Sh\.?|USD|\$)\s?(elfu|milioni|bilioni|trilioni)\s"
    )
    .replace_all(s, |c: &Captures| {
        format!("{} {} ", currency_word(&c[1]), &c[2])
    });
    let s = regex_cached(&PREFIX, &prefix).replace_all(&s, |c: &Captures| {
        let word = currency_word(&c[1]);
        let first = amount_words(&c[2], c.get(3).map(|m| m.as_str()), true);
        match c.get(4) {
            Some(second) => {
                let second = amount_words(second.as_str(), c.get(5).map(|m| m.as_str()), true);
                format!("{word} {first} hadi {second}")
            }
            None => format!("{word} {first}"),
        }
    });
    let suffix = format!(
        r"\b({NUM})\s?(?:(/=|/-)|(TSh|Tsh|TZS|KSh|Ksh|KES|UGX|USD|EUR|GBP)\b|(?i:(shilingi|shillings?|dollars?|dola))\b)"
    );
    regex_cached(&SUFFIX, &suffix)
        .replace_all(&s, |c: &Captures| {
            let word = match (c.get(3), c.get(4)) {
                (Some(code), _) => currency_word(code.as_str()),
                (None, Some(w)) if w.as_str().to_lowercase().starts_with('d') => "dola",
                _ => "shilingi",
            };
            format!("{word} {}", amount_words(&c[1], None, true))
        })
        .into_owned()
}

/// "2k" → "elfu mbili", "1.2 bilioni" → "bilioni moja nukta mbili": the scale word goes first.
pub(super) fn scales(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let pattern = format!(
        r"(^|[^\p{{L}}0-9.,])({NUM})(\s?(?:k|K|bn|BN)|\s(?i:milioni|bilioni|trilioni|million|billion|trillion))\b"
    );
    regex_cached(&RE, &pattern)
        .replace_all(s, |c: &Captures| {
            format!("{}{}", &c[1], amount_words(&c[2], Some(&c[3]), false))
        })
        .into_owned()
}

/// "15%" → "asilimia kumi na tano"; "10-15%" → "asilimia kumi hadi kumi na tano".
pub(super) fn percentages(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let pattern = format!(r"(-?)({NUM})(?:\s?-\s?({NUM}))?\s?%");
    regex_cached(&RE, &pattern)
        .replace_all(s, |c: &Captures| {
            let sign = if c[1].is_empty() { "" } else { "hasi " };
            let (i, f) = split_decimal(&c[2]);
            match c.get(3) {
                Some(to) => {
                    let (j, g) = split_decimal(to.as_str());
                    format!("asilimia {sign}{} hadi {}", decimal(i, f), decimal(j, g))
                }
                None => format!("asilimia {sign}{}", decimal(i, f)),
            }
        })
        .into_owned()
}

/// "25°C" → "nyuzi joto ishirini na tano".
pub(super) fn temperatures(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    static BARE: OnceLock<Regex> = OnceLock::new();
    let s = regex_cached(&RE, &format!(r"(-?)({NUM})\s?°\s?C\b")).replace_all(s, |c: &Captures| {
        let (i, f) = split_decimal(&c[2]);
        let sign = if c[1].is_empty() { "" } else { "hasi " };
        format!("nyuzi joto {sign}{}", decimal(i, f))
    });
    // Degrees without a scale: an angle, or a temperature where the context says so.
    regex_cached(&BARE, &format!(r"(-?)({NUM})\s?°"))
        .replace_all(&s, |c: &Captures| {
            let (i, f) = split_decimal(&c[2]);
            let sign = if c[1].is_empty() { "" } else { "hasi " };
            format!("nyuzi {sign}{}", decimal(i, f))
        })
        .into_owned()
}

/// Units: (as written, as said before the number, as said after it).
const UNITS: &[(&str, &str, &str)] = &[
    ("km/h", "kilomita", " kwa saa"),
    ("km²", "kilomita za mraba", ""),
    ("m²", "mita za mraba", ""),
    ("mmol/L", "milimoli", " kwa lita"),
    ("mmol/l", "milimoli", " kwa lita"),
    ("Mbps", "megabiti", " kwa sekunde"),
    ("kWh", "kilowati saa", ""),
    ("km", "kilomita", ""),
    ("kg", "kilo", ""),
    ("cm", "sentimita", ""),
    ("mm", "milimita", ""),
    ("ml", "mililita", ""),
    ("mg", "miligramu", ""),
    ("GB", "gigabaiti", ""),
    ("MB", "megabaiti", ""),
    ("KB", "kilobaiti", ""),
    ("TB", "terabaiti", ""),
    ("m", "mita", ""),
    ("g", "gramu", ""),
    ("l", "lita", ""),
    ("L", "lita", ""),
];

/// Units written after a number go before it, as Swahili says them: "5 km" → "kilomita 5", "50 km/h" →
/// "kilomita 50 kwa saa", "5-10 kg" → "kilo 5-10" (the numbers are read by later rules); "km 45" is already in
/// that order.
pub(super) fn units(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    static BEFORE: OnceLock<Regex> = OnceLock::new();
    let names: Vec<String> = UNITS.iter().map(|(u, _, _)| regex::escape(u)).collect();
    let pattern = format!(
        r"\b({NUM}(?:\s?-\s?{NUM})?)\s?({})(?:\b|$)",
        names.join("|")
    );
    let s = regex_cached(&RE, &pattern).replace_all(s, |c: &Captures| {
        let (_, before, after) = UNITS
            .iter()
            .find(|(u, _, _)| *u == &c[2])
            .copied()
            .unwrap_or(("", "", ""));
        format!("{before} {}{after}", &c[1])
    });
    regex_cached(&BEFORE, &format!(r"\b(km²|km|kg)\s({NUM})\b"))
        .replace_all(&s, |c: &Captures| {
            let unit = match &c[1] {
                "km" => "kilomita",
                "kg" => "kilo",
                _ => "kilomita za mraba",
            };
            format!("{unit} {}", &c[2])
        })
        .into_owned()
}
