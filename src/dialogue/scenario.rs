//! Scenario files (`scenarios/*.toml`): the types, loading, and the checks that give authors `file:line` messages.
//! The format is documented in `scenarios/FORMAT.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

pub use super::test_format::{OneOrMany, StubbedAction, TestConversation, TestFixture, TestTurn};

/// One scenario: what the agent knows, says and may do.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Identifier; equals the file name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Language code (`sw`).
    pub language: String,
    /// One sentence for operators.
    pub description: String,
    /// The reply to an empty first turn.
    pub greeting: String,
    /// Replies used in turn when nothing matches.
    pub fallback: Vec<String>,
    /// Persona and system prompt for LLM backends.
    pub persona: Persona,
    /// What users ask for.
    #[serde(default)]
    pub intents: Vec<Intent>,
    /// Values flows collect, by name.
    #[serde(default)]
    pub slots: BTreeMap<String, Slot>,
    /// Multi-step conversations.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// HTTP webhooks, by name.
    #[serde(default)]
    pub actions: BTreeMap<String, Action>,
    /// Safety rules every backend's replies pass through.
    #[serde(default)]
    pub guardrails: Guardrails,
    /// How a live call handles a silent caller and a call that runs too long.
    #[serde(default)]
    pub call: super::call::CallSettings,
    /// Test conversations for `sauti scenario test`.
    #[serde(default)]
    pub tests: Vec<TestConversation>,
    /// How callers' Sheng and English words are read (`scenarios/language/reading.toml`), shared by the library's
    /// scenarios and swapped when the file is reloaded.
    #[serde(skip)]
    pub reading: super::reading::SharedReading,
    /// The safety rules (`scenarios/language/safety.toml`), shared and reloaded the same way.
    #[serde(skip)]
    pub safety: super::safety::SharedSafety,
}

/// Who the agent is, for LLM backends.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    /// The agent's name.
    pub name: String,
    /// The system prompt.
    pub system_prompt: String,
}

/// Something users ask for, and what the agent does about it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intent {
    /// Identifier.
    pub id: String,
    /// Swahili example phrases.
    pub examples: Vec<String>,
    /// How a clarifying question names it ("kuangalia salio"): when two titled intents match a turn equally
    /// well, the caller is asked which one was meant.
    #[serde(default)]
    pub title: Option<String>,
    /// Words that strongly signal the intent.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Keywords that decide: when one is in the turn, this intent wins over every intent none of whose
    /// deciding keywords is there, however well those match (a scam's "nitume elfu kumi kwanza" is never a
    /// transfer). They count as keywords too.
    #[serde(default)]
    pub decisive: Vec<String>,
    /// A reply template.
    #[serde(default)]
    pub reply: Option<String>,
    /// A flow to start.
    #[serde(default)]
    pub flow: Option<String>,
    /// An action to call.
    #[serde(default)]
    pub action: Option<String>,
    /// The phone key that stands for this intent on a call ("Bonyeza 1 kwa salio"): `0` to `9` or `*`.
    #[serde(default)]
    pub key: Option<String>,
    /// The examples' and keywords' words, analysed once (filled on first use).
    #[serde(skip)]
    pub compiled: std::sync::OnceLock<CompiledIntent>,
}

/// An intent's words as the matcher reads them: each example and each keyword as a list of words, each word
/// with its forms.
#[derive(Debug, Clone, Default)]
pub struct CompiledIntent {
    /// Each example's content words.
    pub examples: Vec<Vec<Vec<String>>>,
    /// Each keyword's words.
    pub keywords: Vec<Vec<Vec<String>>>,
    /// Each deciding keyword's words.
    pub decisive: Vec<Vec<Vec<String>>>,
    /// Keywords made only of small words ("wewe je", "na wewe"), matched as the words themselves, in a row.
    pub phrases: Vec<Vec<String>>,
}

/// The kinds of value a slot holds, each with its extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotKind {
    /// Shillings, as digits.
    Amount,
    /// A Tanzanian or Kenyan mobile number.
    Phone,
    /// 8 to 16 digits.
    Account,
    /// An ISO date.
    Date,
    /// The whole turn.
    Text,
    /// A code of digits (a PIN, a one-time code), `digits` long (4 to 8 by default); best keyed on a call.
    Code,
}

/// How a slot's value is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotInput {
    /// Said (or typed), as any turn.
    #[default]
    Voice,
    /// Keyed on the phone's keypad, ended with `#`; on a channel without a keypad (an HTTP turn) the step is
    /// left out.
    Keypad,
}

/// A value a flow collects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slot {
    /// Its extractor.
    #[serde(rename = "type")]
    pub kind: SlotKind,
    /// The question that asks for it.
    pub prompt: String,
    /// How it is given: `voice` (default) or `keypad`.
    #[serde(default)]
    pub input: SlotInput,
    /// A keypad secret (a PIN): kept only as its SHA-256 digest, `sha256:…`, never as the digits, and never
    /// written to a transcript, a log, an LLM prompt or a session.
    #[serde(default)]
    pub secret: bool,
    /// Said when the turn did not contain it (instead of the prompt again).
    #[serde(default)]
    pub invalid: Option<String>,
    /// Amounts: the smallest plausible value; a smaller one is asked back.
    #[serde(default)]
    pub min: Option<u64>,
    /// Amounts: the largest plausible value; a larger one is asked back.
    #[serde(default)]
    pub max: Option<u64>,
    /// Accounts: the allowed numbers of digits, e.g. `[10, 13]` (default 8 to 16).
    #[serde(default)]
    pub digits: Option<[usize; 2]>,
    /// Said when the value is outside `min`/`max` or `digits`, or could be read two ways (`{value}` is what was
    /// heard, in words for amounts).
    #[serde(default)]
    pub out_of_range: Option<String>,
}

/// A multi-step conversation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Identifier.
    pub id: String,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Said when the user cancels.
    pub cancelled: String,
    /// Appended after the last step's reply.
    #[serde(default)]
    pub done: Option<String>,
}

/// One step of a flow.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Ask for a slot until it is filled.
    Collect(String),
    /// Ask a yes/no question; no cancels the flow.
    Confirm(String),
    /// Call an action and say its success or failure template.
    Action(String),
    /// Say something.
    Reply(String),
}

/// An HTTP method an action uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Method {
    /// Arguments in the query string.
    #[serde(rename = "GET")]
    Get,
    /// Arguments as a JSON body.
    #[serde(rename = "POST")]
    Post,
}

/// An HTTP webhook a flow step or an LLM tool call can invoke.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// GET or POST.
    pub method: Method,
    /// The URL; `${VAR}` is read from the environment when the action runs, `{{name}}` from the call's variables.
    pub url: String,
    /// How long to wait.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// What it does (for LLM tools).
    pub description: String,
    /// Argument name → slot kind; all required.
    #[serde(default)]
    pub arguments: BTreeMap<String, SlotKind>,
    /// More fields sent with the arguments, from the call's variables: `with = { customer = "{{customer_id}}" }`
    /// (secret variables, `{{secret__…}}`, are filled here and in the URL only).
    #[serde(default)]
    pub with: BTreeMap<String, String>,
    /// Said after a 2xx.
    pub success: String,
    /// Said after a failure.
    pub failure: String,
}

fn default_timeout_ms() -> u64 {
    3_000
}

pub use super::guardrail_settings::{
    CategoryChange, CompiledCache, CompiledChange, CompiledGuardrails, Guardrails,
};

/// A problem in a scenario file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScenarioError {
    /// The file as given.
    pub file: String,
    /// 1-based line (1 when the problem is the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Load and check a scenario file, with the language files of its folder (`language/*.toml` beside it, or the
/// built-in ones).
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let language = super::language::Language::of_folder(path.parent())?;
    load_in(path, &language)
}

/// Load and check a scenario file that uses `language`.
pub fn load_in(
    path: &Path,
    language: &super::language::Language,
) -> Result<Scenario, ScenarioError> {
    let (file, source) = super::language::read(path)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    parse_in(&file, &source, Some(stem), language)
}

/// Parse and check scenario text with the built-in language files; `expected_id` is the file name the id must
/// equal, when there is one.
pub fn parse(
    file: &str,
    source: &str,
    expected_id: Option<&str>,
) -> Result<Scenario, ScenarioError> {
    parse_in(
        file,
        source,
        expected_id,
        &super::language::Language::default(),
    )
}

/// Parse and check scenario text that uses `language`.
pub fn parse_in(
    file: &str,
    source: &str,
    expected_id: Option<&str>,
    language: &super::language::Language,
) -> Result<Scenario, ScenarioError> {
    let mut scenario: Scenario = toml::from_str(source).map_err(|e| ScenarioError {
        file: file.to_string(),
        line: e.span().map_or(1, |span| line_at(source, span.start)),
        message: syntax_problem(source, &e),
    })?;
    language.give(&mut scenario);
    let problems = super::check::problems(&scenario, expected_id);
    match problems.into_iter().next() {
        None => Ok(scenario),
        Some(problem) => Err(ScenarioError {
            file: file.to_string(),
            line: problem
                .near
                .as_deref()
                .and_then(|needle| source.find(needle))
                .map_or(1, |at| line_at(source, at)),
            message: problem.message,
        }),
    }
}

/// What is wrong with text TOML refused, in words. The parser leaves its message empty for some characters
/// (control characters in a comment, say); the character is named then.
pub(crate) fn syntax_problem(source: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim();
    if !message.is_empty() {
        return message.to_string();
    }
    let found = error
        .span()
        .and_then(|span| source.get(span.start..))
        .and_then(|rest| rest.chars().next());
    match found {
        Some(c) => format!(
            "unexpected character U+{:04X} {c:?}; a scenario file cannot contain it here",
            u32::from(c)
        ),
        None => "the file is not valid TOML".to_string(),
    }
}

/// The 1-based line of a byte offset.
fn line_at(source: &str, offset: usize) -> usize {
    source[..offset.min(source.len())].matches('\n').count() + 1
}

/// Every slot name any step of any flow collects.
pub fn collected_slots(scenario: &Scenario) -> BTreeSet<&str> {
    scenario
        .flows
        .iter()
        .flat_map(|flow| flow.steps.iter())
        .filter_map(|step| match step {
            Step::Collect(slot) => Some(slot.as_str()),
            _ => None,
        })
        .collect()
}

impl Scenario {
    /// An intent by id.
    pub fn intent(&self, id: &str) -> Option<&Intent> {
        self.intents.iter().find(|intent| intent.id == id)
    }

    /// A flow by id.
    pub fn flow(&self, id: &str) -> Option<&Flow> {
        self.flows.iter().find(|flow| flow.id == id)
    }
}
