//! `[dialogue]` settings: which backend answers turns (operators choose; callers never can), where scenario
//! files live, session lifetime, and the OpenAI-compatible backend's connection.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The dialogue backends an operator can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The embedded scenario engine (no network).
    Scenario,
    /// An OpenAI-compatible chat server.
    Openai,
}

/// `[dialogue]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DialogueSettings {
    /// Which backend answers turns.
    pub backend: BackendKind,
    /// Directory of scenario files (reloaded when they change); embedded copies fill in missing ones.
    pub scenarios_dir: PathBuf,
    /// Sessions idle this long are forgotten.
    pub session_idle_minutes: u64,
    /// Most live sessions (the least recently used goes first).
    pub max_sessions: usize,
    /// Longest `text` of an agent turn, in characters.
    pub max_text_chars: usize,
    /// When the `openai` backend fails or times out, answer with the scenario engine instead of 503.
    pub fallback_to_scenario: bool,
    /// The OpenAI-compatible backend.
    pub openai: OpenAiSettings,
}

impl Default for DialogueSettings {
    fn default() -> Self {
        Self {
            backend: BackendKind::Scenario,
            scenarios_dir: PathBuf::from("scenarios"),
            session_idle_minutes: 30,
            max_sessions: 10_000,
            max_text_chars: 1_000,
            fallback_to_scenario: true,
            openai: OpenAiSettings::default(),
        }
    }
}

/// `[dialogue.openai]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiSettings {
    /// Base URL of the chat API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1` (vLLM,
    /// llama.cpp server, Ollama).
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Environment variable holding the API key (may be unset for local servers).
    pub api_key_env: String,
    /// Sampling temperature.
    pub temperature: f32,
    /// Longest wait for one request.
    pub timeout_seconds: u64,
    /// Most tokens in a reply.
    pub max_tokens: u32,
    /// Retries after a failed request (with exponential backoff from 250 ms).
    pub retries: u32,
}

impl Default for OpenAiSettings {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            temperature: 0.3,
            timeout_seconds: 20,
            max_tokens: 300,
            retries: 2,
        }
    }
}

impl DialogueSettings {
    /// A problem with a value, as (key, problem).
    pub fn problem(&self) -> Option<(&'static str, &'static str)> {
        let o = &self.openai;
        if self.session_idle_minutes == 0 {
            return Some(("dialogue.session_idle_minutes", "must be at least 1"));
        }
        if self.max_sessions == 0 {
            return Some(("dialogue.max_sessions", "must be at least 1"));
        }
        if !(1..=5_000).contains(&self.max_text_chars) {
            return Some(("dialogue.max_text_chars", "must be 1 to 5000"));
        }
        if !(o.base_url.starts_with("http://") || o.base_url.starts_with("https://")) {
            return Some(("dialogue.openai.base_url", "must be an http(s) URL"));
        }
        if !(0.0..=2.0).contains(&o.temperature) {
            return Some(("dialogue.openai.temperature", "must be 0 to 2"));
        }
        if o.timeout_seconds == 0 || o.timeout_seconds > 300 {
            return Some(("dialogue.openai.timeout_seconds", "must be 1 to 300"));
        }
        if o.max_tokens == 0 {
            return Some(("dialogue.openai.max_tokens", "must be at least 1"));
        }
        if o.retries > 5 {
            return Some(("dialogue.openai.retries", "must be 0 to 5"));
        }
        None
    }
}
