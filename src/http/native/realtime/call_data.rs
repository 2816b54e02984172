//! What a client says of the call a session carries: Twilio's `start` (`callSid`, `accountSid`,
//! `customParameters`) and ConvAI's `conversation_initiation_client_data.dynamic_variables` (with ElevenLabs'
//! `system__call_sid` and `system__caller_id`). Bounded: at most [`MAX_VARIABLES`] names of letters, digits and
//! `_`, each value text, a number or a boolean of at most [`MAX_VALUE_CHARS`] characters.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::telephony::{plain_id, CallInfo};

/// The most variables one call may carry.
pub const MAX_VARIABLES: usize = 32;
/// The longest variable name.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest variable value.
pub const MAX_VALUE_CHARS: usize = 256;

/// The variables of a JSON object, or what is wrong with them.
pub fn variables(object: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    let Some(object) = object.filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let Some(object) = object.as_object() else {
        return Err("variables must be a JSON object of names and values".into());
    };
    if object.len() > MAX_VARIABLES {
        return Err(format!("at most {MAX_VARIABLES} variables"));
    }
    let mut out = BTreeMap::new();
    for (name, value) in object {
        let fine_name = !name.is_empty()
            && name.len() <= MAX_NAME_CHARS
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !fine_name {
            return Err(format!(
                "variable names are 1 to {MAX_NAME_CHARS} letters, digits and _: {:?}",
                name.chars().take(MAX_NAME_CHARS).collect::<String>()
            ));
        }
        let value = match value {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            _ => {
                return Err(format!(
                    "variable {name:?} must be text, a number or a boolean"
                ))
            }
        };
        if value.chars().count() > MAX_VALUE_CHARS {
            return Err(format!(
                "variable {name:?} is longer than {MAX_VALUE_CHARS} characters"
            ));
        }
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// A call's sid as given, checked.
fn sid(value: Option<&str>, what: &str) -> Result<Option<String>, String> {
    match value {
        None | Some("") => Ok(None),
        Some(sid) if plain_id(sid) => Ok(Some(sid.to_string())),
        Some(_) => Err(format!("{what} must be 2 to 64 letters and digits")),
    }
}

/// The call of a Twilio `start` event.
pub fn twilio(start: &Value) -> Result<CallInfo, String> {
    let field = |name: &str| {
        start
            .pointer(&format!("/start/{name}"))
            .and_then(Value::as_str)
    };
    let variables = variables(start.pointer("/start/customParameters"))
        .map_err(|problem| format!("start.customParameters: {problem}"))?;
    let caller = ["From", "from", "caller", "caller_id"]
        .iter()
        .find_map(|name| variables.get(*name).cloned());
    Ok(CallInfo {
        call_sid: sid(field("callSid"), "start.callSid")?,
        account_sid: sid(field("accountSid"), "start.accountSid")?,
        caller,
        variables,
    })
}

/// The call of a ConvAI `conversation_initiation_client_data` message.
pub fn convai(message: &Value) -> Result<CallInfo, String> {
    let variables = variables(message.get("dynamic_variables"))
        .map_err(|problem| format!("dynamic_variables: {problem}"))?;
    Ok(CallInfo {
        call_sid: sid(
            variables.get("system__call_sid").map(String::as_str),
            "system__call_sid",
        )?,
        account_sid: None,
        caller: variables.get("system__caller_id").cloned(),
        variables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_twilio_start_names_its_call_and_parameters() {
        let start = json!({ "event": "start", "start": { "callSid": "CA12", "accountSid": "AC34",
            "customParameters": { "From": "+255700000001", "tawi": "Arusha" } } });
        let call = twilio(&start).unwrap();
        assert_eq!(call.call_sid.as_deref(), Some("CA12"));
        assert_eq!(call.account_sid.as_deref(), Some("AC34"));
        assert_eq!(call.caller.as_deref(), Some("+255700000001"));
        assert_eq!(call.variables["tawi"], "Arusha");
        assert!(twilio(&json!({ "start": { "callSid": "CA1/../x" } })).is_err());
    }

    #[test]
    fn variables_are_bounded() {
        let many: serde_json::Map<String, Value> =
            (0..40).map(|i| (format!("v{i}"), json!(i))).collect();
        assert!(variables(Some(&Value::Object(many))).is_err());
        assert!(variables(Some(&json!({ "bad name": "x" }))).is_err());
        assert!(variables(Some(&json!({ "long": "x".repeat(300) }))).is_err());
        assert!(variables(Some(&json!({ "nested": { "a": 1 } }))).is_err());
        let fine = variables(Some(&json!({ "n": 3, "ok": true, "jina": "Asha" }))).unwrap();
        assert_eq!(fine["n"], "3");
        assert_eq!(fine["ok"], "true");
        assert!(variables(None).unwrap().is_empty());
    }
}
