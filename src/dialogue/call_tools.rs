//! Call control for the LLM backend: the same actions the scenario engine takes by intent — put the call through
//! to people, hang up after a farewell — offered to the model as tools when the scenario has them. Choosing one
//! makes the turn's outcome the intent it stands for, so the call does exactly what the scenario says for that
//! intent (the line said before, the number dialled, the hang-up once the reply has been heard).

use async_openai::error::OpenAIError;
use async_openai::types::chat::{ChatCompletionTool, ChatCompletionTools, FunctionObjectArgs};
use serde_json::{json, Value};

use super::transfer::SAFETY_OUTCOMES;
use super::Scenario;

/// Put the call through to people.
pub const TRANSFER: &str = "transfer_call";
/// Hang up after the farewell.
pub const END: &str = "end_call";

/// The intents a call may be put through for (the safety layer transfers emergencies itself).
fn transfer_intents(scenario: &Scenario) -> Vec<&str> {
    scenario
        .call
        .transfers
        .iter()
        .map(|t| t.on.as_str())
        .filter(|on| !SAFETY_OUTCOMES.contains(on))
        .collect()
}

/// The call-control tools the scenario offers.
pub fn tools(scenario: &Scenario) -> Result<Vec<ChatCompletionTools>, OpenAIError> {
    let mut tools = Vec::new();
    let reasons = transfer_intents(scenario);
    if !reasons.is_empty() {
        let function = FunctionObjectArgs::default()
            .name(TRANSFER)
            .description(
                "Put the call through to a person when the caller asks for one or you cannot help; say in your \
                 reply that you are connecting them. `reason` names the service they need.",
            )
            .parameters(json!({
                "type": "object",
                "properties": { "reason": { "type": "string", "enum": reasons } },
                "required": ["reason"],
            }))
            .build()?;
        tools.push(ChatCompletionTools::Function(ChatCompletionTool {
            function,
        }));
    }
    if !scenario.call.end_after.is_empty() {
        let function = FunctionObjectArgs::default()
            .name(END)
            .description(
                "Hang up once your reply has been heard, when the caller has said goodbye.",
            )
            .parameters(json!({ "type": "object", "properties": {} }))
            .build()?;
        tools.push(ChatCompletionTools::Function(ChatCompletionTool {
            function,
        }));
    }
    Ok(tools)
}

/// A call-control tool the model called: what it is told, and the outcome the turn takes; `None` when `name` is
/// not a call-control tool.
pub fn run(scenario: &Scenario, name: &str, arguments: &str) -> Option<(Value, Option<String>)> {
    match name {
        TRANSFER => {
            let reason = serde_json::from_str::<Value>(arguments)
                .ok()
                .and_then(|v| v.get("reason").and_then(Value::as_str).map(str::to_string));
            let known = reason.filter(|r| transfer_intents(scenario).contains(&r.as_str()));
            Some(match known {
                Some(reason) => (
                    json!({ "ok": true, "note": "the call is put through once your reply has been heard" }),
                    Some(reason),
                ),
                None => (
                    json!({ "ok": false, "error": "reason must be one of the listed services" }),
                    None,
                ),
            })
        }
        END => Some((
            json!({ "ok": true, "note": "the call ends once your reply has been heard" }),
            scenario.call.end_after.first().cloned(),
        )),
        _ => None,
    }
}
