//! The rewrite rules of the normaliser, in the order they run.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::numbers::{cardinal, decimal, digit_groups, natural_groups, ordinal, parse_grouped};
use crate::tts::lexicon::Lexicon;

/// A compiled pattern, built once.
macro_rules! re {
    ($pattern:expr) => {{
        static RE: OnceLock<Regex> = OnceLock::new();
        RE.get_or_init(|| Regex::new($pattern).expect("valid built-in pattern"))
    }};
}

/// A number as written: comma or dot thousands groups or plain digits, with an optional decimal part.
const NUM: &str = r"(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:\.\d{3}){2,}|\d+)(?:\.\d+)?";

/// The rules after lexicon lookup, in order.
pub(super) const RULES: &[fn(&str) -> String] = &[
    telephones,
    card_numbers,
    space_grouped_numbers,
    dates,
    clock_times,
    money,
    percentages,
    temperatures,
    units,
    fractions,
    ranges,
    ordinals,
    long_digit_strings,
    numbers,
    abbreviations,
    symbols,
    acronyms,
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
    re!(r"(^|[^\d+])(\d{1,3}(?: \d{3})+)\b")
        .replace_all(s, |c: &Captures| {
            format!("{}{}", &c[1], c[2].replace(' ', ""))
        })
        .into_owned()
}

/// "+255 712 345 678" and "0712 345 678" read digit by digit in their groups.
fn telephones(s: &str) -> String {
    let international = re!(r"\+(\d[\d -]{7,16}\d)\b").replace_all(s, |c: &Captures| {
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
    re!(r"\b(0\d{2,3})[ -]?(\d{3})[ -]?(\d{3,4})\b")
        .replace_all(&international, |c: &Captures| {
            digit_groups(&[&c[1], &c[2], &c[3]])
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
    re!(r"\b\d{4}(?: \d{4}){2,4}\b")
        .replace_all(s, |c: &Captures| {
            digit_groups(&c[0].split(' ').collect::<Vec<_>>())
        })
        .into_owned()
}

const MONTHS: [&str; 12] = [
    "Januari", "Februari", "Machi", "Aprili", "Mei", "Juni", "Julai", "Agosti", "Septemba",
    "Oktoba", "Novemba", "Desemba",
];

/// A month name or abbreviation, Swahili or English, to its number.
fn month_number(name: &str) -> Option<usize> {
    let lower = name.trim_end_matches('.').to_lowercase();
    const STEMS: [&[&str]; 12] = [
        &["januari", "january", "jan"],
        &["februari", "february", "feb"],
        &["machi", "march", "mar"],
        &["aprili", "april", "apr"],
        &["mei", "may"],
        &["juni", "june", "jun"],
        &["julai", "july", "jul"],
        &["agosti", "august", "aug", "ago"],
        &["septemba", "september", "sep", "sept"],
        &["oktoba", "october", "okt", "oct"],
        &["novemba", "november", "nov"],
        &["desemba", "december", "des", "dec"],
    ];
    STEMS
        .iter()
        .position(|names| names.contains(&lower.as_str()))
        .map(|i| i + 1)
}

const MONTH_PATTERN: &str = r"(?i:januari|january|jan|februari|february|feb|machi|march|mar|aprili|april|apr|mei|may|juni|june|jun|julai|july|jul|agosti|august|aug|ago|septemba|september|sept|sep|oktoba|october|okt|oct|novemba|november|nov|desemba|december|des|dec)\.?";

/// "tarehe kumi na mbili Machi, mwaka elfu mbili na ishirini na tano".
fn spoken_date(day: u32, month: usize, year: Option<u64>) -> Option<String> {
    if !(1..=31).contains(&day) || !(1..=12).contains(&month) {
        return None;
    }
    let mut out = format!("tarehe {} {}", cardinal(u64::from(day)), MONTHS[month - 1]);
    if let Some(year) = year {
        out.push_str(&format!(", mwaka {}", cardinal(year)));
    }
    Some(out)
}

/// 12/03/2025, 12.03.2025, 2025-03-12, "12 Machi 2025", "March 12, 2025".
fn dates(s: &str) -> String {
    let keep = |c: &Captures, spoken: Option<String>| spoken.unwrap_or_else(|| c[0].to_string());
    let num = |text: &str| text.parse::<u64>().ok();
    let s = re!(r"\b(?:[Tt]arehe\s+)?(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b").replace_all(
        s,
        |c: &Captures| {
            keep(
                c,
                spoken_date(
                    c[1].parse().unwrap_or(0),
                    c[2].parse().unwrap_or(0),
                    num(&c[3]),
                ),
            )
        },
    );
    let s =
        re!(r"\b(?:[Tt]arehe\s+)?(\d{4})-(\d{1,2})-(\d{1,2})\b").replace_all(&s, |c: &Captures| {
            keep(
                c,
                spoken_date(
                    c[3].parse().unwrap_or(0),
                    c[2].parse().unwrap_or(0),
                    num(&c[1]),
                ),
            )
        });
    let day_first =
        format!(r"\b(?:[Tt]arehe\s+)?(\d{{1,2}})\s+({MONTH_PATTERN})(?:,?\s+(\d{{4}}))?\b");
    let s = regex_cached(&DAY_FIRST, &day_first).replace_all(&s, |c: &Captures| {
        let month = month_number(&c[2]).unwrap_or(0);
        keep(
            c,
            spoken_date(
                c[1].parse().unwrap_or(0),
                month,
                c.get(3).and_then(|y| num(y.as_str())),
            ),
        )
    });
    let month_first = format!(r"\b({MONTH_PATTERN})\s+(\d{{1,2}}),?\s+(\d{{4}})\b");
    regex_cached(&MONTH_FIRST, &month_first)
        .replace_all(&s, |c: &Captures| {
            let month = month_number(&c[1]).unwrap_or(0);
            keep(c, spoken_date(c[2].parse().unwrap_or(0), month, num(&c[3])))
        })
        .into_owned()
}

static DAY_FIRST: OnceLock<Regex> = OnceLock::new();
static MONTH_FIRST: OnceLock<Regex> = OnceLock::new();

fn regex_cached<'a>(cell: &'a OnceLock<Regex>, pattern: &str) -> &'a Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid built-in pattern"))
}

/// Clock time in the Swahili system, which counts hours from dawn (07:00 is "saa moja").
pub(super) fn swahili_time(hour: u32, minute: u32) -> String {
    let (spoken_hour, phrase) = match minute {
        0 => (hour, String::new()),
        15 => (hour, " na robo".to_string()),
        30 => (hour, " na nusu".to_string()),
        45 => (hour + 1, " kasoro robo".to_string()),
        m if m < 30 => (hour, format!(" na dakika {}", cardinal(u64::from(m)))),
        m => (
            hour + 1,
            format!(" kasoro dakika {}", cardinal(u64::from(60 - m))),
        ),
    };
    let swahili_hour = match (spoken_hour + 6) % 12 {
        0 => 12,
        h => h,
    };
    let period = match hour {
        4..=5 => "alfajiri",
        6..=11 => "asubuhi",
        12..=15 => "mchana",
        16..=18 => "jioni",
        _ => "usiku",
    };
    format!("saa {}{phrase} {period}", cardinal(u64::from(swahili_hour)))
}

/// Hour on the 24-hour clock from a written hour and an optional am/pm marker.
fn hour_24(hour: u32, meridiem: Option<&str>) -> Option<u32> {
    match meridiem.map(|m| m.to_ascii_lowercase()) {
        None => (hour < 24).then_some(hour),
        Some(m) if (1..=12).contains(&hour) => Some(hour % 12 + if m == "p" { 12 } else { 0 }),
        Some(_) => None,
    }
}

/// 07:00, 7:30pm, 7am, 7 a.m., 19h, 19h30; a preceding "saa" is absorbed.
fn clock_times(s: &str) -> String {
    let render = |c: &Captures, hour: &str, minute: Option<&str>, meridiem: Option<&str>| {
        let minute: u32 = minute.and_then(|m| m.parse().ok()).unwrap_or(0);
        match hour.parse().ok().and_then(|h| hour_24(h, meridiem)) {
            Some(h) if minute < 60 => swahili_time(h, minute),
            _ => c[0].to_string(),
        }
    };
    let s = re!(r"(?i)\b(?:saa\s+)?(\d{1,2})(?:[:.](\d{2}))?\s*(?:([ap])m\b|([ap])\.m\.)")
        .replace_all(s, |c: &Captures| {
            let meridiem = c.get(3).or(c.get(4)).map(|m| m.as_str());
            render(c, &c[1], c.get(2).map(|m| m.as_str()), meridiem)
        });
    let s = re!(r"(?i)\b(?:saa\s+)?(\d{1,2}):(\d{2})\b")
        .replace_all(&s, |c: &Captures| render(c, &c[1], Some(&c[2]), None));
    re!(r"(?i)\b(?:saa\s+)?(\d{1,2})h(\d{2})?\b")
        .replace_all(&s, |c: &Captures| {
            render(c, &c[1], c.get(2).map(|m| m.as_str()), None)
        })
        .into_owned()
}

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

/// Split "1,500.75" into 1500 and "75"; thousands separators are dropped.
fn split_decimal(number: &str) -> (u64, &str) {
    let dots = number.matches('.').count();
    match number.rfind('.') {
        Some(pos) if dots == 1 => (
            parse_grouped(&number[..pos]).unwrap_or(0),
            &number[pos + 1..],
        ),
        _ => (parse_grouped(number).unwrap_or(0), ""),
    }
}

const CURRENCY: &str =
    r"TSh|Tsh|TSH|tsh|TZS|KSh|Ksh|KSH|ksh|KES|USh|Ush|UGX|Shs\.?|Sh\.?|US\$|\$|USD|€|EUR|£|GBP";

/// TSh 5,000 · KSh200 · $10.50 · 5,000/= · 500/- · 100 USD · TSh 1,000-2,000 · TSh 1.5m.
fn money(s: &str) -> String {
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
fn percentages(s: &str) -> String {
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
fn temperatures(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(&RE, &format!(r"(-?)({NUM})\s?°\s?C\b"))
        .replace_all(s, |c: &Captures| {
            let (i, f) = split_decimal(&c[2]);
            let sign = if c[1].is_empty() { "" } else { "hasi " };
            format!("nyuzi joto {sign}{}", decimal(i, f))
        })
        .into_owned()
}

/// "1/2" → "nusu", "3/4" → "robo tatu", "2/3" → "theluthi mbili", others "tano kwa nane".
fn fractions(s: &str) -> String {
    re!(r"\b(\d{1,3})/(\d{1,3})\b")
        .replace_all(s, |c: &Captures| {
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

/// "10-15" → "kumi hadi kumi na tano".
fn ranges(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(&RE, &format!(r"(^|[\s(])({NUM})\s?-\s?({NUM})\b"))
        .replace_all(s, |c: &Captures| {
            let (a, f) = split_decimal(&c[2]);
            let (b, g) = split_decimal(&c[3]);
            format!("{}{} hadi {}", &c[1], decimal(a, f), decimal(b, g))
        })
        .into_owned()
}

/// "wa 1" → "wa kwanza", "ya 3" → "ya tatu", "2nd" → "wa pili".
fn ordinals(s: &str) -> String {
    let s = re!(
        r"\b(wa|ya|la|cha|vya|za|pa|mwa|Wa|Ya|La|Cha|Vya|Za)\s+(\d{1,6})\b(?:\s*(?:st|nd|rd|th)\b)?"
    )
    .replace_all(s, |c: &Captures| {
        format!("{} {}", &c[1], ordinal(c[2].parse().unwrap_or(0)))
    });
    re!(r"\b(\d{1,6})(?:st|nd|rd|th)\b")
        .replace_all(&s, |c: &Captures| {
            format!("wa {}", ordinal(c[1].parse().unwrap_or(0)))
        })
        .into_owned()
}

/// Account numbers and codes: digit strings with a leading zero or of ten or more digits, read in groups.
fn long_digit_strings(s: &str) -> String {
    re!(r"(^|[^\d,.])(0\d+|[1-9]\d{9,})\b")
        .replace_all(s, |c: &Captures| {
            format!("{}{}", &c[1], digit_groups(&natural_groups(&c[2])))
        })
        .into_owned()
}

/// Units written after a number go before it, as Swahili says them: "5 km" → "kilomita 5",
/// "5-10 kg" → "kilo 5-10" (the numbers are read by later rules).
fn units(s: &str) -> String {
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

/// Plain numbers, decimals and negatives.
fn numbers(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    regex_cached(&RE, &format!(r"(^|[^\p{{L}}\d])(-?)({NUM})"))
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

/// Acronyms in capitals are spelled with the letter names Swahili speakers use.
fn acronyms(s: &str) -> String {
    re!(r"\b[A-Z]{2,6}\b")
        .replace_all(s, |c: &Captures| {
            c[0].chars().map(letter_name).collect::<Vec<_>>().join(" ")
        })
        .into_owned()
}

fn letter_name(c: char) -> &'static str {
    const NAMES: [&str; 26] = [
        "ei", "bi", "si", "di", "i", "ef", "ji", "eichi", "ai", "jei", "kei", "el", "em", "en",
        "ou", "pi", "kyu", "ar", "es", "ti", "yu", "vi", "dabuliu", "eksi", "wai", "zedi",
    ];
    let index = (c as u8).wrapping_sub(b'A') as usize;
    NAMES.get(index).copied().unwrap_or("")
}
