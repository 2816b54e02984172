//! Guardrails every backend's turns pass through: emergencies first, secrets never asked for nor repeated,
//! no diagnoses and no doses where the scenario says so, and the author's own blocked patterns.

use super::safety::secrets::{self, SECRET_NAME as SECRET};
use super::scenario::Scenario;

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
    // Compiled once; patterns that do not compile (refused at load) block every reply rather than none.
    let blocked = match &g.compiled().blocked {
        Some(patterns) => patterns.iter().any(|re| re.is_match(reply)),
        None => true,
    };
    if blocked {
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

/// A reply containing a value the user offered as a secret (or any code of three or more digits of a turn
/// that offered one).
fn repeats_secret(reply: &str, user_text: &str) -> bool {
    let offered = secrets::offered(user_text);
    if offered.is_empty() {
        return false;
    }
    let lower_reply = reply.to_lowercase();
    offered
        .iter()
        .filter_map(|span| user_text.get(span.clone()))
        .chain(re!(r"\d{3,}").find_iter(user_text).map(|m| m.as_str()))
        .any(|value| lower_reply.contains(&value.to_lowercase()))
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
