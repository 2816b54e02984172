//! What messages carry from the web: e-mail addresses, web addresses and hashtags.

use regex::Captures;

use super::letters::{sayable, spell_code};
use super::numbers::digits;

/// How the parts of a domain are said: the common endings by name, other parts as words or spelled.
fn label(part: &str) -> String {
    match part.to_lowercase().as_str() {
        "www" => "dabuliu dabuliu dabuliu".into(),
        "com" => "kom".into(),
        "co" => "ko".into(),
        "go" => "go".into(),
        "net" => "neti".into(),
        "info" => "info".into(),
        "" => String::new(),
        lower if lower.bytes().all(|b| b.is_ascii_digit()) => digits(lower),
        lower if sayable(&lower.to_uppercase()) => lower.to_string(),
        lower => spell_code(&lower.to_uppercase()),
    }
}

/// An address read part by part: "." *nukta*, "@" *et*, "/" *mkwaju*, "-" *dashi*, "_" *andaskoo*.
fn spoken_address(address: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut part = String::new();
    for c in address.chars() {
        let joiner = match c {
            '.' => "nukta",
            '@' => "et",
            '/' => "mkwaju",
            '-' => "dashi",
            '_' => "andaskoo",
            ':' => "",
            other => {
                part.push(other);
                continue;
            }
        };
        out.push(label(&part));
        part.clear();
        out.push(joiner.to_string());
    }
    out.push(label(&part));
    out.retain(|w| !w.is_empty());
    out.join(" ")
}

/// `info@benki.co.tz` and `www.tra.go.tz/huduma` read part by part; `https://` is not read.
pub(super) fn addresses(s: &str) -> String {
    let s = re!(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
        .replace_all(s, |c: &Captures| spoken_address(&c[0]));
    re!(r"(?i)\b(?:https?://)?((?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|info|tz|ke|ug|rw|africa|io)(?:/[a-z0-9_/.-]*[a-z0-9_/-])?)")
        .replace_all(&s, |c: &Captures| spoken_address(&c[1]))
        .into_owned()
}

/// `#KaziIendelee` → "Kazi Iendelee": a hashtag is read as its words.
pub(super) fn hashtags(s: &str) -> String {
    re!(r"#(\p{L}[\p{L}\p{N}_]*)")
        .replace_all(s, |c: &Captures| {
            let mut words = String::new();
            let mut previous_lower = false;
            for ch in c[1].chars() {
                if ch == '_' {
                    words.push(' ');
                    previous_lower = false;
                    continue;
                }
                if ch.is_uppercase() && previous_lower {
                    words.push(' ');
                }
                previous_lower = ch.is_lowercase();
                words.push(ch);
            }
            words
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_part_by_part() {
        assert_eq!(
            addresses("Tembelea www.tra.go.tz leo"),
            "Tembelea dabuliu dabuliu dabuliu nukta ti ar ei nukta go nukta ti zedi leo"
        );
        assert_eq!(
            addresses("andika huduma@benki.co.tz"),
            "andika huduma et benki nukta ko nukta ti zedi"
        );
        assert_eq!(hashtags("#KaziIendelee sasa"), "Kazi Iendelee sasa");
    }
}
