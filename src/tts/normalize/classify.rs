//! Tokens that look like numbers but are not quantities: digit strings named by the words before them (an
//! emergency number, a paybill or till, a card's last four digits, a PIN), USSD codes and alphanumeric codes.
//! Each is read character by character; everything else is left for the quantity rules.

use regex::Captures;

use super::letters::spell_code;
use super::nouns;
use super::numbers::{digit_groups, digits, natural_groups, UNITS};

/// Words after which a digit string of three or more digits is read digit by digit.
const CUES: &[&str] = &[
    "namba",
    "nambari",
    "dharura",
    "akaunti",
    "inayoishia",
    "inaishia",
    "ikiishia",
    "zinazoishia",
    "pin",
    "pini",
    "siri",
    "msimbo",
    "kumbukumbu",
    "ref",
    "reference",
    "paybill",
    "till",
    "biashara",
    "wakala",
    "risiti",
    "otp",
    "kitambulisho",
    "nida",
    "code",
    "no",
    // As the lexicon respells cues before this rule runs: Paybill → "pei bili", OTP → "ou ti pi", ID → "ai di".
    "bili",
    "pi",
    "di",
];

/// Words that may stand between a cue and its digits: "Piga simu 112", "Namba ya siri yako: 4821".
const LINKS: &[&str] = &[
    "ya", "la", "wa", "za", "na", "ni", "yako", "yake", "yetu", "yenu", "kwa", "au", "ama", "simu",
    "bure", "hii", "hiyo", "mpya", "maalum", "ya", "is", "number", "your",
];

/// How many words back a cue is looked for.
const WINDOW: usize = 4;

/// `*150*00#` → "nyota moja tano sifuri nyota sifuri sifuri reli".
pub(super) fn ussd_codes(s: &str) -> String {
    re!(r"\*[0-9]+(?:\*[0-9]+)*#")
        .replace_all(s, |c: &Captures| {
            let mut out = Vec::new();
            for part in c[0].trim_end_matches('#').split('*').skip(1) {
                out.push("nyota".to_string());
                out.push(digits(part));
            }
            out.push("reli".to_string());
            format!(" {} ", out.join(" "))
        })
        .into_owned()
}

/// Reference and confirmation codes mixing capitals and digits (`QFT4H7JX2M`) are spelled out.
pub(super) fn codes(s: &str) -> String {
    re!(r"\b[A-Z0-9]{5,}\b")
        .replace_all(s, |c: &Captures| {
            let token = &c[0];
            let has_letter = token.chars().any(|ch| ch.is_ascii_uppercase());
            let has_digit = token.chars().any(|ch| ch.is_ascii_digit());
            // "500MB" is a quantity with its unit, not a code.
            let quantity = re!(r"^[0-9]+[A-Z]{1,3}$").is_match(token);
            if has_letter && has_digit && !quantity {
                spell_code(token)
            } else {
                token.to_string()
            }
        })
        .into_owned()
}

/// Digit strings of three or more digits that a cue word names (`Piga 112`, `Paybill 400200`, `PIN 4821`), those
/// listed right after one (`114 au 115`) and free lines (`1199 bila malipo`) are read digit by digit in groups.
pub(super) fn named_digit_strings(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 32);
    let mut last = 0;
    let mut previous_string_end: Option<usize> = None;
    let free_line = re!(r"^\s+(?:bila malipo|bure)\b");
    for m in re!(r"[0-9]+(?:[.,:/][0-9]+)*").find_iter(s) {
        let token = m.as_str();
        let before = s[..m.start()].chars().next_back();
        let after = s[m.end()..].chars().next();
        let free = token.len() >= 3
            && token.bytes().all(|b| b.is_ascii_digit())
            && !before.is_some_and(|c| c.is_alphanumeric() || "*+#-/".contains(c))
            && !after.is_some_and(|c| c.is_alphanumeric() || "%°/*#-".contains(c));
        if !free {
            continue;
        }
        let listed = previous_string_end.is_some_and(|end| listed_after(&s[end..m.start()]));
        // A free line: "Kenya 1199 bila malipo".
        let toll_free = free_line.is_match(&s[m.end()..])
            && !s[..m.start()]
                .split_whitespace()
                .next_back()
                .is_some_and(nouns::is_plural_count);
        if listed || toll_free || cued(&s[..m.start()], token.len()) {
            out.push_str(&s[last..m.start()]);
            out.push_str(&digit_groups(&natural_groups(token)));
            last = m.end();
            previous_string_end = Some(m.end());
        }
    }
    out.push_str(&s[last..]);
    out
}

/// The few words between two digit strings of a list: "114 au 115", "999, 112 na 1199", "Kenya 999".
fn listed_after(between: &str) -> bool {
    let words: Vec<&str> = between
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    words.len() <= 3
        && words
            .iter()
            .any(|w| matches!(w.to_lowercase().as_str(), "au" | "ama" | "na" | "or"))
}

/// Whether one of the last few words before a position names a digit string, with no counted noun between.
fn cued(before: &str, digits: usize) -> bool {
    let words: Vec<&str> = before.split_whitespace().rev().take(WINDOW).collect();
    for (i, raw) in words.iter().enumerate() {
        if *raw == "Na." || *raw == "No." {
            return true;
        }
        let word: String = raw
            .chars()
            .filter(|c| c.is_alphabetic())
            .collect::<String>()
            .to_lowercase();
        if CUES.contains(&word.as_str()) || is_call(&word) {
            // A cue that is also a counted noun ("wakala 350" are agents) names digits only when they are long.
            if i == 0 && nouns::is_plural_count(&word) && digits < 5 {
                return false;
            }
            // Only linking words stand between (checked below as the walk goes back), so "namba ya wagonjwa ni
            // 345" never gets here: it counts patients.
            return true;
        }
        // "0754 000 112 au 112": a digit string already read out, joined by a conjunction.
        if UNITS.contains(&word.as_str())
            && words[..i]
                .iter()
                .any(|w| matches!(w.to_lowercase().as_str(), "au" | "ama" | "na" | "or"))
        {
            return true;
        }
        if !LINKS.contains(&word.as_str()) && !word.is_empty() {
            return false;
        }
    }
    false
}

/// Forms of *piga* (to call): piga, pigia, kupiga, apige, mpigie, tupigie …
fn is_call(word: &str) -> bool {
    re!(r"^(?:ku|a|u|m|wa|tu|ni|mu)?pig(?:a|e|ia|ie)$").is_match(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cued_digit_strings_are_read_digit_by_digit() {
        assert_eq!(
            named_digit_strings("Piga 112 sasa"),
            "Piga moja moja mbili sasa"
        );
        assert_eq!(
            named_digit_strings("kupiga 114 au 115, na Kenya 999 au 112"),
            "kupiga moja moja nne au moja moja tano, na Kenya tisa tisa tisa au moja moja mbili"
        );
        assert_eq!(
            named_digit_strings("Piga simu 112 sasa"),
            "Piga simu moja moja mbili sasa"
        );
        assert_eq!(
            named_digit_strings("watu 112 walifika"),
            "watu 112 walifika"
        );
        assert_eq!(
            named_digit_strings("namba ya wagonjwa ni 345"),
            "namba ya wagonjwa ni 345"
        );
    }

    #[test]
    fn ussd_and_codes_are_spelled() {
        assert_eq!(
            ussd_codes("Bonyeza *150*00# sasa").trim(),
            "Bonyeza  nyota moja tano sifuri nyota sifuri sifuri reli  sasa".trim()
        );
        assert_eq!(
            codes("QK7P2 imethibitishwa"),
            "kyu kei saba pi mbili imethibitishwa"
        );
        assert_eq!(codes("500MB na 12345"), "500MB na 12345");
    }
}
