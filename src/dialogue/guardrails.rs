//! Guardrails every backend's turns pass through: emergencies first, secrets never asked for nor repeated,
//! no diagnoses and no doses where the scenario says so, and the author's own blocked patterns.

use super::safety::SafetyRules;
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
    let rules = scenario.safety.current();
    let fallback = || scenario.fallback.first().cloned().unwrap_or_default();
    let safe = || g.safe_reply.clone().unwrap_or_else(fallback);
    if g.secrets && (rules.secrets.asks_for(reply) || repeats_secret(&rules, reply, user_text)) {
        return Some((
            Blocked::Secret,
            g.secret_warning.clone().unwrap_or_else(safe),
        ));
    }
    if g.medical && rules.medical_advice(reply) {
        return Some((
            Blocked::Medical,
            g.medical_notice.clone().unwrap_or_else(safe),
        ));
    }
    // Compiled once; patterns that do not compile (refused at load) block every reply rather than none.
    let blocked = match &g.compiled(&rules).blocked {
        Some(patterns) => patterns.iter().any(|re| re.is_match(reply)),
        None => true,
    };
    if blocked {
        return Some((Blocked::Pattern, safe()));
    }
    None
}

/// A reply containing a value the user offered as a secret (or any code of three or more digits of a turn
/// that offered one).
fn repeats_secret(rules: &SafetyRules, reply: &str, user_text: &str) -> bool {
    let offered = rules.secrets.offered(user_text);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn asks_for_secret(reply: &str) -> bool {
        SafetyRules::built_in().secrets.asks_for(reply)
    }

    fn medical_advice(reply: &str) -> bool {
        SafetyRules::built_in().medical_advice(reply)
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
