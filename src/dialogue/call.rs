//! A scenario's `[call]`: how a live call (a realtime socket or a phone call) handles a silent caller and a call
//! that runs too long. HTTP turns have no call and ignore it.

use serde::Deserialize;

/// `[call]` of a scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CallSettings {
    /// Seconds of silence from the caller, after the agent has finished speaking, before a re-prompt (0: never).
    pub silence_reprompt_seconds: u64,
    /// Re-prompts before the call is ended for silence.
    pub silence_reprompts: u32,
    /// What the agent says to a silent caller.
    pub silence_reprompt: String,
    /// What the agent says before it ends a call for silence.
    pub silence_goodbye: String,
    /// The longest a call may last before the agent closes it politely (0: only the server's own limit).
    pub max_call_seconds: u64,
    /// What the agent says when it closes a call that ran too long.
    pub max_call_closing: String,
    /// Intents after whose reply the agent hangs up (`goodbye`): the call ends once the reply has been heard.
    pub end_after: Vec<String>,
    /// Where calls are put through to, per intent or safety outcome.
    pub transfers: Vec<super::transfer::TransferRule>,
    /// Said when a transfer failed twice; the call goes on with the agent.
    pub transfer_failed: String,
    /// Said when the caller declined a transfer.
    pub transfer_declined: String,
    /// A call record's outcome is `success` when any of these happened in the call: an intent or a safety
    /// outcome was answered, `done:ACTION` (an action succeeded) or `failed:ACTION`, or the call ended so
    /// (`farewell`, `transferred`, `silence`…)…
    pub success_on: Vec<String>,
    /// …and `failure` when any of these did (they win): by default a call ended for `silence` or a
    /// `transfer_failed`.
    pub failure_on: Vec<String>,
    /// At a flow's confirm step, what a key pressed stands for: `{ "1" = "ndiyo", "2" = "hapana" }` by default.
    pub confirm_keys: std::collections::BTreeMap<String, String>,
}

impl Default for CallSettings {
    fn default() -> Self {
        Self {
            silence_reprompt_seconds: 8,
            silence_reprompts: 2,
            silence_reprompt: "Bado uko nami? Niko hapa, endelea tu.".into(),
            silence_goodbye: "Sijakusikia kwa muda, kwa hiyo nitakata simu sasa. Karibu tena wakati wowote. Kwaheri!"
                .into(),
            max_call_seconds: 0,
            max_call_closing:
                "Samahani, muda wa simu hii umeisha. Tafadhali piga tena kama bado unahitaji msaada. Kwaheri!".into(),
            end_after: Vec::new(),
            transfers: Vec::new(),
            transfer_failed: "Samahani, sikuweza kukuunganisha sasa hivi. Bado niko nawe; niambie nikusaidie vipi, au jaribu tena baadaye."
                .into(),
            transfer_declined: "Sawa, sitakuunganisha. Niko hapa; niambie nikusaidie vipi.".into(),
            success_on: Vec::new(),
            failure_on: vec!["silence".into(), "transfer_failed".into()],
            confirm_keys: [("1", "ndiyo"), ("2", "hapana")]
                .into_iter()
                .map(|(key, words)| (key.to_string(), words.to_string()))
                .collect(),
        }
    }
}

/// What a call's outcome rules may name besides the scenario's intents.
pub const OUTCOME_MARKS: [&str; 11] = [
    "emergency",
    "crisis",
    "fallback",
    "secret",
    "repeat",
    "silence",
    "max_duration",
    "farewell",
    "transferred",
    "transfer_failed",
    "disconnected",
];

/// The longest silence before a re-prompt, and the most re-prompts, a scenario may set.
pub const MAX_REPROMPT_SECONDS: u64 = 120;
/// The most re-prompts before the call ends.
pub const MAX_REPROMPTS: u32 = 5;

impl CallSettings {
    /// The first problem with the settings, and the key it is at; `intents` and `actions` are the scenario's.
    pub fn problem(&self, intents: &[&str], actions: &[&str]) -> Option<(String, String)> {
        if self.silence_reprompt_seconds > MAX_REPROMPT_SECONDS {
            return Some((
                "silence_reprompt_seconds".into(),
                format!("call: silence_reprompt_seconds must be at most {MAX_REPROMPT_SECONDS}"),
            ));
        }
        if self.silence_reprompts > MAX_REPROMPTS {
            return Some((
                "silence_reprompts".into(),
                format!("call: silence_reprompts must be at most {MAX_REPROMPTS}"),
            ));
        }
        for (key, text) in [
            ("silence_reprompt", &self.silence_reprompt),
            ("silence_goodbye", &self.silence_goodbye),
            ("max_call_closing", &self.max_call_closing),
            ("transfer_failed", &self.transfer_failed),
            ("transfer_declined", &self.transfer_declined),
        ] {
            if text.trim().is_empty() {
                return Some((key.into(), format!("call: {key} must not be empty")));
            }
        }
        if let Some(unknown) = self
            .end_after
            .iter()
            .find(|id| !intents.contains(&id.as_str()))
        {
            return Some((
                "end_after".into(),
                format!(
                    "call: end_after names {unknown:?}, which is not an intent of the scenario"
                ),
            ));
        }
        for (key, names) in [
            ("success_on", &self.success_on),
            ("failure_on", &self.failure_on),
        ] {
            let unknown = names.iter().find(|name| {
                let action = name
                    .strip_prefix("done:")
                    .or_else(|| name.strip_prefix("failed:"));
                match action {
                    Some(action) => !actions.contains(&action),
                    None => {
                        !intents.contains(&name.as_str()) && !OUTCOME_MARKS.contains(&name.as_str())
                    }
                }
            });
            if let Some(unknown) = unknown {
                return Some((
                    key.into(),
                    format!(
                        "call: {key} names {unknown:?}, which is neither an intent of the scenario, done:ACTION or failed:ACTION of one of its actions, nor one of {}",
                        OUTCOME_MARKS.join(", ")
                    ),
                ));
            }
        }
        for (key, words) in &self.confirm_keys {
            let keyed = !key.is_empty()
                && key.len() <= 4
                && key.chars().all(|c| c.is_ascii_digit() || c == '*');
            if !keyed || words.trim().is_empty() {
                return Some((
                    "confirm_keys".into(),
                    format!("call: confirm_keys maps keys (1 to 4 of 0-9 and *) to words; {key:?} = {words:?} is not one"),
                ));
            }
        }
        super::transfer::problem(&self.transfers, intents)
    }
}
