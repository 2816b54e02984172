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

/// An amount with an optional "k"/"m"/"bn" multiplier: "1.5m" → "milioni moja nukta tano".
fn amount_words(number: &str, multiplier: Option<&str>, minor_unit: bool) -> String {
    let scale = match multiplier.map(str::to_ascii_lowercase).as_deref() {
        Some("k") => Some("elfu"),
        Some("m") => Some("milioni"),
        Some("bn") | Some("b") => Some("bilioni"),
        _ => None,
    };
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

const CURRENCY: &str =
    r"TSh|Tsh|TSH|tsh|TZS|KSh|Ksh|KSH|ksh|KES|USh|Ush|UGX|Shs\.?|Sh\.?|US\$|\$|USD|€|EUR|£|GBP";

/// TSh 5,000 · KSh200 · $10.50 · 5,000/= · 500/- · 100 USD · TSh 1,000-2,000 · TSh 1.5m.
pub(super) fn money(s: &str) -> String {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    static SUFFIX: OnceLock<Regex> = OnceLock::new();
    let prefix = format!(
        r"(?:^|\b|\B)({CURRENCY})\s?({NUM})(?:\s?(k|m|bn|K|M|BN)\b)?(?:\s?-\s?({NUM})(?:\s?(k|m|bn|K|M|BN)\b)?)?"
    );
    let s = regex_cached(&PREFIX, &prefix).replace_all(s, |c: &Captures| {
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
    regex_cached(&RE, &format!(r"(-?)({NUM})\s?°\s?C\b"))
        .replace_all(s, |c: &Captures| {
            let (i, f) = split_decimal(&c[2]);
            let sign = if c[1].is_empty() { "" } else { "hasi " };
            format!("nyuzi joto {sign}{}", decimal(i, f))
        })
        .into_owned()
}

/// Units written after a number go before it, as Swahili says them: "5 km" → "kilomita 5",
/// "5-10 kg" → "kilo 5-10" (the numbers are read by later rules).
pub(super) fn units(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(
        &RE,
        &format!(r"\b({NUM}(?:\s?-\s?{NUM})?)\s?(km/h|km|kg|cm|mm|ml|mg|kWh)\b"),
    )
    .replace_all(s, |c: &Captures| {
        let unit = match &c[2] {
            "km" => "kilomita",
            "kg" => "kilo",
            "cm" => "sentimita",
            "mm" => "milimita",
            "ml" => "mililita",
            "mg" => "miligramu",
            "kWh" => "kilowati saa",
            _ => "kilomita kwa saa",
        };
        format!("{unit} {}", &c[1])
    })
    .into_owned()
}
