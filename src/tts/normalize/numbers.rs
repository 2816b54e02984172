//! Numbers in Swahili words.
//!
//! Convention (used everywhere): scale words `elfu`, `milioni`, `bilioni`, `trilioni` come before their count,
//! and every part is joined with `na`: 2,025 → "elfu mbili na ishirini na tano", 1,500,000 → "milioni moja na
//! elfu mia tano", 100,000 → "elfu mia moja" (not "laki moja").

/// Digits 0–9 in words.
pub const UNITS: [&str; 10] = [
    "sifuri", "moja", "mbili", "tatu", "nne", "tano", "sita", "saba", "nane", "tisa",
];
/// Tens in words (index 1 = 10, …; index 0 is empty).
pub const TENS: [&str; 10] = [
    "",
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
const SCALES: [(u64, &str); 4] = [
    (1_000_000_000_000, "trilioni"),
    (1_000_000_000, "bilioni"),
    (1_000_000, "milioni"),
    (1_000, "elfu"),
];

/// A cardinal number in words: 0 → "sifuri", 2025 → "elfu mbili na ishirini na tano".
pub fn cardinal(n: u64) -> String {
    if n == 0 {
        return UNITS[0].to_string();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut rest = n;
    for (scale, word) in SCALES {
        if rest >= scale {
            parts.push(format!("{word} {}", below_thousand_or_more(rest / scale)));
            rest %= scale;
        }
    }
    if rest > 0 {
        parts.push(below_thousand(rest));
    }
    parts.join(" na ")
}

/// Counts of a scale word can themselves exceed 999 only for the top scale.
fn below_thousand_or_more(n: u64) -> String {
    if n < 1000 {
        below_thousand(n)
    } else {
        cardinal(n)
    }
}

fn below_thousand(n: u64) -> String {
    let hundreds = n / 100;
    let rest = n % 100;
    let tens_part = below_hundred(rest);
    match (hundreds, rest) {
        (0, _) => tens_part,
        (h, 0) => format!("mia {}", UNITS[h as usize]),
        (h, _) => format!("mia {} na {tens_part}", UNITS[h as usize]),
    }
}

fn below_hundred(n: u64) -> String {
    let (tens, units) = ((n / 10) as usize, (n % 10) as usize);
    match (tens, units) {
        (0, u) => UNITS[u].to_string(),
        (t, 0) => TENS[t].to_string(),
        (t, u) => format!("{} na {}", TENS[t], UNITS[u]),
    }
}

/// An ordinal after a noun-class concord ("wa", "ya", "la" …): 1 → "kwanza", 2 → "pili", others cardinal.
pub fn ordinal(n: u64) -> String {
    match n {
        1 => "kwanza".into(),
        2 => "pili".into(),
        _ => cardinal(n),
    }
}

/// Digits read one by one: "0712" → "sifuri saba moja mbili".
pub fn digits(s: &str) -> String {
    s.chars()
        .filter_map(|c| c.to_digit(10))
        .map(|d| UNITS[d as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Digits read in spoken groups separated by commas (pauses): "0712345678" in groups 4-3-3.
pub fn digit_groups(groups: &[&str]) -> String {
    groups
        .iter()
        .map(|g| digits(g))
        .filter(|g| !g.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Split a digit string into groups for reading: up to four digits in one group (a PIN, a card's last four),
/// 7 as 3-4, phone-like 10 digits as 4-3-3, 8, 12 and 16 in fours (cards), otherwise threes with any
/// remainder first.
pub fn natural_groups(s: &str) -> Vec<&str> {
    let n = s.len();
    let sizes: Vec<usize> = if n <= 4 {
        vec![n]
    } else if n == 7 {
        vec![3, 4]
    } else if n == 10 {
        vec![4, 3, 3]
    } else if matches!(n, 8 | 12 | 16) {
        vec![4; n / 4]
    } else {
        let mut sizes = vec![3; n / 3];
        if !n.is_multiple_of(3) {
            sizes.insert(0, n % 3);
        }
        sizes
    };
    let mut out = Vec::with_capacity(sizes.len());
    let mut pos = 0;
    for size in sizes {
        out.push(&s[pos..pos + size]);
        pos += size;
    }
    out
}

/// A decimal written with digits: "3.75" → "tatu nukta saba tano" (the fraction read digit by digit).
pub fn decimal(integer: u64, fraction: &str) -> String {
    if fraction.is_empty() {
        cardinal(integer)
    } else {
        format!("{} nukta {}", cardinal(integer), digits(fraction))
    }
}

/// Parse digits with optional grouping separators (`,`, space, `.` or `'`) into a number.
pub fn parse_grouped(s: &str) -> Option<u64> {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cardinals_follow_one_convention() {
        assert_eq!(cardinal(0), "sifuri");
        assert_eq!(cardinal(11), "kumi na moja");
        assert_eq!(cardinal(2_025), "elfu mbili na ishirini na tano");
        assert_eq!(cardinal(1_500_000), "milioni moja na elfu mia tano");
        assert_eq!(cardinal(999_999_999_999), {
            "bilioni mia tisa na tisini na tisa na milioni mia tisa na tisini na tisa na elfu mia tisa na tisini \
             na tisa na mia tisa na tisini na tisa"
        });
        assert_eq!(natural_groups("0712345678"), vec!["0712", "345", "678"]);
        assert_eq!(natural_groups("12345"), vec!["12", "345"]);
    }
}
