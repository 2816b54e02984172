//! Numbers as Swahili callers say and write them: the one parser every slot uses.
//!
//! - Words: `elfu mbili` 2,000, `elfu kumi na mbili` 12,000, `laki moja na nusu` 150,000, `elfu mbili mia tano`
//!   2,500, `milioni moja na laki mbili` 1,200,000.
//! - Digits with separators and shorthand: `5000`, `5,000`, `5.000`, `5 000`, `TSh 5,000/=`, `2k`, `2.5k`, `1.5m`,
//!   `elfu 5` (5,000).
//! - Slang for amounts (Sheng and Tanzanian street words): `thao`, `ngiri`, `buku`, `k` = 1,000, `jero` = 500,
//!   `soo` = 100, `chwani` = 50, `mbao` = 20, each counting like `elfu`: `thao mbili` 2,000, `buku tano` 5,000,
//!   `soo tatu` 300; `doo`, `chapaa`, `mkwanja`, `ganji`, `hela`, `mulla` mean money and carry no amount.
//! - Digits one by one, for phone and account numbers: `sifuri saba moja …`, `0 7 1 2 …`, `0712 345 678`.

use super::words::tokens;

/// A Tanzanian or Kenyan mobile number as written.
pub const PHONE: &str = r"(?:\+?(?:255|254)[\s-]?|\b0)([167]\d{2})[\s-]?(\d{3})[\s-]?(\d{3})\b";

/// Digit words (as said one by one).
const DIGITS: [(&str, char); 14] = [
    ("sifuri", '0'),
    ("sufuri", '0'),
    ("ziro", '0'),
    ("zero", '0'),
    ("moja", '1'),
    ("mbili", '2'),
    ("tatu", '3'),
    ("nne", '4'),
    ("tano", '5'),
    ("sita", '6'),
    ("saba", '7'),
    ("nane", '8'),
    ("tisa", '9'),
    ("mmoja", '1'),
];

use crate::tts::normalize::numbers::{TENS, UNITS};

/// Words that count like `elfu`, with their value.
fn scale(word: &str) -> Option<u64> {
    Some(match word {
        "elfu" | "elf" | "elfy" | "thao" | "thau" | "ngiri" | "buku" | "k" | "thousand" => 1_000,
        "laki" => 100_000,
        "milioni" | "millioni" | "m" | "million" | "mil" => 1_000_000,
        "bilioni" | "billion" => 1_000_000_000,
        "jero" => 500,
        "soo" => 100,
        "chwani" | "chuani" => 50,
        "mbao" => 20,
        _ => return None,
    })
}

/// Words after which a number counts something other than money.
const COUNTERS: [&str; 22] = [
    "saa", "mara", "siku", "wiki", "mwezi", "miezi", "miaka", "mwaka", "tarehe", "watu", "mtu",
    "watoto", "dakika", "namba", "kadi", "akaunti", "vitu", "ya", "la", "wa", "pin", "pini",
];

fn unit(word: &str) -> Option<u64> {
    UNITS[1..]
        .iter()
        .position(|u| *u == word)
        .map(|i| i as u64 + 1)
}

fn tens(word: &str) -> Option<u64> {
    TENS[1..]
        .iter()
        .position(|t| *t == word)
        .map(|i| (i as u64 + 1) * 10)
}

/// A token of plain digits (`5000`, `5,000`, `5.000`, `2.5`) as a number.
fn digits(word: &str) -> Option<f64> {
    if !word.chars().next()?.is_ascii_digit() {
        return None;
    }
    let grouped = re!(r"^\d{1,3}(?:[,.]\d{3})+$").is_match(word);
    if grouped {
        return word.replace([',', '.'], "").parse().ok();
    }
    word.replace(',', ".").parse().ok()
}

/// One number read from the words at `at`: its value, where it ends, and whether it is weak (a bare count below
/// ten or a lone tens word, which may count something else).
struct Read {
    value: u64,
    next: usize,
    weak: bool,
}

/// `kumi na mbili`, `tano`, `ishirini`, `15`: below 1,000 (words) or any digits.
fn small(words: &[String], at: usize) -> Option<(f64, usize)> {
    let word = words.get(at)?;
    if let Some(n) = digits(word) {
        return Some((n, at + 1));
    }
    if word == "mia" {
        let (hundreds, mut next) = match words.get(at + 1).and_then(|w| unit(w)) {
            Some(u) => (u * 100, at + 2),
            None => (100, at + 1),
        };
        let mut value = hundreds;
        if words.get(next).map(String::as_str) == Some("na") {
            if let Some((rest, after)) = below_hundred(words, next + 1) {
                value += rest;
                next = after;
            }
        } else if let Some((rest, after)) = below_hundred(words, next) {
            value += rest;
            next = after;
        }
        return Some((value as f64, next));
    }
    below_hundred(words, at).map(|(v, n)| (v as f64, n))
}

fn below_hundred(words: &[String], at: usize) -> Option<(u64, usize)> {
    let word = words.get(at)?;
    if let Some(t) = tens(word) {
        if words.get(at + 1).map(String::as_str) == Some("na") {
            if let Some(u) = words.get(at + 2).and_then(|w| unit(w)) {
                return Some((t + u, at + 3));
            }
        }
        return Some((t, at + 1));
    }
    unit(word).map(|u| (u, at + 1))
}

fn starts_number(word: &str) -> bool {
    scale(word).is_some()
        || word == "mia"
        || tens(word).is_some()
        || unit(word).is_some()
        || digits(word).is_some()
}

/// Read one number starting at `at` (scale groups joined by `na`, a trailing `na nusu` adding half the scale).
fn read(words: &[String], at: usize) -> Option<Read> {
    let (mut total, mut next, mut groups, mut scaled) = (0f64, at, 0, false);
    loop {
        let word = words.get(next)?;
        let (value, after, group_scale) = if let Some(s) = scale(word) {
            // `elfu mbili`, `thao`, `elfu 5`: the count (below 1,000) follows the scale word.
            let (count, after) = small(words, next + 1)
                .filter(|(count, _)| *count > 0.0 && *count < 1000.0)
                .unwrap_or((1.0, next + 1));
            (s as f64 * count, after, s)
        } else {
            let (n, after) = small(words, next)?;
            // `5 elfu`, `2k` written apart, `1.5 m`.
            match words.get(after).and_then(|w| scale(w)) {
                Some(s) => (n * s as f64, after + 1, s),
                None => (n, after, 1),
            }
        };
        scaled |= group_scale > 1;
        total += value;
        groups += 1;
        next = after;
        match words.get(next).map(String::as_str) {
            Some("na") if words.get(next + 1).is_some_and(|w| w == "nusu") && group_scale > 1 => {
                total += group_scale as f64 / 2.0;
                next += 2;
                break;
            }
            Some("na")
                if words.get(next + 1).is_some_and(|w| starts_number(w)) && total >= 100.0 =>
            {
                next += 1
            }
            // `elfu mbili mia tano`: a smaller group may follow a scale group directly.
            Some(w)
                if group_scale > 1 && (w == "mia" || scale(w).is_some_and(|s| s < group_scale)) => {
            }
            _ => break,
        }
        if groups > 6 {
            break;
        }
    }
    let value = total.round() as u64;
    let weak = !scaled && groups == 1 && value < 100 && next - at == 1;
    (value > 0).then_some(Read { value, next, weak })
}

/// Split `2k`, `1.5m`, `5000/=`, `tsh5000` into words the reader knows; `grouped` gets the numbers written with
/// thousands separators.
fn money_tokens(text: &str, grouped: &mut Vec<String>) -> Vec<String> {
    let spaced = re!(r"(?i)(\d)(k|m|mil)\b").replace_all(text, "$1 $2");
    let spaced = re!(r"(?i)\b(tshs?|kshs?|shs?)\.?(\d)").replace_all(&spaced, "$1 $2");
    // Thousands separators (`1,000,000`, `1.000.000`, `1 000 000`), joined group by group; long numbers written
    // with them are amounts, however many digits they have.
    let mut spaced = spaced.into_owned();
    for found in re!(r"\d{1,3}(?:[,. ]\d{3})+\b").find_iter(&spaced) {
        let digits: String = found
            .as_str()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        grouped.push(digits);
    }
    for groups in [
        re!(r"(\d),(\d{3})\b"),
        re!(r"(\d)[.](\d{3})\b"),
        re!(r"(\d) (\d{3})\b"),
    ] {
        while groups.is_match(&spaced) {
            spaced = groups.replace(&spaced, "$1$2").into_owned();
        }
    }
    // Decimal points survive tokenising as a joined token: `1.5` → `1.5`.
    let joined = re!(r"(\d)\.(\d)").replace_all(&spaced, "${1}DOT$2");
    tokens(&joined)
        .into_iter()
        .map(|t| t.replace("dot", "."))
        .collect()
}

/// Whether the words from `at` are digits said one by one (four or more), as for a phone or account.
fn digit_run(words: &[String], at: usize) -> usize {
    words[at..]
        .iter()
        .take_while(|w| DIGITS.iter().any(|(d, _)| d == *w))
        .count()
}

/// Every amount of money a turn names, in order, with whether each is weak (a bare small count).
pub fn amounts(text: &str) -> Vec<(u64, bool)> {
    let without_phones = re!(PHONE).replace_all(text, " ");
    let mut grouped = Vec::new();
    let words = money_tokens(&without_phones, &mut grouped);
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let run = digit_run(&words, at);
        if run >= 4 {
            at += run;
            continue;
        }
        let word = &words[at];
        // Long digit strings are phones, accounts or codes, not amounts.
        if word.chars().all(|c| c.is_ascii_digit()) && word.len() >= 8 && !grouped.contains(word) {
            at += 1;
            continue;
        }
        let after_counter = at > 0 && COUNTERS.contains(&words[at - 1].as_str());
        match read(&words, at) {
            Some(number) if !(after_counter && number.weak) => {
                found.push((number.value, number.weak));
                at = number.next.max(at + 1);
            }
            Some(number) => at = number.next.max(at + 1),
            None => at += 1,
        }
    }
    found
}

/// What a turn says of an amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Amount {
    /// No amount.
    None,
    /// One amount.
    One(u64),
    /// Several different amounts: it could be read more than one way.
    Ambiguous(Vec<u64>),
}

/// The amount a turn names: strong readings win over bare small counts; two different strong readings are
/// ambiguous.
pub fn amount(text: &str) -> Amount {
    let all = amounts(text);
    let strong: Vec<u64> = all
        .iter()
        .filter(|(_, weak)| !weak)
        .map(|(v, _)| *v)
        .collect();
    let mut values = if strong.is_empty() {
        all.iter().map(|(v, _)| *v).collect()
    } else {
        strong
    };
    values.dedup();
    let mut distinct = values.clone();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct.len() {
        0 => Amount::None,
        1 => Amount::One(distinct[0]),
        _ => Amount::Ambiguous(values),
    }
}

/// Digit strings in a turn: written digits (spaces and dashes between groups allowed) and digits said one by one;
/// a `+` before written digits is kept.
pub fn digit_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for found in re!(r"\+?\d(?:[\s-]?\d)*").find_iter(text) {
        out.push(
            found
                .as_str()
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '+')
                .collect(),
        );
    }
    let words = tokens(text);
    let mut at = 0;
    while at < words.len() {
        let run = digit_run(&words, at);
        if run >= 4 {
            // "plus" or "jumlisha" before the digits is the `+` of an international number.
            let plus = at > 0 && matches!(words[at - 1].as_str(), "plus" | "jumlisha" | "jumlishi");
            let said: String = plus
                .then_some('+')
                .into_iter()
                .chain(
                    words[at..at + run]
                        .iter()
                        .filter_map(|w| DIGITS.iter().find(|(d, _)| d == w).map(|(_, c)| *c)),
                )
                .collect();
            out.push(said);
            at += run;
            continue;
        }
        at += 1;
    }
    out
}

/// An amount in Swahili words, as a confirmation reads it back and as callers say it, with `laki` for hundreds
/// of thousands: 2,000 → "elfu mbili", 150,000 → "laki moja na elfu hamsini", 2,500,000 → "milioni mbili na laki
/// tano".
pub fn in_words(n: u64) -> String {
    let cardinal = crate::tts::normalize::numbers::cardinal;
    if n >= 1_000_000_000 {
        let (billions, rest) = (n / 1_000_000_000, n % 1_000_000_000);
        let head = format!("bilioni {}", in_words(billions));
        return if rest == 0 {
            head
        } else {
            format!("{head} na {}", in_words(rest))
        };
    }
    let (millions, rest) = (n / 1_000_000, n % 1_000_000);
    let (lakhs, rest) = (rest / 100_000, rest % 100_000);
    let mut parts = Vec::new();
    if millions > 0 {
        parts.push(format!("milioni {}", cardinal(millions)));
    }
    if lakhs > 0 {
        parts.push(format!("laki {}", cardinal(lakhs)));
    }
    if rest > 0 || parts.is_empty() {
        parts.push(cardinal(rest));
    }
    parts.join(" na ")
}

/// Digits read one by one in words, in groups of three or four: "0712345678" → "sifuri saba moja mbili, tatu nne
/// tano, sita saba nane".
pub fn digits_in_words(digits: &str) -> String {
    let said: Vec<&str> = digits
        .chars()
        .filter_map(|c| c.to_digit(10))
        .map(|d| {
            [
                "sifuri", "moja", "mbili", "tatu", "nne", "tano", "sita", "saba", "nane", "tisa",
            ][d as usize]
        })
        .collect();
    let first = if said.len() % 3 == 1 { 4 } else { 3 };
    let mut groups = vec![said[..first.min(said.len())].join(" ")];
    for chunk in said.get(first..).unwrap_or_default().chunks(3) {
        groups.push(chunk.join(" "));
    }
    let plus = if digits.starts_with('+') {
        "jumlisha "
    } else {
        ""
    };
    format!("{plus}{}", groups.join(", "))
}
