//! Scenario actions: HTTP webhooks a flow step or an LLM tool call invokes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};

use super::scenario::{Action, Method};

/// The fields of an action's JSON answer.
pub type ActionResult = Map<String, Value>;
/// A boxed future, for object-safe async traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an action gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// `${VAR}` in the URL is not set.
    #[error("environment variable {0} is not set")]
    Unset(String),
    /// No answer in time.
    #[error("no answer within {0} ms")]
    Timeout(u64),
    /// The request failed or the answer was not 2xx.
    #[error("{0}")]
    Failed(String),
}

/// Runs actions.
pub trait ActionRunner: Send + Sync {
    /// Call `action` (named `name`) with `arguments`.
    fn call<'a>(
        &'a self,
        name: &'a str,
        action: &'a Action,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Result<ActionResult, ActionError>>;
}

/// Make rustls with the `ring` provider the process's TLS (once; before any outgoing HTTPS client is built).
pub fn install_tls() {
    static TLS: std::sync::Once = std::sync::Once::new();
    TLS.call_once(|| {
        // Another part of the process may have installed a provider first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An HTTP client for outgoing calls (actions, LLM backends), with TLS through rustls and the `ring`
/// provider (installed once, process-wide).
pub fn http_client(timeout: Option<Duration>) -> reqwest::Client {
    install_tls();
    let mut builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(5));
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder.build().unwrap_or_else(|error| {
        tracing::error!(%error, "HTTP client with settings failed; using the defaults");
        reqwest::Client::new()
    })
}

/// Calls actions over HTTP.
#[derive(Debug, Clone)]
pub struct HttpActions {
    client: reqwest::Client,
}

impl Default for HttpActions {
    fn default() -> Self {
        Self {
            client: http_client(None),
        }
    }
}

impl HttpActions {
    /// A runner with its own connection pool.
    pub fn new() -> Self {
        Self::default()
    }
}

/// An action as a call runs it: `{{name}}` in its URL filled from the call's variables (URL-encoded), and its
/// `with` fields added to the arguments; secret variables are filled here, and nowhere the caller or a model
/// sees.
pub fn with_variables(
    action: &Action,
    arguments: &Map<String, Value>,
    variables: &std::collections::BTreeMap<String, String>,
) -> (Action, Map<String, Value>) {
    use super::template::fill_variables;
    // Percent-encoded, a space as %20: a value may sit in the path as well as the query.
    let encode = |v: &str| {
        form_urlencoded::byte_serialize(v.as_bytes())
            .collect::<String>()
            .replace('+', "%20")
    };
    let mut action = action.clone();
    action.url = fill_variables(&action.url, variables, true, encode);
    let mut arguments = arguments.clone();
    for (field, template) in &action.with {
        let value = fill_variables(template, variables, true, str::to_string);
        arguments
            .entry(field.clone())
            .or_insert(Value::String(value));
    }
    (action, arguments)
}

/// Expand `${VAR}` from the environment.
pub fn expand_url(url: &str) -> Result<String, ActionError> {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ActionError::Failed(format!("unclosed ${{ in {url}")))?;
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| ActionError::Unset(name.to_string()))?;
        out.push_str(value.trim_end_matches('/'));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl ActionRunner for HttpActions {
    fn call<'a>(
        &'a self,
        name: &'a str,
        action: &'a Action,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Result<ActionResult, ActionError>> {
        Box::pin(async move {
            // The URL may hold secret variables and values from the environment: no error below names it.
            let url = expand_url(&action.url)?;
            let request = match action.method {
                Method::Get => {
                    let mut url = reqwest::Url::parse(&url)
                        .map_err(|e| ActionError::Failed(format!("the url is not a URL: {e}")))?;
                    for (name, value) in arguments {
                        let value = match value {
                            Value::String(text) => text.clone(),
                            other => other.to_string(),
                        };
                        url.query_pairs_mut().append_pair(name, &value);
                    }
                    self.client.get(url)
                }
                Method::Post => self.client.post(&url).json(arguments),
            };
            let started = std::time::Instant::now();
            let response = request
                .timeout(Duration::from_millis(action.timeout_ms))
                .send()
                .await
                .map_err(|e| {
                    if e.is_timeout() {
                        ActionError::Timeout(action.timeout_ms)
                    } else {
                        ActionError::Failed(format!("request failed: {}", e.without_url()))
                    }
                })?;
            let status = response.status();
            tracing::info!(
                action = name,
                status = status.as_u16(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "action called"
            );
            if !status.is_success() {
                return Err(ActionError::Failed(format!("answered {status}")));
            }
            let body = response.bytes().await.map_err(|e| {
                if e.is_timeout() {
                    ActionError::Timeout(action.timeout_ms)
                } else {
                    ActionError::Failed(format!("reading the answer failed: {}", e.without_url()))
                }
            })?;
            // A 2xx without a JSON object is still success; it just has no fields.
            Ok(match serde_json::from_slice::<Value>(&body) {
                Ok(Value::Object(fields)) => fields,
                _ => Map::new(),
            })
        })
    }
}

/// Records calls and answers `{}`, or what a test stubbed for the action (a failure, a timeout, a result): what
/// `sauti scenario test` uses, so tests never reach real services.
#[derive(Debug, Default)]
pub struct RecordingActions {
    calls: Mutex<Vec<(String, Map<String, Value>)>>,
    stubs: std::collections::BTreeMap<String, super::test_format::StubbedAction>,
}

impl RecordingActions {
    /// Actions that answer as `stubs` say (the others `{}`).
    pub fn stubbed(
        stubs: std::collections::BTreeMap<String, super::test_format::StubbedAction>,
    ) -> Self {
        Self {
            calls: Mutex::default(),
            stubs,
        }
    }

    /// The calls so far, oldest first, and forget them.
    pub fn take(&self) -> Vec<(String, Map<String, Value>)> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl ActionRunner for RecordingActions {
    fn call<'a>(
        &'a self,
        name: &'a str,
        action: &'a Action,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Result<ActionResult, ActionError>> {
        use super::test_format::StubbedAction;
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name.to_string(), arguments.clone()));
        let outcome = match self.stubs.get(name) {
            None => Ok(Map::new()),
            Some(StubbedAction::Result(result)) => Ok(result.clone()),
            Some(StubbedAction::Outcome(o)) if o == "timeout" => {
                Err(ActionError::Timeout(action.timeout_ms))
            }
            Some(StubbedAction::Outcome(o)) => Err(ActionError::Failed(format!("stubbed: {o}"))),
        };
        Box::pin(async move { outcome })
    }
}
