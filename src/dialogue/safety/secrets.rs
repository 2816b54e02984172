//! Secrets a caller offers: a PIN, one-time code, password, CVV or mobile-money PIN, in digits, spaced digits,
//! digits or numbers in words, or a password word; a card number (15 to 19 digits); or an offer to give one, even
//! as a question and without the value ("Nikupe PIN yangu?", "Nikutumie OTP?", "Nikusomee namba ya kadi?").
//! Offered secrets are answered with a warning and masked before the turn is stored, logged, sent to a backend or
//! echoed. The vocabulary is the `[secrets]` table of the safety rules; the shapes of values are here.

use std::ops::Range;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::rules::{alternatives, RulesError, Source};

/// Up to ten words (and separators) between a secret's name and its value: `PIN yangu ya M-Pesa ni: 1234`.
const GAP: &str = r"(?:[\s:,=.-]+[^\s\d:,=.-]+){0,10}?[\s:,=.-]*";

/// The `[secrets]` table of the rules file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SecretsFile {
    names: Vec<Spanned<String>>,
    wallets: Vec<Spanned<String>>,
    offered: Vec<Spanned<String>>,
    offers: Vec<Spanned<String>>,
    passwords: Vec<Spanned<String>>,
    number_words: Vec<String>,
    not_a_secret: Vec<String>,
    not_a_password: Vec<String>,
    asks: Vec<String>,
    write: Vec<String>,
    here: Vec<String>,
    warnings: Vec<String>,
}

/// Plain words or phrases as one alternative group; a word ending in `-` stands for every word it begins.
fn words(list: &[String]) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|w| match w.strip_suffix('-') {
            Some(start) => format!(r"{}\w*", regex::escape(start)),
            None => w
                .split_whitespace()
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+"),
        })
        .collect();
    format!("(?:{})", parts.join("|"))
}

/// The secret vocabulary, compiled.
#[derive(Debug)]
pub struct SecretRules {
    entries: usize,
    named: Regex,
    first: Regex,
    password: Regex,
    not_a_secret: Regex,
    not_a_password: Vec<String>,
    offer_then_name: Regex,
    /// A secret's name anywhere.
    name: Regex,
    /// A turn that is a bare code (three to six digits, written or said), perhaps after "ni".
    bare: Regex,
    name_then_offer: Regex,
    spoken_run: Regex,
    ask: Regex,
    write_here: Regex,
    question: Regex,
    warning: Regex,
}

impl SecretRules {
    pub(super) fn compile(source: Source, file: SecretsFile) -> Result<Self, RulesError> {
        let wallets = alternatives(source, &file.wallets)?;
        let names = alternatives(source, &file.names)?;
        let secret = format!(r"(?:(?:{wallets})\s+)?{names}");
        let offered = alternatives(source, &file.offered)?;
        let offer = alternatives(source, &file.offers)?;
        let passwords = alternatives(source, &file.passwords)?;
        let number = words(&file.number_words);
        let value = format!(
            r"(?:\d(?:[\s-]?\d){{2,}}|[a-z]+\d[\w@#$-]*|\d+[a-z][\w@#$-]*|{number}(?:[\s,-]+(?:na\s+)?{number})+)"
        );
        let compile = |pattern: String| {
            Regex::new(&pattern)
                .map_err(|e| source.fail(0, format!("[secrets] do not compile together: {e}")))
        };
        let entries =
            file.names.len() + file.offered.len() + file.offers.len() + file.passwords.len();
        Ok(Self {
            entries,
            named: compile(format!(
                r"(?i)\b(?P<name>{secret})\b(?P<gap>{GAP})(?P<value>{value})\b"
            ))?,
            first: compile(format!(
                r"(?i)\b(?P<value>{value})\s*(?:ndiyo|ndio|ni|is|ndo)\s+(?:\w+\s+){{0,2}}{secret}\b"
            ))?,
            password: compile(format!(
                r#"(?i)\b{passwords}(?:\s+(?:yangu|langu|yako|lako|my|your|ya\s+\S+|wa\s+\S+|la\s+\S+)){{0,3}}\s*(?:ni|is|:|=|ilikuwa|was)\s*["'“]?(?P<value>[^\s"'”,.?!]+)"#
            ))?,
            not_a_secret: compile(format!(r"(?i)\b{}\b", words(&file.not_a_secret)))?,
            not_a_password: file
                .not_a_password
                .iter()
                .map(|w| w.to_lowercase())
                .collect(),
            name: compile(format!(r"(?i)\b{secret}\b"))?,
            bare: compile(format!(
                r"(?i)^[\s,.:]*(?:(?:ni|ndiyo|ndio|hii|yenyewe|it's|its|is)[\s,.:]+)*(?P<value>\d(?:[\s-]?\d){{2,5}}|{number}(?:[\s,-]+(?:na\s+)?{number}){{2,5}})\b"
            ))?,
            offer_then_name: compile(format!(r"(?i)\b{offer}\b(?:\W+\w+){{0,6}}?\W+{offered}\b"))?,
            name_then_offer: compile(format!(r"(?i)\b{offered}\b(?:\W+\w+){{0,4}}?\W+{offer}\b"))?,
            spoken_run: compile(format!(
                r"(?i)\b{number}(?:[\s,-]+(?:na\s+)?{number}){{2,}}\b"
            ))?,
            ask: compile(format!(
                r"(?i)\b{}\b[^.?!]{{0,40}}\b{secret}\b",
                words(&file.asks)
            ))?,
            write_here: compile(format!(
                r"(?i)\b{}\b[^.?!]{{0,20}}\b{secret}\b[^.?!]{{0,20}}\b{}\b",
                words(&file.write),
                words(&file.here)
            ))?,
            question: compile(format!(
                r"(?i)\b{secret}\b\s+(?:yako|lako|your)\b[^.?!]{{0,20}}(?:\bni\s+(?:nini|ipi|gani)\b|\?)|\bwhat\s+is\s+your\s+{secret}"
            ))?,
            warning: compile(format!(r"(?i)\b{}(?:\b|$)", words(&file.warnings)))?,
        })
    }

    /// How many names and offers it knows.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Whether the turn offers to give a secret or a card's number, with or without the value.
    fn offers_to_tell(&self, text: &str) -> bool {
        self.offer_then_name.is_match(text) || self.name_then_offer.is_match(text)
    }

    /// A reply that asks the user to say or send a secret. A sentence that warns against it (`usi…`, `kamwe`,
    /// `never`) is not an ask.
    pub fn asks_for(&self, reply: &str) -> bool {
        reply
            .split_inclusive(['.', '?', '!'])
            .filter(|sentence| !self.warning.is_match(sentence))
            .any(|sentence| {
                self.ask.is_match(sentence)
                    || self.write_here.is_match(sentence)
                    || self.question.is_match(sentence)
            })
    }

    /// The spans of secret values a turn offers (empty when it offers none).
    pub fn offered(&self, text: &str) -> Vec<Range<usize>> {
        // Every pattern ignores case, so the spans are the caller's own text's.
        let glued = re!(r"(?i)\b(?:pin|otp|cvv)(?P<value>\d{3,8})\b");
        // A card's number: 15 to 19 digits, spaced or not, named as a card's (an account's number may be as long).
        let card =
            re!(r"(?i)\b(?:card|kadi)\b(?:\W+[^\W\d]+){0,4}?\W+(?P<value>\d(?:[\s-]?\d){14,18})\b");
        let whose = re!(
            r"(?i)^[\s:,=.-]*(?:ya|wa|la|of|for)\s+(?:(?:akaunti|account|kadi|card|app|programu|simu)\s+)+(?:(?:yangu|yako|my|your)\s+)?"
        );
        let mut spans = Vec::new();
        for caps in self.named.captures_iter(text) {
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
            if !self.not_a_secret.is_match(gap)
                && !super::super::slots::is_phone(digits.trim_start_matches('+'))
            {
                spans.push(caps.name("value").map(|m| m.range()));
            }
        }
        let found = self
            .first
            .captures_iter(text)
            .chain(glued.captures_iter(text));
        for caps in found.chain(card.captures_iter(text)) {
            spans.push(caps.name("value").map(|m| m.range()));
        }
        for caps in self.password.captures_iter(text) {
            let Some(value) = caps.name("value") else {
                continue;
            };
            if !self.not_a_password.contains(&value.as_str().to_lowercase()) {
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

    /// Digests of the digits of every value the turn offers (digits, spaced digits, or digit words), to recognise
    /// them later without keeping them.
    pub fn digests(&self, text: &str) -> Vec<[u8; 32]> {
        self.offered(text)
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

    /// Whether the turn names a secret (to know whether a bare code in the next turn is one).
    pub fn names(&self, text: &str) -> bool {
        self.name.is_match(text)
    }

    /// The span of the code a turn that is a bare code opens with ("ni moja mbili tatu nne", "4821").
    pub fn bare_code(&self, text: &str) -> Option<Range<usize>> {
        self.bare
            .captures(text)
            .and_then(|c| c.name("value"))
            .map(|m| m.range())
    }

    /// Digests of a bare code's digits, written or said.
    pub fn code_digests(&self, text: &str) -> Vec<[u8; 32]> {
        let Some(value) = self.bare_code(text).and_then(|span| text.get(span)) else {
            return Vec::new();
        };
        let written: String = value.chars().filter(char::is_ascii_digit).collect();
        let said: String = super::super::numbers::digit_strings(value).concat();
        [written, said]
            .into_iter()
            .filter(|d| d.len() >= 3)
            .map(|d| digest(&d))
            .collect()
    }

    /// Whether the turn offers a secret, or to give one.
    pub fn offers(&self, text: &str) -> bool {
        !self.offered(text).is_empty() || self.offers_to_tell(text)
    }

    /// The turn with every offered value, every digit and every run of three or more spoken digits masked.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for span in self.offered(text).into_iter().rev() {
            out.replace_range(span, "****");
        }
        out = self.spoken_run.replace_all(&out, "****").into_owned();
        re!(r"\d").replace_all(&out, "*").into_owned()
    }
}

fn digest(digits: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(digits.as_bytes()).into()
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

#[cfg(test)]
mod tests {
    fn rules() -> std::sync::Arc<super::super::rules::SafetyRules> {
        super::super::rules::SafetyRules::built_in()
    }

    fn offers(text: &str) -> bool {
        rules().secrets.offers(text)
    }

    fn mask(text: &str) -> String {
        rules().secrets.mask(text)
    }

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
    fn a_bare_code_after_a_secret_was_named() {
        let rules = rules();
        let secrets = &rules.secrets;
        assert!(secrets.names("pin yangu imefungwa"));
        assert!(!secrets.names("nataka kutuma pesa"));
        for text in [
            "ni moja mbili tatu nne kama unataka kuijua",
            "4821",
            "ni 4 8 2 1",
            "yenyewe ni 90210",
        ] {
            assert!(secrets.bare_code(text).is_some(), "{text}");
            assert!(!secrets.code_digests(text).is_empty(), "{text}");
        }
        for text in [
            "nataka kutuma 5000",
            "0712345678",
            "akaunti yangu ni 0123456789",
            "sawa",
        ] {
            assert!(secrets.bare_code(text).is_none(), "{text}");
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
