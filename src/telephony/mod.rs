//! Call control on the telephone network: putting a call through to people, and hanging up. A realtime session
//! that carries a phone call (a Twilio Media Stream, or a socket whose client names the call's sid) asks its
//! [`CallControl`] to act on the call; one implementation per carrier ([`twilio::TwilioCalls`], through
//! Twilio's REST API).

pub mod twilio;

use std::collections::BTreeMap;

/// What is known of the call a session carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallInfo {
    /// The carrier's id of the call (Twilio's `CA…`).
    pub call_sid: Option<String>,
    /// The carrier account the call belongs to (Twilio's `AC…`), when the stream said it.
    pub account_sid: Option<String>,
    /// The caller's number, when known.
    pub caller: Option<String>,
    /// Values the call was started with (Twilio `customParameters`, ConvAI `dynamic_variables`), for scenario
    /// templates; names starting `secret__` reach actions only.
    pub variables: BTreeMap<String, String>,
}

impl CallInfo {
    /// The variables scenario templates and actions may use: those the call was started with, and
    /// `system__caller_id` and `system__call_sid` when known.
    pub fn template_variables(&self) -> BTreeMap<String, String> {
        let mut variables = self.variables.clone();
        let system = [
            ("system__caller_id", &self.caller),
            ("system__call_sid", &self.call_sid),
        ];
        for (name, value) in system {
            if let Some(value) = value {
                variables.insert(name.to_string(), value.clone());
            }
        }
        variables
    }
}

/// Acts on phone calls.
#[async_trait::async_trait]
pub trait CallControl: Send + Sync {
    /// Whether this call is one it can act on (it has the call's id and the means to reach the carrier).
    fn reaches(&self, call: &CallInfo) -> bool;
    /// Put the call through to `to` (a phone number or a `sip:` address).
    async fn transfer(&self, call: &CallInfo, to: &str) -> Result<(), String>;
    /// End the call.
    async fn hang_up(&self, call: &CallInfo) -> Result<(), String>;
}

/// Whether a carrier id (a call or an account sid) is safe to put in a URL path: letters and digits, 2 to 64.
pub fn plain_id(id: &str) -> bool {
    (2..=64).contains(&id.len()) && id.chars().all(|c| c.is_ascii_alphanumeric())
}
