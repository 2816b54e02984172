//! Slot extractors: amounts in shillings, mobile numbers, account numbers, dates and free text. Every number goes
//! through [`super::numbers`].

use time::{Date, Duration, Month, OffsetDateTime};

use super::numbers::{self, Amount, PHONE};
use super::scenario::{Slot, SlotKind};
use super::words::tokens;

/// What a turn holds for a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extracted {
    /// A value, formatted as templates show it.
    Value(String),
    /// Something was heard but cannot be taken: out of the slot's bounds, the wrong length, or readable two
    /// ways. What was heard, in words for amounts.
    Rejected(String),
    /// Nothing for this slot.
    Nothing,
}

/// Default bounds of an account number's length.
pub const ACCOUNT_DIGITS: [usize; 2] = [8, 16];
/// The digits of a code (a PIN, a one-time code) when its slot does not say.
pub const CODE_DIGITS: [usize; 2] = [4, 8];

/// Extract a value for `slot` from a user's turn.
pub fn extract(slot: &Slot, text: &str, today: OffsetDateTime) -> Extracted {
    let found = |value: Option<String>| value.map_or(Extracted::Nothing, Extracted::Value);
    match slot.kind {
        SlotKind::Amount => match numbers::amount(text) {
            Amount::None => Extracted::Nothing,
            Amount::One(value) => {
                let low = slot.min.unwrap_or(1);
                let high = slot.max.unwrap_or(u64::MAX);
                if (low..=high).contains(&value) {
                    Extracted::Value(value.to_string())
                } else {
                    Extracted::Rejected(numbers::in_words(value))
                }
            }
            Amount::Ambiguous(values) => Extracted::Rejected(
                values
                    .iter()
                    .map(|v| numbers::in_words(*v))
                    .collect::<Vec<_>>()
                    .join(" au "),
            ),
        },
        SlotKind::Phone => found(phone(text)),
        SlotKind::Account => account(text, slot.digits.unwrap_or(ACCOUNT_DIGITS)),
        SlotKind::Date => found(date(text, today).map(|d| d.to_string())),
        SlotKind::Text => found(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        SlotKind::Code => account(text, slot.digits.unwrap_or(CODE_DIGITS)),
    }
}

/// An action argument given by an LLM backend, read as the scenario's slot of that name would read it (or as a
/// slot of `kind` without bounds): the value to send, or why it cannot be sent.
pub fn check_argument(
    scenario: &super::scenario::Scenario,
    name: &str,
    kind: SlotKind,
    said: &str,
) -> Result<String, String> {
    if matches!(kind, SlotKind::Date | SlotKind::Text) {
        return Ok(said.trim().to_string());
    }
    let unbounded = Slot {
        kind,
        prompt: String::new(),
        input: Default::default(),
        secret: false,
        invalid: None,
        min: None,
        max: None,
        digits: None,
        out_of_range: None,
    };
    let slot = scenario
        .slots
        .get(name)
        .filter(|s| s.kind == kind)
        .unwrap_or(&unbounded);
    match extract(slot, said, OffsetDateTime::now_utc()) {
        Extracted::Value(value) => Ok(value),
        Extracted::Rejected(heard) => Err(format!(
            "{heard:?} is not a plausible value{}",
            match (slot.min, slot.max, slot.digits) {
                (Some(low), Some(high), _) => format!(" (from {low} to {high})"),
                (_, _, Some([low, high])) => format!(" ({low} to {high} digits)"),
                _ => String::new(),
            }
        )),
        Extracted::Nothing => Err(format!("{said:?} is not a {kind:?} value")),
    }
}

/// Whether a digit string (a `+` allowed first) is a Tanzanian or Kenyan mobile number.
pub fn is_phone(digits: &str) -> bool {
    re!(r"^(?:\+?(?:255|254)|0)[167]\d{8}$").is_match(digits)
}

/// A Tanzanian or Kenyan mobile number, written (`0712 345 678`, `+255712345678`) or said digit by digit
/// (`sifuri saba moja …`), without spaces.
pub fn phone(text: &str) -> Option<String> {
    if let Some(found) = re!(PHONE).find(text) {
        return Some(
            found
                .as_str()
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '-')
                .collect(),
        );
    }
    numbers::digit_strings(text)
        .into_iter()
        .find(|d| is_phone(d))
}

/// The text with what an extractor of `kind` took (`value`, or what was heard) removed, for the next extractor:
/// a business number is never read as an amount.
pub fn consume(kind: SlotKind, text: &str, value: &str) -> String {
    if !matches!(kind, SlotKind::Phone | SlotKind::Account) {
        return text.to_string();
    }
    let wanted: String = value.chars().filter(char::is_ascii_digit).collect();
    if let Some(found) = re!(r"\+?\d(?:[\s-]?\d)*").find_iter(text).find(|m| {
        m.as_str()
            .chars()
            .filter(char::is_ascii_digit)
            .collect::<String>()
            == wanted
    }) {
        let mut out = text.to_string();
        out.replace_range(found.range(), " ");
        return out;
    }
    strip_spoken_runs(text)
}

/// Remove digits said one by one (runs of four or more digit words).
fn strip_spoken_runs(text: &str) -> String {
    re!(r"(?i)\b(?:(?:sifuri|sufuri|ziro|zero|moja|mbili|tatu|nne|tano|sita|saba|nane|tisa)[\s,.-]+){3,}(?:sifuri|sufuri|ziro|zero|moja|mbili|tatu|nne|tano|sita|saba|nane|tisa)\b")
        .replace_all(text, " ")
        .into_owned()
}

/// An account number whose length is within `bounds`; a mobile number counts only when nothing else does.
fn account(text: &str, bounds: [usize; 2]) -> Extracted {
    // Grouped by commas (`45,000`) or followed by a scale (`5000/=`, `2k`) is an amount, not an account.
    let without_amounts =
        re!(r"(?i)\b\d{1,3}(?:,\d{3})+\b|\b\d+(?:/=|/-|\s*k\b)").replace_all(text, " ");
    let candidates: Vec<String> = numbers::digit_strings(&without_amounts)
        .into_iter()
        .map(|d| d.replace('+', ""))
        .collect();
    let fits = |d: &String| (bounds[0]..=bounds[1]).contains(&d.len());
    if let Some(found) = candidates.iter().find(|d| fits(d) && !is_phone(d)) {
        return Extracted::Value(found.clone());
    }
    if let Some(found) = candidates.iter().find(|d| fits(d)) {
        return Extracted::Value(found.clone());
    }
    match candidates.into_iter().find(|d| d.len() >= 3) {
        Some(heard) => Extracted::Rejected(heard),
        None => Extracted::Nothing,
    }
}

/// An amount in shillings, when the turn names exactly one.
pub fn amount(text: &str) -> Option<u64> {
    match numbers::amount(text) {
        Amount::One(value) => Some(value),
        _ => None,
    }
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
    // `tarehe 14` or `tarehe 14 mwezi huu`: that day of this month, or of the next once it has passed
    // (`mwezi ujao` says next month outright).
    if let Some(caps) =
        re!(r"(?i)\btarehe\s+(\d{1,2})\b(?:\s+(?:ya\s+)?mwezi\s+(huu|ujao))?").captures(text)
    {
        let later = words.iter().any(|w| MONTHS.contains(&w.as_str()));
        if !later {
            let day: u8 = caps[1].parse().ok()?;
            let next_month = |d: Date| {
                let (y, m) = if d.month() == Month::December {
                    (d.year() + 1, Month::January)
                } else {
                    (d.year(), d.month().next())
                };
                Date::from_calendar_date(y, m, day).ok()
            };
            let this = Date::from_calendar_date(today.year(), today.month(), day).ok();
            return match caps.get(2).map(|m| m.as_str().to_lowercase()) {
                Some(m) if m == "ujao" => next_month(today),
                _ => this.filter(|d| *d >= today).or_else(|| next_month(today)),
            };
        }
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
    fn amounts_in_digits_words_and_slang() {
        for (text, expected) in [
            ("shilingi 5000", 5_000),
            ("TSh 5,000 tafadhali", 5_000),
            ("5000/=", 5_000),
            ("KSh 250", 250),
            ("5k", 5_000),
            ("elfu tano", 5_000),
            ("shilingi elfu kumi na mbili", 12_000),
            ("laki moja na elfu hamsini", 150_000),
            ("laki moja na nusu", 150_000),
            ("mia tatu na hamsini", 350),
            ("milioni mbili", 2_000_000),
            ("milioni moja na laki mbili", 1_200_000),
            ("thao mbili", 2_000),
            ("nitumie buku tano", 5_000),
            ("jero", 500),
            ("soo tatu", 300),
            ("elfu 5", 5_000),
            ("elf tano", 5_000),
            ("1.5m", 1_500_000),
            ("2.5k", 2_500),
            ("15K", 15_000),
            ("shilingi 10 000", 10_000),
            ("5.000", 5_000),
            ("elfu mbili mia tano", 2_500),
            ("elfu tano kwa 0712345678", 5_000),
            ("tuma elfu tano kwa mama mara mbili", 5_000),
        ] {
            assert_eq!(amount(text), Some(expected), "{text}");
        }
        assert_eq!(amount("kwa 0712345678"), None);
        assert_eq!(amount("namba 12345678"), None);
        assert_eq!(
            amount("sifuri saba moja mbili tatu nne tano sita saba nane"),
            None
        );
        assert!(matches!(
            numbers::amount("elfu tano au elfu sita"),
            Amount::Ambiguous(_)
        ));
    }

    #[test]
    fn phones_accounts_and_dates() {
        assert_eq!(phone("tuma kwa 0712 345 678"), Some("0712345678".into()));
        assert_eq!(phone("+255712345678"), Some("+255712345678".into()));
        assert_eq!(phone("namba 254 712 345 678"), Some("254712345678".into()));
        assert_eq!(
            phone("sifuri saba moja mbili, tatu nne tano, sita saba nane"),
            Some("0712345678".into())
        );
        assert_eq!(phone("12345"), None);
        assert_eq!(
            account("akaunti 0123456789012 ya 0712345678", ACCOUNT_DIGITS),
            Extracted::Value("0123456789012".into())
        );
        assert_eq!(
            account("akaunti yangu ni 0712345678", [10, 13]),
            Extracted::Value("0712345678".into())
        );
        assert_eq!(
            account("12345", [10, 13]),
            Extracted::Rejected("12345".into())
        );
        let now = datetime!(2026-11-22 10:00 +3); // a Sunday
        assert_eq!(date("kesho", now), Some(date!(2026 - 11 - 23)));
        assert_eq!(date("jumatatu ijayo", now), Some(date!(2026 - 11 - 23)));
        assert_eq!(date("12/03/2027", now), Some(date!(2027 - 03 - 12)));
        assert_eq!(date("tarehe 5 januari", now), Some(date!(2027 - 01 - 05)));
        assert_eq!(date("sijui", now), None);
        assert_eq!(
            date("tarehe 28 mwezi huu", now),
            Some(date!(2026 - 11 - 28))
        );
        assert_eq!(date("tarehe 14", now), Some(date!(2026 - 12 - 14)));
        assert_eq!(
            date("tarehe 3 mwezi ujao", now),
            Some(date!(2026 - 12 - 03))
        );
    }
}
