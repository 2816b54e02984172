//! Twilio's REST API for calls: a transfer is a Calls update whose TwiML dials the destination
//! (`<Dial>+255…</Dial>`, or `<Dial><Sip>sip:…</Sip></Dial>`), a hang-up a Calls update to `Status=completed`.
//! The account's auth token comes from the settings (or the environment) and is never logged; the API's base
//! URL is a setting, so tests point it at a local server.

use std::time::Duration;

use super::{plain_id, CallControl, CallInfo};
use crate::config::TelephonySettings;

/// How long one request to Twilio may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Calls on Twilio.
pub struct TwilioCalls {
    base: String,
    account_sid: Option<String>,
    auth_token: Option<String>,
    client: reqwest::Client,
}

impl TwilioCalls {
    /// From `[telephony]`.
    pub fn new(settings: &TelephonySettings) -> Self {
        let given = |value: &str| Some(value.trim().to_string()).filter(|v| !v.is_empty());
        Self {
            base: settings.twilio_api_base.trim_end_matches('/').to_string(),
            account_sid: given(&settings.twilio_account_sid),
            auth_token: given(&settings.twilio_auth_token),
            client: crate::dialogue::actions::http_client(Some(TIMEOUT)),
        }
    }

    /// The account, its token and the call's sid, or why the call cannot be reached.
    fn credentials<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Result<(&'a str, &'a str, &'a str), String> {
        let call_sid = call
            .call_sid
            .as_deref()
            .filter(|sid| plain_id(sid))
            .ok_or("the call's sid is not known")?;
        let account = self
            .account_sid
            .as_deref()
            .or(call.account_sid.as_deref())
            .filter(|sid| plain_id(sid))
            .ok_or("no Twilio account sid: set telephony.twilio_account_sid")?;
        let token = self
            .auth_token
            .as_deref()
            .ok_or("no Twilio auth token: set telephony.twilio_auth_token")?;
        Ok((account, token, call_sid))
    }

    async fn update(&self, call: &CallInfo, form: &[(&str, &str)]) -> Result<(), String> {
        let (account, token, call_sid) = self.credentials(call)?;
        let url = format!(
            "{}/2010-04-01/Accounts/{account}/Calls/{call_sid}.json",
            self.base
        );
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let answer = self
            .client
            .post(&url)
            .basic_auth(account, Some(token))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("Twilio could not be reached: {}", e.without_url()))?;
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        let detail = answer.text().await.unwrap_or_default();
        let detail: String = detail.chars().take(200).collect();
        Err(format!("Twilio answered {}: {detail}", status.as_u16()))
    }
}

/// TwiML that puts a call through to `to`.
pub fn dial(to: &str) -> String {
    let to = escape(to);
    match to.starts_with("sip:") {
        true => format!("<Response><Dial><Sip>{to}</Sip></Dial></Response>"),
        false => format!("<Response><Dial>{to}</Dial></Response>"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[async_trait::async_trait]
impl CallControl for TwilioCalls {
    fn reaches(&self, call: &CallInfo) -> bool {
        call.call_sid.is_some()
    }

    async fn transfer(&self, call: &CallInfo, to: &str) -> Result<(), String> {
        self.update(call, &[("Twiml", &dial(to))]).await
    }

    async fn hang_up(&self, call: &CallInfo) -> Result<(), String> {
        self.update(call, &[("Status", "completed")]).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twiml_dials_numbers_and_sip_addresses() {
        assert_eq!(
            dial("+255222199000"),
            "<Response><Dial>+255222199000</Dial></Response>"
        );
        assert_eq!(
            dial("sip:agents@bank.example"),
            "<Response><Dial><Sip>sip:agents@bank.example</Sip></Dial></Response>"
        );
    }

    #[test]
    fn a_call_without_its_sid_or_a_token_cannot_be_reached() {
        let mut settings = TelephonySettings::default();
        let calls = TwilioCalls::new(&settings);
        let call = CallInfo {
            call_sid: Some("CA1".into()),
            account_sid: Some("AC1".into()),
            ..CallInfo::default()
        };
        assert!(calls.credentials(&call).unwrap_err().contains("auth token"));
        settings.twilio_auth_token = "token".into();
        let calls = TwilioCalls::new(&settings);
        assert!(calls.credentials(&call).is_ok());
        let odd = CallInfo {
            call_sid: Some("CA1/../x".into()),
            ..call
        };
        assert!(calls.credentials(&odd).is_err());
    }
}
