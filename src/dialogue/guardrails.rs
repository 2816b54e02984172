//! Guardrails every backend's turns pass through: emergencies first, secrets never asked for nor repeated,
//! no diagnoses and no doses where the scenario says so, and the author's own blocked patterns.

use super::scenario::Scenario;
use super::words::{forms, tokens, words_match};

/// Whether the user's words contain one of the scenario's emergency signs (every word of a sign, in any
/// verb form, anywhere in the turn).
pub fn is_emergency(scenario: &Scenario, text: &str) -> bool {
    let said: Vec<Vec<String>> = tokens(text).iter().map(|w| forms(w)).collect();
    scenario.guardrails.emergency_signs.iter().any(|sign| {
        let sign = tokens(sign);
        !sign.is_empty()
            && sign
                .iter()
                .all(|word| said.iter().any(|s| words_match(s, &forms(word))))
    })
}

const SECRET: &str = r"(?:pin(?:\s+(?:code|number|namba))?|nenosiri|neno\s+la\s+siri|nambari\s+(?:yangu\s+|yako\s+)?ya\s+siri|namba\s+(?:yangu\s+|yako\s+)?ya\s+siri|password|passcode|otp|one[- ]time\s+(?:code|password)|msimbo(?:\s+wa\s+siri)?)";

/// Up to three words (and separators) between a secret's name and its value: `PIN yangu ya M-Pesa ni: 1234`.
const GAP: &str = r"(?:[\s:,=.-]+[^\s\d:,=.-]+){0,3}?[\s:,=.-]*";
/// Digit words, as speech recognition writes a spoken code.
const SPOKEN_DIGIT: &str = r"(?:sifuri|moja|mbili|tatu|nne|tano|sita|saba|nane|tisa|zero|one|two|three|four|five|six|seven|eight|nine)";

/// Whether the user offers a PIN, password or one-time code: a secret's name with a code of four or more
/// digits (written, spaced or spoken) or a mixed value after it, or a code followed by "ndiyo PIN yangu".
pub fn offers_secret(text: &str) -> bool {
    let written = re!(&format!(
        r"(?i)\b{SECRET}\b{GAP}(?:\d(?:[\s-]?\d){{3,}}|[A-Za-z]+\d[\w-]*)"
    ));
    let glued = re!(r"(?i)\bpin\d{4,8}\b");
    let spoken = re!(&format!(
        r"(?i)\b{SECRET}\b{GAP}{SPOKEN_DIGIT}(?:[\s,]+{SPOKEN_DIGIT}){{3,}}\b"
    ));
    let digits_first = re!(&format!(
        r"(?i)\b\d{{4,8}}\b\s*(?:ndiyo|ndio|ni)\s+(?:\w+\s+){{0,2}}{SECRET}\b"
    ));
    written.is_match(text)
        || glued.is_match(text)
        || spoken.is_match(text)
        || digits_first.is_match(text)
}

/// The text with every run of digits masked: what is kept of a turn that offered a secret.
pub fn redact(text: &str) -> String {
    re!(r"\d").replace_all(text, "*").into_owned()
}

/// Why an outgoing reply was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// It asked for or repeated a secret.
    Secret,
    /// It diagnosed or named a dose.
    Medical,
    /// It matched one of the scenario's `blocked_replies`.
    Pattern,
}

/// Check a reply on its way out; `Some(replacement)` when it must not be said.
pub fn screen_reply(
    scenario: &Scenario,
    reply: &str,
    user_text: &str,
) -> Option<(Blocked, String)> {
    let g = &scenario.guardrails;
    let fallback = || scenario.fallback.first().cloned().unwrap_or_default();
    let safe = || g.safe_reply.clone().unwrap_or_else(fallback);
    if g.secrets && (asks_for_secret(reply) || repeats_secret(reply, user_text)) {
        return Some((
            Blocked::Secret,
            g.secret_warning.clone().unwrap_or_else(safe),
        ));
    }
    if g.medical && medical_advice(reply) {
        return Some((
            Blocked::Medical,
            g.medical_notice.clone().unwrap_or_else(safe),
        ));
    }
    let matches = |pattern: &String| regex::Regex::new(pattern).is_ok_and(|re| re.is_match(reply));
    if g.blocked_replies.iter().any(matches) {
        return Some((Blocked::Pattern, safe()));
    }
    None
}

/// A reply that asks the user to say or send a secret. A sentence that warns against it (`usi…`, `kamwe`,
/// `never`) is not an ask.
pub fn asks_for_secret(reply: &str) -> bool {
    let ask = re!(&format!(
        r"(?i)\b(?:nipe|nipatie|niambie|nitajie|nitumie|naomba|taja|tamka|sema|tuma|give\s+me|tell\s+me|send(?:\s+me)?|share|provide|type|enter|confirm)\b[^.?!]{{0,40}}\b{SECRET}\b"
    ));
    let write_here = re!(&format!(
        r"(?i)\b(?:andika|ingiza|weka)\b[^.?!]{{0,20}}\b{SECRET}\b[^.?!]{{0,20}}\b(?:hapa|kwangu|here)\b"
    ));
    let question = re!(&format!(
        r"(?i)\b{SECRET}\b\s+(?:yako|lako|your)\b[^.?!]{{0,20}}(?:\bni\s+(?:nini|ipi|gani)\b|\?)|\bwhat\s+is\s+your\s+{SECRET}"
    ));
    let warning = re!(
        r"(?i)\b(?:usi\w*|kamwe|never|don't|do\s+not|haitakuuliza|hatutakuuliza|hatakuuliza)\b"
    );
    reply
        .split_inclusive(['.', '?', '!'])
        .filter(|sentence| !warning.is_match(sentence))
        .any(|sentence| {
            ask.is_match(sentence) || write_here.is_match(sentence) || question.is_match(sentence)
        })
}

/// A reply containing a code of four or more digits that the user offered as a secret.
fn repeats_secret(reply: &str, user_text: &str) -> bool {
    offers_secret(user_text)
        && re!(r"\d{4,}")
            .find_iter(user_text)
            .any(|code| reply.contains(code.as_str()))
}

/// A reply that names a dose or a diagnosis.
pub fn medical_advice(reply: &str) -> bool {
    let patterns = [
        re!(
            r"(?i)\b\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|ml|milligrams?|millilitres?|milliliters?|miligramu|mililita)\b"
        ),
        re!(
            r"(?i)\b(?:\d+|moja|mbili|tatu|nusu|one|two|three|half)\s+(?:kidonge|vidonge|tembe|tablets?|capsules?|pills?)\b"
        ),
        re!(r"(?i)\b(?:kidonge|vidonge|tembe)\s+(?:\d+|kimoja|viwili|vitatu)\b"),
        re!(r"(?i)\bmara\s+(?:\d+|moja|mbili|tatu|nne)\s+(?:kwa|kila)\s+(?:siku|saa)\b"),
        re!(r"(?i)\b(?:\d+|once|twice|three)\s+times\s+(?:a|per)\s+day\b"),
        re!(
            r"(?i)\b(?:una|ana|mna|wana|unaugua|anaugua|umeambukizwa|ameambukizwa)\s+(?:ugonjwa\s+wa\s+)?(?:malaria|kisukari|kifua\s+kikuu|homa\s+ya\s+matumbo|nimonia|kipindupindu|saratani|ukimwi|vvu|pumu|typhoid|tb)\b"
        ),
        re!(
            r"(?i)\b(?:you|he|she|they|your\s+child)\s+(?:probably\s+|likely\s+|definitely\s+)?(?:have|has)\s+(?:malaria|diabetes|tuberculosis|typhoid|pneumonia|cholera|cancer|hiv|asthma)\b"
        ),
    ];
    patterns.iter().any(|p| p.is_match(reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_secrets_are_recognised() {
        for text in [
            "PIN yangu ni 1234",
            "PIN yangu mpya ni 9876",
            "otp ni 482913",
            "nenosiri langu: abc123",
            "my pin is 4321",
            "1234 ndiyo pin yangu",
        ] {
            assert!(offers_secret(text), "{text}");
        }
        for text in [
            "nimesahau PIN yangu",
            "nataka kubadilisha nenosiri",
            "nataka kutuma 5000",
        ] {
            assert!(!offers_secret(text), "{text}");
        }
        assert_eq!(redact("PIN yangu ni 1234"), "PIN yangu ni ****");
    }

    #[test]
    fn replies_asking_for_secrets_or_giving_doses_are_caught() {
        for reply in [
            "Tafadhali niambie PIN yako.",
            "PIN yako ni ipi?",
            "Please give me your OTP",
            "What is your password",
        ] {
            assert!(asks_for_secret(reply), "{reply}");
        }
        for reply in [
            "Usimwambie mtu yeyote PIN yako.",
            "Benki haitakuuliza kamwe nenosiri lako.",
            "Weka PIN mpya kwenye programu rasmi.",
        ] {
            assert!(!asks_for_secret(reply), "{reply}");
        }
        for reply in [
            "Meza 500 mg",
            "kunywa vidonge 2",
            "mara tatu kwa siku",
            "Una malaria",
            "you have malaria",
        ] {
            assert!(medical_advice(reply), "{reply}");
        }
        for reply in [
            "Dalili za malaria ni homa na kutetemeka.",
            "Mnyweshe kidogo kidogo mara kwa mara.",
            "Changanya pakiti moja na lita moja ya maji safi.",
        ] {
            assert!(!medical_advice(reply), "{reply}");
        }
    }
}
