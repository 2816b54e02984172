//! Slot extractors: amounts in shillings, mobile numbers, account numbers, dates and free text.

use time::{Date, Duration, Month, OffsetDateTime};

use super::scenario::SlotKind;
use super::words::tokens;

/// Extract a value of `kind` from a user's turn, formatted as templates show it.
pub fn extract(kind: SlotKind, text: &str, today: OffsetDateTime) -> Option<String> {
    match kind {
        SlotKind::Amount => amount(text).map(|n| n.to_string()),
        SlotKind::Phone => phone(text),
        SlotKind::Account => account(text),
        SlotKind::Date => date(text, today).map(|d| d.to_string()),
        SlotKind::Text => Some(text.trim().to_string()).filter(|t| !t.is_empty()),
    }
}

const PHONE: &str = r"(?:\+?(?:255|254)[\s-]?|\b0)([167]\d{2})[\s-]?(\d{3})[\s-]?(\d{3})\b";

/// A Tanzanian or Kenyan mobile number, without spaces.
pub fn phone(text: &str) -> Option<String> {
    let found = re!(PHONE).find(text)?;
    Some(
        found
            .as_str()
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect(),
    )
}

/// The text with what an extractor of `kind` took removed (phones and accounts), for the next extractor.
pub fn consume(kind: SlotKind, text: &str) -> String {
    match kind {
        SlotKind::Phone => re!(PHONE).replacen(text, 1, " ").into_owned(),
        SlotKind::Account => {
            let without_phones = re!(PHONE).replace_all(text, " ");
            re!(ACCOUNT).replacen(&without_phones, 1, " ").into_owned()
        }
        _ => text.to_string(),
    }
}

const ACCOUNT: &str = r"\b\d(?:[\s-]?\d){7,15}\b";

/// 8 to 16 digits that are not a mobile number.
pub fn account(text: &str) -> Option<String> {
    let without_phones = re!(PHONE).replace_all(text, " ");
    let found = re!(ACCOUNT).find(&without_phones)?;
    Some(
        found
            .as_str()
            .chars()
            .filter(char::is_ascii_digit)
            .collect(),
    )
}

/// An amount in shillings: digits (`5,000`, `5000/=`, `TSh 5,000`, `5k`) or Swahili number words.
pub fn amount(text: &str) -> Option<u64> {
    let without_phones = re!(PHONE).replace_all(text, " ");
    let pattern = re!(
        r"(?i)(?:\b(?:tsh|tshs|ksh|kshs|shs?)\.?\s*)?\b(\d{1,3}(?:[, ]\d{3})+|\d{1,9})(\.\d{1,2})?\s*(k|m|elfu)?\b"
    );
    for caps in pattern.captures_iter(&without_phones) {
        let grouped = caps[1].contains([',', ' ']);
        let digits: String = caps[1].chars().filter(char::is_ascii_digit).collect();
        // Long ungrouped digit strings are accounts, business numbers or codes, not amounts.
        if digits.len() > 9 || (!grouped && digits.len() >= 8) {
            continue;
        }
        let whole: f64 = digits.parse().ok()?;
        let fraction: f64 = caps
            .get(2)
            .and_then(|f| f.as_str().parse().ok())
            .unwrap_or(0.0);
        let scale = match caps.get(3).map(|m| m.as_str().to_lowercase()) {
            Some(s) if s == "k" || s == "elfu" => 1_000.0,
            Some(s) if s == "m" => 1_000_000.0,
            _ => 1.0,
        };
        let value = ((whole + fraction) * scale).round() as u64;
        if value > 0 {
            return Some(value);
        }
    }
    spoken_number(&tokens(text))
}

fn unit(word: &str) -> Option<u64> {
    let units = [
        "moja", "mbili", "tatu", "nne", "tano", "sita", "saba", "nane", "tisa",
    ];
    units.iter().position(|u| *u == word).map(|i| i as u64 + 1)
}

fn tens(word: &str) -> Option<u64> {
    let tens = [
        "kumi",
        "ishirini",
        "thelathini",
        "arobaini",
        "hamsini",
        "sitini",
        "sabini",
        "themanini",
        "tisini",
    ];
    tens.iter()
        .position(|t| *t == word)
        .map(|i| (i as u64 + 1) * 10)
}

fn scale(word: &str) -> Option<u64> {
    match word {
        "elfu" => Some(1_000),
        "laki" => Some(100_000),
        "milioni" => Some(1_000_000),
        "bilioni" => Some(1_000_000_000),
        _ => None,
    }
}

/// `kumi na mbili`, `tano`, `ishirini`: below 100.
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

/// `mia tatu na hamsini`, `kumi na mbili`: below 1,000.
fn below_thousand(words: &[String], at: usize) -> Option<(u64, usize)> {
    if words.get(at).map(String::as_str) == Some("mia") {
        let (hundreds, mut next) = words
            .get(at + 1)
            .and_then(|w| unit(w))
            .map(|u| (u * 100, at + 2))?;
        let mut value = hundreds;
        if words.get(next).map(String::as_str) == Some("na") {
            if let Some((rest, after)) = below_hundred(words, next + 1) {
                value += rest;
                next = after;
            }
        }
        return Some((value, next));
    }
    below_hundred(words, at)
}

/// The first number said in words: scale words first (`elfu tano` = 5,000, `elfu kumi na mbili` = 12,000,
/// `laki moja na elfu hamsini` = 150,000).
pub fn spoken_number(words: &[String]) -> Option<u64> {
    let start = words
        .iter()
        .position(|w| scale(w).is_some() || w == "mia" || tens(w).is_some() || unit(w).is_some())?;
    let (mut total, mut at) = (0u64, start);
    loop {
        let (value, next) = if let Some(s) = words.get(at).and_then(|w| scale(w)) {
            let (multiplier, next) = below_thousand(words, at + 1).unwrap_or((1, at + 1));
            (s.checked_mul(multiplier)?, next)
        } else {
            below_thousand(words, at)?
        };
        total = total.checked_add(value)?;
        at = next;
        let starts =
            |w: &String| scale(w).is_some() || w == "mia" || tens(w).is_some() || unit(w).is_some();
        match words.get(at).map(String::as_str) {
            Some("na") if words.get(at + 1).is_some_and(starts) => at += 1,
            // `elfu mbili mia tano`: a hundreds group may follow a scale group directly.
            Some("mia") if value >= 1_000 => {}
            _ => break,
        }
    }
    Some(total).filter(|t| *t > 0)
}

const MONTHS: [&str; 12] = [
    "januari", "februari", "machi", "aprili", "mei", "juni", "julai", "agosti", "septemba",
    "oktoba", "novemba", "desemba",
];
const WEEKDAYS: [&str; 7] = [
    "jumatatu", "jumanne", "jumatano", "alhamisi", "ijumaa", "jumamosi", "jumapili",
];

/// A date: `leo`, `kesho`, `keshokutwa`, a weekday (the next one), `12/03/2027`, `12 Machi [2027]`.
pub fn date(text: &str, now: OffsetDateTime) -> Option<Date> {
    let today = now.date();
    let words = tokens(text);
    if let Some(caps) = re!(r"\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})\b").captures(text) {
        let month = Month::try_from(caps[2].parse::<u8>().ok()?).ok()?;
        return Date::from_calendar_date(caps[3].parse().ok()?, month, caps[1].parse().ok()?).ok();
    }
    for (i, word) in words.iter().enumerate() {
        match word.as_str() {
            "leo" => return Some(today),
            "kesho" => return Some(today + Duration::days(1)),
            "keshokutwa" => return Some(today + Duration::days(2)),
            _ => {}
        }
        if let Some(day) = WEEKDAYS.iter().position(|d| d == word) {
            let current = i64::from(today.weekday().number_days_from_monday());
            let ahead = (day as i64 - current).rem_euclid(7);
            return Some(today + Duration::days(if ahead == 0 { 7 } else { ahead }));
        }
        if let Some(month) = MONTHS.iter().position(|m| m == word) {
            let day: u8 = words.get(i.checked_sub(1)?)?.parse().ok()?;
            let month = Month::try_from(month as u8 + 1).ok()?;
            let year = words
                .get(i + 1)
                .and_then(|y| y.parse::<i32>().ok())
                .filter(|y| (2000..2100).contains(y));
            let this_year =
                Date::from_calendar_date(year.unwrap_or(today.year()), month, day).ok()?;
            // A day and month without a year mean the next such date.
            return Some(match year {
                None if this_year < today => {
                    Date::from_calendar_date(today.year() + 1, month, day).ok()?
                }
                _ => this_year,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn amounts_in_digits_and_words() {
        for (text, expected) in [
            ("shilingi 5000", 5_000),
            ("TSh 5,000 tafadhali", 5_000),
            ("5000/=", 5_000),
            ("KSh 250", 250),
            ("5k", 5_000),
            ("elfu tano", 5_000),
            ("shilingi elfu kumi na mbili", 12_000),
            ("laki moja na elfu hamsini", 150_000),
            ("mia tatu na hamsini", 350),
            ("milioni mbili", 2_000_000),
        ] {
            assert_eq!(amount(text), Some(expected), "{text}");
        }
        assert_eq!(amount("kwa 0712345678"), None);
        assert_eq!(amount("1.5m"), Some(1_500_000));
        assert_eq!(amount("2.5k"), Some(2_500));
        assert_eq!(amount("shilingi 10 000"), Some(10_000));
        assert_eq!(amount("namba 12345678"), None);
        assert_eq!(amount("elfu mbili mia tano"), Some(2_500));
        assert_eq!(amount("elfu tano kwa 0712345678"), Some(5_000));
    }

    #[test]
    fn phones_accounts_and_dates() {
        assert_eq!(phone("tuma kwa 0712 345 678"), Some("0712345678".into()));
        assert_eq!(phone("+255712345678"), Some("+255712345678".into()));
        assert_eq!(phone("namba 254 712 345 678"), Some("254712345678".into()));
        assert_eq!(phone("12345"), None);
        assert_eq!(
            account("akaunti 0123456789012 ya 0712345678"),
            Some("0123456789012".into())
        );
        let now = datetime!(2026-11-22 10:00 +3); // a Sunday
        assert_eq!(date("kesho", now), Some(date!(2026 - 11 - 23)));
        assert_eq!(date("jumatatu ijayo", now), Some(date!(2026 - 11 - 23)));
        assert_eq!(date("12/03/2027", now), Some(date!(2027 - 03 - 12)));
        assert_eq!(date("tarehe 5 januari", now), Some(date!(2027 - 01 - 05)));
        assert_eq!(date("sijui", now), None);
    }
}
