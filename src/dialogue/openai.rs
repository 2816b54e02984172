//! The `openai` backend: any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp server, Ollama). It sends
//! the scenario's system prompt with guardrail instructions and the session history, offers the scenario's
//! actions as tools and runs the calls the model makes, and retries failed requests with backoff. Replies
//! still pass the guardrails in [`super::converse`].

use std::sync::Arc;
use std::time::Duration;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessageArgs,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessageArgs,
    ChatCompletionRequestToolMessageArgs, ChatCompletionRequestUserMessageArgs, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    CreateChatCompletionResponse, FunctionObjectArgs,
};
use async_openai::Client;
use serde_json::{json, Map, Value};

use super::actions::{http_client, ActionRunner, BoxFuture};
use super::scenario::{Scenario, SlotKind};
use super::settings::OpenAiSettings;
use super::{DialogueBackend, DialogueError, Reply, Role, Session};

/// An action run during a turn: its arguments and, when it succeeded, its answer.
struct Performed {
    name: String,
    arguments: std::collections::BTreeMap<String, String>,
    result: Option<Map<String, Value>>,
}

/// The actions of a turn that failed.
fn failed(performed: &[Performed]) -> Vec<String> {
    performed
        .iter()
        .filter(|p| p.result.is_none())
        .map(|p| p.name.clone())
        .collect()
}

/// The reply of a turn whose LLM failed after actions ran: each action's success or failure template.
fn done_reply(scenario: &Scenario, performed: &[Performed]) -> Reply {
    let now = super::template::east_africa_now();
    let text = performed
        .iter()
        .filter_map(|p| {
            let action = scenario.actions.get(&p.name)?;
            let values = super::template::Values {
                slots: Some(&p.arguments),
                result: p.result.as_ref(),
                variables: None,
            };
            let template = if p.result.is_some() {
                &action.success
            } else {
                &action.failure
            };
            Some(super::template::render(template, &values, now))
        })
        .collect::<Vec<_>>()
        .join(" ");
    Reply {
        text,
        outcome: "llm".into(),
        actions: performed.iter().map(|p| p.name.clone()).collect(),
        failed: failed(performed),
    }
}

/// Tool-call rounds in one turn before the model must answer in words.
const MAX_TOOL_ROUNDS: usize = 3;

/// The OpenAI-compatible backend.
pub struct OpenAiBackend {
    client: Client<OpenAIConfig>,
    settings: OpenAiSettings,
    actions: Arc<dyn ActionRunner>,
}

impl OpenAiBackend {
    /// A backend for `settings`; the API key comes from the environment variable they name.
    pub fn new(settings: OpenAiSettings, actions: Arc<dyn ActionRunner>) -> Self {
        let key = std::env::var(&settings.api_key_env).unwrap_or_default();
        let config = OpenAIConfig::new()
            .with_api_base(settings.base_url.trim_end_matches('/'))
            .with_api_key(key);
        let http = http_client(Some(Duration::from_secs(settings.timeout_seconds)));
        // Our own retries (bounded, logged) replace the client's built-in ones.
        let client = Client::build(http.clone(), config)
            .with_http_service(async_openai::middleware::ReqwestService::new(http));
        Self {
            client,
            settings,
            actions,
        }
    }

    fn failure(detail: impl Into<String>) -> DialogueError {
        DialogueError::Backend {
            backend: "openai",
            detail: detail.into(),
        }
    }

    /// One chat request, retried with exponential backoff on failure.
    async fn complete(
        &self,
        request: &CreateChatCompletionRequest,
    ) -> Result<CreateChatCompletionResponse, DialogueError> {
        let timeout = Duration::from_secs(self.settings.timeout_seconds);
        let mut attempt = 0;
        loop {
            let outcome =
                tokio::time::timeout(timeout, self.client.chat().create(request.clone())).await;
            let error = match outcome {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(error)) => describe(&error),
                Err(_) => format!("no answer within {} s", self.settings.timeout_seconds),
            };
            if attempt >= self.settings.retries {
                return Err(Self::failure(error));
            }
            attempt += 1;
            tracing::warn!(attempt, %error, "LLM request failed; retrying");
            tokio::time::sleep(Duration::from_millis(250 << (attempt - 1).min(4))).await;
        }
    }
}

fn describe(error: &OpenAIError) -> String {
    match error {
        OpenAIError::Reqwest(e) if e.is_timeout() => "timed out".into(),
        OpenAIError::Reqwest(e) if e.is_connect() => format!("cannot connect: {e}"),
        other => other.to_string(),
    }
}

/// The system prompt: the scenario's own, then its guardrails as instructions.
pub fn system_prompt(scenario: &Scenario) -> String {
    let g = &scenario.guardrails;
    let mut prompt = format!(
        "{}\n\nYou are {}, the assistant of the \"{}\" service: {}\nAlways answer in Swahili, in one to three short \
         sentences fit to be spoken aloud: no lists, no markdown, no emoji, no links. Write amounts as digits.",
        scenario.persona.system_prompt.trim(),
        scenario.persona.name,
        scenario.name,
        scenario.description
    );
    if g.secrets {
        prompt.push_str(
            "\nNever ask for, accept or repeat a PIN, password or one-time code. If the user offers one, warn them with: ",
        );
        prompt.push_str(g.secret_warning.as_deref().unwrap_or(""));
    }
    if g.medical {
        prompt.push_str(
            "\nNever diagnose a condition and never name a medicine dose. When asked, say: ",
        );
        prompt.push_str(g.medical_notice.as_deref().unwrap_or(""));
    }
    if !g.emergency_signs.is_empty() {
        prompt.push_str(&format!(
            "\nIf the user describes an emergency ({}), reply first with: {}",
            g.emergency_signs.join(", "),
            g.emergency_reply.as_deref().unwrap_or("")
        ));
    }
    if !scenario.actions.is_empty() {
        prompt.push_str("\nUse the tools to act; confirm the details with the user before any tool that moves money or books.");
    }
    prompt
}

/// The scenario's actions as function tools.
pub fn tools(scenario: &Scenario) -> Result<Vec<ChatCompletionTools>, OpenAIError> {
    scenario
        .actions
        .iter()
        .map(|(name, action)| {
            let properties: Map<String, Value> = action
                .arguments
                .iter()
                .map(|(arg, kind)| {
                    (
                        arg.clone(),
                        json!({ "type": "string", "description": describe_kind(*kind) }),
                    )
                })
                .collect();
            let required: Vec<&String> = action.arguments.keys().collect();
            let function = FunctionObjectArgs::default()
                .name(name.clone())
                .description(action.description.clone())
                .parameters(
                    json!({ "type": "object", "properties": properties, "required": required }),
                )
                .build()?;
            Ok(ChatCompletionTools::Function(ChatCompletionTool {
                function,
            }))
        })
        .collect()
}

fn describe_kind(kind: SlotKind) -> &'static str {
    match kind {
        SlotKind::Amount => "amount in shillings, digits only",
        SlotKind::Phone => "mobile number, e.g. 0712345678 or +255712345678",
        SlotKind::Account => "account number, 8 to 16 digits",
        SlotKind::Date => "date, YYYY-MM-DD",
        SlotKind::Text => "free text",
        SlotKind::Code => "a code of digits, keyed by the caller on the phone's keypad",
    }
}

fn history(
    scenario: &Scenario,
    session: &Session,
    text: &str,
) -> Result<Vec<ChatCompletionRequestMessage>, OpenAIError> {
    let mut messages: Vec<ChatCompletionRequestMessage> =
        vec![ChatCompletionRequestSystemMessageArgs::default()
            .content(super::template::fill_variables(
                &system_prompt(scenario),
                &session.variables,
                false,
                str::to_string,
            ))
            .build()?
            .into()];
    for (role, line) in &session.history {
        messages.push(match role {
            Role::User => ChatCompletionRequestUserMessageArgs::default()
                .content(line.as_str())
                .build()?
                .into(),
            Role::Agent => ChatCompletionRequestAssistantMessageArgs::default()
                .content(line.as_str())
                .build()?
                .into(),
        });
    }
    messages.push(
        ChatCompletionRequestUserMessageArgs::default()
            .content(text)
            .build()?
            .into(),
    );
    Ok(messages)
}

impl OpenAiBackend {
    async fn turn(
        &self,
        scenario: &Scenario,
        session: &Session,
        text: &str,
    ) -> Result<Reply, DialogueError> {
        let mut performed = Vec::new();
        match self.converse(scenario, session, text, &mut performed).await {
            Ok(reply) => Ok(reply),
            // Once an action has run, the turn must not fail or fall back (the caller would act again): say
            // what was done, in the action's own words.
            Err(error) if !performed.is_empty() => {
                tracing::warn!(%error, "LLM failed after running actions; answering from their results");
                Ok(done_reply(scenario, &performed))
            }
            Err(error) => Err(error),
        }
    }

    async fn converse(
        &self,
        scenario: &Scenario,
        session: &Session,
        text: &str,
        performed: &mut Vec<Performed>,
    ) -> Result<Reply, DialogueError> {
        let build = |e: OpenAIError| Self::failure(format!("building the request: {e}"));
        let mut messages = history(scenario, session, text).map_err(build)?;
        let mut tools = tools(scenario).map_err(build)?;
        tools.extend(super::call_tools::tools(scenario).map_err(build)?);
        // A call-control tool the model chose: the intent the turn then stands for.
        let mut outcome: Option<String> = None;
        for round in 0..=MAX_TOOL_ROUNDS {
            let mut request = CreateChatCompletionRequestArgs::default();
            request
                .model(self.settings.model.clone())
                .messages(messages.clone())
                .temperature(self.settings.temperature)
                .max_completion_tokens(self.settings.max_tokens);
            // The last round offers no tools: the model must answer in words.
            if !tools.is_empty() && round < MAX_TOOL_ROUNDS {
                request.tools(tools.clone());
            }
            let request = request.build().map_err(build)?;
            let response = self.complete(&request).await?;
            let message = response
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| Self::failure("the answer had no choices"))?
                .message;
            let calls: Vec<_> = message
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .filter_map(|c| match c {
                    ChatCompletionMessageToolCalls::Function(call) => Some(call),
                    ChatCompletionMessageToolCalls::Custom(_) => None,
                })
                .collect();
            if calls.is_empty() || round == MAX_TOOL_ROUNDS {
                let content = message.content.unwrap_or_default().trim().to_string();
                if content.is_empty() {
                    return Err(Self::failure("the answer was empty"));
                }
                return Ok(Reply {
                    text: content,
                    outcome: outcome.unwrap_or_else(|| "llm".into()),
                    actions: performed.iter().map(|p| p.name.clone()).collect(),
                    failed: failed(performed),
                });
            }
            messages.push(
                ChatCompletionRequestAssistantMessageArgs::default()
                    .tool_calls(
                        calls
                            .iter()
                            .cloned()
                            .map(ChatCompletionMessageToolCalls::Function)
                            .collect::<Vec<_>>(),
                    )
                    .build()
                    .map_err(build)?
                    .into(),
            );
            for call in calls {
                let (name, arguments) = (&call.function.name, &call.function.arguments);
                let controlled = super::call_tools::run(scenario, name, arguments);
                let result = match controlled {
                    Some((told, chosen)) => {
                        outcome = chosen.or(outcome);
                        told
                    }
                    None => {
                        let variables = &session.variables;
                        self.run_tool(scenario, variables, name, arguments, performed)
                            .await
                    }
                };
                messages.push(
                    ChatCompletionRequestToolMessageArgs::default()
                        .tool_call_id(call.id)
                        .content(result.to_string())
                        .build()
                        .map_err(build)?
                        .into(),
                );
            }
        }
        Err(Self::failure("no reply after the tool rounds"))
    }

    /// Run one tool call; what the model is told of the outcome.
    async fn run_tool(
        &self,
        scenario: &Scenario,
        variables: &std::collections::BTreeMap<String, String>,
        name: &str,
        arguments: &str,
        performed: &mut Vec<Performed>,
    ) -> Value {
        let Some(action) = scenario.actions.get(name) else {
            return json!({ "ok": false, "error": format!("no tool named {name}") });
        };
        // An action runs at most once per turn, however often the model asks (no double transfers).
        if performed.iter().any(|p| p.name == name) {
            return json!({ "ok": false, "error": format!("{name} was already done in this turn") });
        }
        let given: Map<String, Value> = match serde_json::from_str(arguments) {
            Ok(Value::Object(map)) => map,
            _ => return json!({ "ok": false, "error": "arguments must be a JSON object" }),
        };
        // Only declared arguments go out, as strings, each read by the same extractor (and bounds) as the
        // scenario's slot of that name: the model's "2" for an amount is refused like a caller's.
        let mut sent = Map::new();
        for (argument, kind) in &action.arguments {
            let said = match given.get(argument) {
                Some(Value::String(s)) => s.clone(),
                Some(other) if !other.is_null() => other.to_string(),
                _ => return json!({ "ok": false, "error": format!("missing argument {argument}") }),
            };
            match super::slots::check_argument(scenario, argument, *kind, &said) {
                Ok(value) => sent.insert(argument.clone(), Value::String(value)),
                Err(problem) => {
                    return json!({ "ok": false, "error": format!("{argument}: {problem}; ask the caller again") })
                }
            };
        }
        let (called, with) = super::actions::with_variables(action, &sent, variables);
        let outcome = self.actions.call(name, &called, &with).await;
        let answer = match &outcome {
            Ok(result) => json!({ "ok": true, "result": result }),
            Err(error) => json!({ "ok": false, "error": error.to_string() }),
        };
        performed.push(Performed {
            name: name.to_string(),
            arguments: sent
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            result: outcome.ok(),
        });
        answer
    }
}

impl DialogueBackend for OpenAiBackend {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn respond<'a>(
        &'a self,
        scenario: &'a Scenario,
        session: &'a mut Session,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Reply, DialogueError>> {
        Box::pin(async move { self.turn(scenario, session, text).await })
    }
}
