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
        }
    }
}

/// The longest silence before a re-prompt, and the most re-prompts, a scenario may set.
pub const MAX_REPROMPT_SECONDS: u64 = 120;
/// The most re-prompts before the call ends.
pub const MAX_REPROMPTS: u32 = 5;

impl CallSettings {
    /// The first problem with the settings, and the key it is at; `intents` are the scenario's intent ids.
    pub fn problem(&self, intents: &[&str]) -> Option<(String, String)> {
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
        super::transfer::problem(&self.transfers, intents)
    }
}
