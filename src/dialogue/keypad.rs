//! Keys pressed on a call's keypad (DTMF): digits for the slot a flow is asking for, or one key that stands for an
//! intent ("Bonyeza 1 kwa salio"). A keypad secret (a slot with `secret = true`, a PIN) is never kept as digits:
//! its slot holds `sha256:` and the digest, the safety layer keeps the digest so no reply can say it, and the
//! history, the transcript and the logs see only `(vitufe) ****`.

use super::scenario::{Scenario, Slot, SlotInput, Step};
use super::{converse, DialogueBackend, DialogueError, Reply, Role, Session};

/// The most keys one keyed turn may carry.
pub const MAX_KEYS: usize = 32;

/// How a keyed turn is written where the digits must not be: one star per key.
pub fn masked(keys: &str) -> String {
    format!("(vitufe) {}", "*".repeat(keys.chars().count()))
}

/// A keyed secret's value as a slot keeps it; none when the keys cannot be taken (not digits, too short or too
/// long).
pub fn secret_value(slot: &Slot, keys: &str) -> Option<String> {
    use sha2::Digest as _;
    let [low, high] = slot.digits.unwrap_or(super::slots::CODE_DIGITS);
    let digits = keys.chars().filter(char::is_ascii_digit).count();
    if digits != keys.chars().count() || !(low..=high).contains(&digits) {
        return None;
    }
    let digest = sha2::Sha256::digest(keys.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("sha256:{hex}"))
}

/// The slot the session's flow is asking for now, if any.
fn asked_slot<'a>(scenario: &'a Scenario, session: &Session) -> Option<(&'a str, &'a Slot)> {
    let active = session.flow.as_ref()?;
    let flow = scenario.flow(&active.flow)?;
    match flow.steps.get(active.step)? {
        Step::Collect(name) => scenario
            .slots
            .get_key_value(name)
            .map(|(n, s)| (n.as_str(), s)),
        _ => None,
    }
}

/// At a flow's confirm step, the words a key stands for (`[call] confirm_keys`: 1 for yes and 2 for no unless the
/// scenario says otherwise).
fn confirm_key<'a>(scenario: &'a Scenario, session: &Session, keys: &str) -> Option<&'a str> {
    let active = session.flow.as_ref()?;
    let flow = scenario.flow(&active.flow)?;
    match flow.steps.get(active.step)? {
        Step::Confirm(_) => scenario.call.confirm_keys.get(keys).map(String::as_str),
        _ => None,
    }
}

/// Answer one turn: keys pressed on a call's keypad, or words.
pub async fn answer(
    scenario: &Scenario,
    session: &mut Session,
    text: &str,
    keys: bool,
    backend: &dyn DialogueBackend,
    fallback: Option<&dyn DialogueBackend>,
) -> Result<Reply, DialogueError> {
    match keys {
        true => converse_keys(scenario, session, text, backend, fallback).await,
        false => converse(scenario, session, text, backend, fallback).await,
    }
}

/// Answer one keyed turn.
pub async fn converse_keys(
    scenario: &Scenario,
    session: &mut Session,
    keys: &str,
    backend: &dyn DialogueBackend,
    fallback: Option<&dyn DialogueBackend>,
) -> Result<Reply, DialogueError> {
    session.keypad = true;
    if let Some((name, slot)) = asked_slot(scenario, session) {
        if slot.secret {
            return keyed_secret(scenario, session, name, slot, keys, backend).await;
        }
        // Digits for an ordinary slot are a turn like any other: the slot's extractor reads them.
        return converse(scenario, session, keys, backend, fallback).await;
    }
    if let Some(words) = confirm_key(scenario, session, keys) {
        return converse(scenario, session, words, backend, fallback).await;
    }
    let intent = scenario
        .intents
        .iter()
        .find(|intent| intent.key.as_deref() == Some(keys));
    match intent.and_then(|i| i.examples.first()) {
        // A key stands for its intent, as if the caller had asked for it in the words of its first example.
        Some(asked) => converse(scenario, session, asked, backend, fallback).await,
        None => {
            let text = scenario.fallback.first().cloned().unwrap_or_default();
            session.history.push((Role::User, masked(keys)));
            session.history.push((Role::Agent, text.clone()));
            Ok(Reply {
                text,
                outcome: "fallback".into(),
                ..Reply::default()
            })
        }
    }
}

/// A keypad secret for the slot being asked for: kept as its digest, then the flow goes on.
async fn keyed_secret(
    scenario: &Scenario,
    session: &mut Session,
    name: &str,
    slot: &Slot,
    keys: &str,
    backend: &dyn DialogueBackend,
) -> Result<Reply, DialogueError> {
    let Some(value) = secret_value(slot, keys) else {
        let again = slot.invalid.clone().unwrap_or_else(|| slot.prompt.clone());
        session.history.push((Role::User, masked(keys)));
        session.history.push((Role::Agent, again.clone()));
        return Ok(Reply {
            text: again,
            outcome: session
                .flow
                .as_ref()
                .map(|f| f.intent.clone())
                .unwrap_or_default(),
            ..Reply::default()
        });
    };
    use sha2::Digest as _;
    session
        .offered
        .push(sha2::Sha256::digest(keys.as_bytes()).into());
    session.slots.insert(name.to_string(), value);
    // The flow goes on from the filled slot; "#" fills nothing and asks for nothing.
    let reply = backend.respond(scenario, session, "#").await?;
    session.history.push((Role::User, masked(keys)));
    session.history.push((Role::Agent, reply.text.clone()));
    Ok(reply)
}

/// Whether a step collecting `slot` is left out for a conversation without a keypad.
pub fn left_out(slot: Option<&Slot>, keypad: bool) -> bool {
    !keypad && slot.is_some_and(|s| s.input == SlotInput::Keypad)
}
