//! Handing a call to people: a scenario's `[[call.transfers]]` name, per intent or per safety outcome
//! (`emergency`, `crisis`), the number or SIP address a call is put through to and what the agent says first. A
//! turn whose outcome has a transfer, on a call, carries a [`TransferPlan`]: where to, and a summary of the call
//! so far for the person who takes it (intent, slots with secrets masked, the safety class).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Reply, Scenario, Session};

/// One `[[call.transfers]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferRule {
    /// The outcome it follows: an intent id, `emergency` or `crisis`.
    pub on: String,
    /// Where the call goes: a phone number (`+255…`, or a short code such as `112`) or a `sip:` address.
    pub to: String,
    /// Said after the turn's reply, before the call is put through.
    #[serde(default)]
    pub say: Option<String>,
    /// Said on a call in place of the turn's reply (when the reply tells the caller to dial a number).
    #[serde(default)]
    pub reply: Option<String>,
    /// Seconds the caller has, after hearing the reply, to decline ("hapana"); 0: put through at once.
    #[serde(default)]
    pub decline_seconds: u64,
}

/// The longest a caller may be given to decline a transfer.
pub const MAX_DECLINE_SECONDS: u64 = 30;

/// The safety outcomes a transfer may follow besides the scenario's intents.
pub const SAFETY_OUTCOMES: [&str; 2] = ["emergency", "crisis"];

/// What a call's summary says of it at a transfer (nothing of a secret but that it was given).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CallSummary {
    /// The outcome of the turn that led to the transfer (an intent, `emergency`, `crisis`).
    pub intent: String,
    /// The slots filled so far; a secret's value is `****`.
    pub slots: BTreeMap<String, String>,
    /// `emergency` or `crisis` when the safety layer answered the call, else none.
    pub safety: Option<String>,
    /// Caller turns so far.
    pub turns: usize,
}

/// A transfer the call should make once the reply has been heard.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferPlan {
    /// Where to.
    pub to: String,
    /// Seconds the caller has to decline it.
    pub decline_seconds: u64,
    /// The call so far.
    pub summary: CallSummary,
}

/// What is wrong with a transfer destination, if anything.
pub fn destination_problem(to: &str) -> Option<String> {
    if let Some(address) = to.strip_prefix("sip:") {
        let fine = !address.is_empty()
            && address.len() <= 200
            && address.contains('@')
            && address
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "@.-_+:;=%".contains(c));
        return (!fine).then(|| format!("{to:?} is not a sip: address (sip:user@host)"));
    }
    let digits = to.strip_prefix('+').unwrap_or(to);
    let fine = (3..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit());
    (!fine).then(|| {
        format!("{to:?} is not a phone number (+ and 7 to 15 digits, or a short code of 3 or more digits) or a sip: address")
    })
}

/// The first problem with a scenario's transfers, and text of the file it is at.
pub fn problem(rules: &[TransferRule], intents: &[&str]) -> Option<(String, String)> {
    let mut seen = std::collections::BTreeSet::new();
    for rule in rules {
        if !SAFETY_OUTCOMES.contains(&rule.on.as_str()) && !intents.contains(&rule.on.as_str()) {
            return Some((
                format!("on = {:?}", rule.on),
                format!(
                    "call.transfers: on = {:?} is not an intent of the scenario, emergency or crisis",
                    rule.on
                ),
            ));
        }
        if !seen.insert(rule.on.as_str()) {
            return Some((
                format!("on = {:?}", rule.on),
                format!("call.transfers: {:?} has two transfers", rule.on),
            ));
        }
        if let Some(problem) = destination_problem(&rule.to) {
            return Some((
                format!("to = {:?}", rule.to),
                format!("call.transfers: to = {problem}"),
            ));
        }
        if rule.decline_seconds > MAX_DECLINE_SECONDS {
            return Some((
                format!("decline_seconds = {}", rule.decline_seconds),
                format!("call.transfers: decline_seconds must be at most {MAX_DECLINE_SECONDS}"),
            ));
        }
        for text in [&rule.say, &rule.reply].into_iter().flatten() {
            if text.trim().is_empty() {
                return Some((
                    "[[call.transfers]]".into(),
                    "call.transfers: say and reply must not be empty".into(),
                ));
            }
        }
    }
    None
}

/// The summary of a call so far, as a transfer or a record shows it.
pub fn summary(scenario: &Scenario, session: &Session, reply: &Reply) -> CallSummary {
    let slots = session
        .slots
        .iter()
        .map(|(name, value)| {
            let secret = scenario.slots.get(name).is_some_and(|s| s.secret);
            let value = match secret || value.starts_with("sha256:") {
                true => "****".to_string(),
                false => super::shareable(&scenario.safety.current(), value),
            };
            (name.clone(), value)
        })
        .collect();
    CallSummary {
        intent: reply.outcome.clone(),
        slots,
        safety: SAFETY_OUTCOMES
            .contains(&reply.outcome.as_str())
            .then(|| reply.outcome.clone()),
        turns: session
            .history
            .iter()
            .filter(|(role, _)| *role == super::Role::User)
            .count(),
    }
}

/// On a call: the transfer a turn's reply leads to, with the reply as it is said on the call (the rule's
/// `reply` in place of it, its `say` after it).
pub fn on_call(scenario: &Scenario, session: &Session, reply: &mut Reply) -> Option<TransferPlan> {
    let rule = scenario
        .call
        .transfers
        .iter()
        .find(|rule| rule.on == reply.outcome)?;
    if let Some(instead) = &rule.reply {
        reply.text = instead.clone();
    }
    if let Some(say) = &rule.say {
        reply.text = format!("{} {say}", reply.text.trim_end());
    }
    Some(TransferPlan {
        to: rule.to.clone(),
        decline_seconds: rule.decline_seconds,
        summary: summary(scenario, session, reply),
    })
}

/// Whether the caller's words decline a transfer they were offered ("hapana", "sitaki", "usiniunganishe").
pub fn declines(text: &str) -> bool {
    super::intents::is_no(text)
        || super::repair::calls_off(text)
        || super::words::tokens(text)
            .iter()
            .any(|w| w.starts_with("usiniunganish") || w.starts_with("usinipeleke"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_are_numbers_short_codes_or_sip_addresses() {
        for fine in [
            "+255222199000",
            "112",
            "0800110011",
            "sip:agents@bank.example",
        ] {
            assert_eq!(destination_problem(fine), None, "{fine}");
        }
        for wrong in [
            "",
            "+",
            "12",
            "+2552221990001234",
            "tel:112",
            "sip:",
            "sip:agents",
            "0800 11",
            "sip:a@b c",
        ] {
            assert!(destination_problem(wrong).is_some(), "{wrong}");
        }
    }

    #[test]
    fn a_caller_declines_with_a_no() {
        for no in [
            "hapana",
            "Hapana, sitaki",
            "usiniunganishe",
            "acha tu",
            "no",
        ] {
            assert!(declines(no), "{no}");
        }
        for yes in ["ndiyo haraka", "sawa", "moto unawaka bado"] {
            assert!(!declines(yes), "{yes}");
        }
    }
}
