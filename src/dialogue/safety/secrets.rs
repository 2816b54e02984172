//! Secrets a caller offers: a PIN, one-time code, password, CVV or mobile-money PIN, in digits, spaced digits,
//! digits or numbers in words, or a password word; a card number (15 to 19 digits); or an offer to give one, even
//! as a question and without the value ("Nikupe PIN yangu?", "Nikutumie OTP?", "Nikusomee namba ya kadi?"). Offered secrets are answered with a warning and masked before
//! the turn is stored, logged, sent to a backend or echoed.

use std::ops::Range;

/// Names of secrets (Swahili, English, and what callers say for them).
pub const SECRET_NAME: &str = r"(?:(?:m-?pesa|tigo\s*pesa|airtel\s*money|mixx)\s+)?(?:pin(?:\s+(?:code|namba|number))?|pini|p\.i\.n|nenosiri|neno\s+(?:la\s+)?siri|nywila|nywira|password|pasword|passwad|passcode|otp|o\.t\.p|one[- ]time\s+(?:code|password|pin)|msimbo(?:\s+wa\s+siri)?|cvv2?|cvc|(?:namba|nambari)\s+(?:yangu\s+|yako\s+)?ya\s+siri|siri|code|kodi\s+ya\s+siri|verification\s+code|security\s+code|(?:namba|nambari|code|msimbo)\s+ya\s+uthibitisho|(?:namba|nambari|tarakimu)\s+tatu\s+za\s+nyuma)";

/// Offering to give something, first person to second ("nikupe", "nikutumie", "niku-send", "nikikupa",
/// "naweza kukutajia", "can I give you").
const OFFER: &str = r"(?:niku-?(?:pe|pee|patie|tumie|ambie|tajie|somee|andikie|sendie|send|share|text|forward)|nikiku-?(?:pa|patia|tumia|ambia|tajia|somea|send)|nitaku-?(?:pa|patia|tumia|ambia|tajia|somea|send)|(?:naweza|niweze|nataka)\s+kuku-?(?:pa|patia|tumia|ambia|tajia|somea)|(?:can|should|shall|may)\s+i\s+(?:give|send|tell|share|read)\s+(?:you|u)|let\s+me\s+(?:give|send|tell|share|read)\s+(?:you|u))";

/// What an offer may name: the secrets (not a bare "siri" or "code": "nikuambie siri" is a secret, not a PIN)
/// and a card's number or details.
const OFFERED_NAME: &str = r"(?:(?:m-?pesa\s+)?pin|pini|p\.i\.n|nenosiri|neno\s+(?:la\s+)?siri|nywila|nywira|password|pasword|passcode|otp|o\.t\.p|one[- ]time\s+(?:code|password|pin)|cvv2?|cvc|(?:namba|nambari)\s+(?:yangu\s+)?ya\s+siri|msimbo\s+wa\s+siri|verification\s+code|security\s+code|(?:namba|nambari|tarakimu)\s+tatu\s+za\s+nyuma|card\s+(?:number|no|details|namba)|(?:namba|nambari|details|taarifa)\s+(?:za\s+|ya\s+)(?:kadi|card))";

/// Whether the turn offers to give a secret or a card's number, with or without the value.
fn offers_to_tell(text: &str) -> bool {
    re!(&format!(
        r"(?i)\b{OFFER}\b(?:\W+\w+){{0,6}}?\W+{OFFERED_NAME}\b"
    ))
    .is_match(text)
        || re!(&format!(
            r"(?i)\b{OFFERED_NAME}\b(?:\W+\w+){{0,4}}?\W+{OFFER}\b"
        ))
        .is_match(text)
}

/// Names whose value may be a word (`nywila yangu ni simba`).
const PASSWORD_NAME: &str =
    r"(?:nenosiri|neno\s+(?:la\s+)?siri|nywila|nywira|password|pasword|passwad|passcode)";

/// Digit words and number words, as speech recognition writes a spoken code.
const NUMBER_WORD: &str = r"(?:sifuri|sufuri|ziro|zero|moja|mbili|tatu|nne|tano|sita|saba|nane|tisa|kumi|ishirini|thelathini|arobaini|hamsini|sitini|sabini|themanini|tisini|mia|elfu|one|two|three|four|five|six|seven|eight|nine|oh)";

/// Up to ten words (and separators) between a secret's name and its value: `PIN yangu ya M-Pesa ni: 1234`.
const GAP: &str = r"(?:[\s:,=.-]+[^\s\d:,=.-]+){0,10}?[\s:,=.-]*";

/// Words between a name and a value that make the number something else (a till or business number, a promotion).
const NOT_A_SECRET: &str = r"(?i)\b(?:biashara|malipo|kampuni|till|paybill|promo|ofa|offer|akaunti|account|mara|shilingi|tsh|ksh|elfu|laki)\b";

/// Words that follow "nywila ni" without being a password.
const NOT_A_PASSWORD: [&str; 24] = [
    "gani",
    "ipi",
    "nini",
    "ngumu",
    "mpya",
    "sahihi",
    "ndefu",
    "fupi",
    "siri",
    "kosa",
    "imefungwa",
    "sawa",
    "nzuri",
    "mbaya",
    "what",
    "wrong",
    "correct",
    "new",
    "the",
    "not",
    "hiyo",
    "hii",
    "kitu",
    "tofauti",
];

fn value() -> String {
    format!(
        r"(?:\d(?:[\s-]?\d){{2,}}|[a-z]+\d[\w@#$-]*|\d+[a-z][\w@#$-]*|{NUMBER_WORD}(?:[\s,-]+(?:na\s+)?{NUMBER_WORD})+)"
    )
}

/// The spans of secret values a turn offers (empty when it offers none).
pub fn offered(text: &str) -> Vec<Range<usize>> {
    // Every pattern ignores case, so the spans are the caller's own text's.
    let named = re!(&format!(
        r"(?i)\b(?P<name>{SECRET_NAME})\b(?P<gap>{GAP})(?P<value>{})\b",
        value()
    ));
    let first = re!(&format!(
        r"(?i)\b(?P<value>{})\s*(?:ndiyo|ndio|ni|is|ndo)\s+(?:\w+\s+){{0,2}}{SECRET_NAME}\b",
        value()
    ));
    let glued = re!(r"(?i)\b(?:pin|otp|cvv)(?P<value>\d{3,8})\b");
    // A card's number: 15 to 19 digits, spaced or not, named as a card's (an account's number may be as long).
    let card =
        re!(r"(?i)\b(?:card|kadi)\b(?:\W+[^\W\d]+){0,4}?\W+(?P<value>\d(?:[\s-]?\d){14,18})\b");
    let password = re!(&format!(
        r#"(?i)\b{PASSWORD_NAME}(?:\s+(?:yangu|langu|yako|lako|my|your|ya\s+\S+|wa\s+\S+|la\s+\S+)){{0,3}}\s*(?:ni|is|:|=|ilikuwa|was)\s*["'“]?(?P<value>[^\s"'”,.?!]+)"#
    ));
    let not_a_secret = re!(NOT_A_SECRET);
    let whose = re!(
        r"(?i)^[\s:,=.-]*(?:ya|wa|la|of|for)\s+(?:(?:akaunti|account|kadi|card|app|programu|simu)\s+)+(?:(?:yangu|yako|my|your)\s+)?"
    );
    let mut spans = Vec::new();
    for caps in named.captures_iter(text) {
        let digits: String = caps["value"]
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect();
        // "PIN ya akaunti yangu ni 4821": the account's PIN, not an account number (a plain "code" keeps the
        // doubt: "code ya akaunti" may name the account's number).
        let gap = &caps["gap"];
        let name = caps["name"].to_lowercase();
        let gap = match name.contains("code") || name.contains("msimbo") {
            true => gap,
            false => whose.find(gap).map_or(gap, |m| &gap[m.end()..]),
        };
        if !not_a_secret.is_match(gap)
            && !super::super::slots::is_phone(digits.trim_start_matches('+'))
        {
            spans.push(caps.name("value").map(|m| m.range()));
        }
    }
    let found = first.captures_iter(text).chain(glued.captures_iter(text));
    for caps in found.chain(card.captures_iter(text)) {
        spans.push(caps.name("value").map(|m| m.range()));
    }
    for caps in password.captures_iter(text) {
        let Some(value) = caps.name("value") else {
            continue;
        };
        if !NOT_A_PASSWORD.contains(&value.as_str().to_lowercase().as_str()) {
            spans.push(Some(value.range()));
        }
    }
    let mut spans: Vec<Range<usize>> = spans.into_iter().flatten().collect();
    spans.sort_by_key(|r| r.start);
    // Overlapping finds (a password that is also a mixed code) become one span.
    let mut merged: Vec<Range<usize>> = Vec::new();
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

fn digest(digits: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(digits.as_bytes()).into()
}

/// Digests of the digits of every value the turn offers (digits, spaced digits, or digit words), to recognise
/// them later without keeping them.
pub fn digests(text: &str) -> Vec<[u8; 32]> {
    offered(text)
        .into_iter()
        .filter_map(|span| text.get(span))
        .flat_map(|value| {
            let written: String = value.chars().filter(char::is_ascii_digit).collect();
            let said: String = super::super::numbers::digit_strings(value).concat();
            [written, said]
        })
        .filter(|d| d.len() >= 3)
        .map(|d| digest(&d))
        .collect()
}

/// Whether a reply says one of the offered values (as digits, spaced or not).
pub fn says_any(reply: &str, offered: &[[u8; 32]]) -> bool {
    if offered.is_empty() {
        return false;
    }
    super::super::numbers::digit_strings(reply)
        .iter()
        .map(|d| d.replace('+', ""))
        .any(|d| {
            (3..=d.len()).any(|len| {
                (0..=d.len() - len).any(|at| offered.contains(&digest(&d[at..at + len])))
            })
        })
}

/// Whether the turn offers a secret, or to give one.
pub fn offers(text: &str) -> bool {
    !offered(text).is_empty() || offers_to_tell(text)
}

/// The turn with every offered value, every digit and every run of three or more spoken digits masked.
pub fn mask(text: &str) -> String {
    let mut out = text.to_string();
    for span in offered(text).into_iter().rev() {
        out.replace_range(span, "****");
    }
    out = re!(&format!(
        r"(?i)\b{NUMBER_WORD}(?:[\s,-]+(?:na\s+)?{NUMBER_WORD}){{2,}}\b"
    ))
    .replace_all(&out, "****")
    .into_owned();
    re!(r"\d").replace_all(&out, "*").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_every_form() {
        for text in [
            "PIN yangu ni 1234",
            "Siri yangu ya M-Pesa ni 0000",
            "pini yangu ni 6 6 6 1",
            "Nywila yangu ni simba2024",
            "nywila yangu ni mamba",
            "namba ya siri ni nne tano sita saba",
            "otp ni 482913",
            "code niliyotumiwa ni 553201",
            "cvv ni 123",
            "0000 ndio pin yangu",
            "my pin is 4321",
            "pin1234",
            "PIN yangu ni elfu moja mia tatu",
            "namba ya siri ya akaunti yangu kwenye app ni 9087",
            "PIN ya kadi yangu ni 4455",
            "Nikupe PIN yangu ili uthibitishe muamala?",
            "Nikutumie CVV? ni 889",
            "nikusomee namba ya kadi yangu?",
            "niku-send OTP niliyopokea?",
            "nikikupa password yangu utanisaidia?",
            "can I give you my pin so you check",
            "PIN yangu nikutajie?",
            "card number ni 4532 1188 7766 0021",
            "namba ya card ni 4000-1234-5678-9010 unaweza kulipia",
        ] {
            assert!(offers(text), "{text}");
        }
        for text in [
            "nimesahau PIN yangu",
            "nataka kubadilisha nywila",
            "nataka kutuma 5000 kwa 0712345678",
            "nimekosea PIN mara tatu",
            "akaunti yangu ni 0123456789",
            "code ya biashara ni 123456",
            "nywila yangu ni ngumu kukumbuka",
            "code ya akaunti yangu ni 0123456789",
            "PIN ya akaunti imefungwa, akaunti yangu ni 0123456789",
            "nikuambie siri moja kuhusu mpira",
            "sitakupa PIN yangu, nataka tu kuibadilisha",
            "I won't give you my PIN, I just want to reset it",
            "mtu ananiomba PIN yangu, nimpe?",
            "nitumie 5000 kwa 0712345678 na 0755123456",
            "salio la akaunti 2001 3344 5566 7788",
        ] {
            assert!(!offers(text), "{text}");
        }
    }

    #[test]
    fn masking_leaves_no_secret() {
        assert_eq!(mask("PIN yangu ni 1234"), "PIN yangu ni ****");
        assert_eq!(mask("nywila yangu ni mamba"), "nywila yangu ni ****");
        assert_eq!(
            mask("Nywila yangu ni Simba2024, PIN ni 1234"),
            "Nywila yangu ni ****, PIN ni ****"
        );
        assert!(!mask("pini ni sita sita sita moja").contains("sita"));
        assert!(!mask("pini ni 6 6 6 1").contains('6'));
    }
}
