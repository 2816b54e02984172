//! The checks a scenario must pass beyond parsing: every reference resolves, every template can be filled,
//! every guardrail has its words. Each problem says which text to point the author at.

use std::collections::BTreeSet;

use super::scenario::{collected_slots, Scenario, SlotKind, Step};
use super::template;

/// Outcome names a test may expect besides intent ids.
pub const SPECIAL_OUTCOMES: [&str; 10] = [
    "fallback",
    "clarify",
    "repeat",
    "cancel",
    "guardrail",
    "secret",
    "emergency",
    "crisis",
    "greeting",
    "llm",
];

/// One problem, and a piece of the source near it (to find its line).
#[derive(Debug)]
pub struct Problem {
    /// What is wrong.
    pub message: String,
    /// Text to locate in the file.
    pub near: Option<String>,
}

fn problem(message: impl Into<String>, near: impl Into<String>) -> Problem {
    Problem {
        message: message.into(),
        near: Some(near.into()),
    }
}

/// Every problem in a parsed scenario, in file order as far as practical.
pub fn problems(scenario: &Scenario, expected_id: Option<&str>) -> Vec<Problem> {
    let mut out = Vec::new();
    let quoted = |s: &str| format!("\"{s}\"");
    if let Some(expected) = expected_id {
        if scenario.id != expected {
            out.push(problem(
                format!("id {:?} must equal the file name {expected:?}", scenario.id),
                "id",
            ));
        }
    }
    if !scenario
        .id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        out.push(problem("id must be lower-case letters, digits and _", "id"));
    }
    if scenario.language != "sw" {
        out.push(problem("language must be \"sw\"", "language"));
    }
    if scenario.fallback.is_empty() || scenario.fallback.iter().any(|f| f.trim().is_empty()) {
        out.push(problem(
            "fallback needs at least one non-empty reply",
            "fallback",
        ));
    }
    let slots = collected_slots(scenario);
    let mut templates: Vec<(&str, &str)> = vec![("greeting", &scenario.greeting)];
    templates.extend(scenario.fallback.iter().map(|f| ("fallback", f.as_str())));

    let mut seen = BTreeSet::new();
    for intent in &scenario.intents {
        let near = quoted(&intent.id);
        if !seen.insert(intent.id.as_str()) {
            out.push(problem(
                format!("intent {:?} is defined twice", intent.id),
                near.clone(),
            ));
        }
        if let Some(key) = &intent.key {
            let one_key = key.len() == 1 && key.chars().all(|c| c.is_ascii_digit() || c == '*');
            let again = scenario
                .intents
                .iter()
                .filter(|other| other.key.as_deref() == Some(key.as_str()))
                .count();
            if !one_key || again > 1 {
                out.push(problem(
                    format!(
                        "intent {:?}: key must be one of 0 to 9 or *, and no other intent's",
                        intent.id
                    ),
                    near.clone(),
                ));
            }
        }
        if intent.examples.len() < 2 {
            out.push(problem(
                format!("intent {:?} needs at least 2 examples", intent.id),
                near.clone(),
            ));
        }
        let targets = [&intent.reply, &intent.flow, &intent.action]
            .iter()
            .filter(|t| t.is_some())
            .count();
        if targets != 1 {
            out.push(problem(
                format!(
                    "intent {:?} needs exactly one of reply, flow or action",
                    intent.id
                ),
                near.clone(),
            ));
        }
        if let Some(flow) = &intent.flow {
            if scenario.flow(flow).is_none() {
                out.push(problem(
                    format!("intent {:?}: no flow {flow:?}", intent.id),
                    quoted(flow),
                ));
            }
        }
        if let Some(action) = &intent.action {
            if !scenario.actions.contains_key(action) {
                out.push(problem(
                    format!("intent {:?}: no action {action:?}", intent.id),
                    quoted(action),
                ));
            }
        }
        if let Some(reply) = &intent.reply {
            templates.push(("reply", reply));
        }
    }

    let mut seen = BTreeSet::new();
    for flow in &scenario.flows {
        let near = quoted(&flow.id);
        if !seen.insert(flow.id.as_str()) {
            out.push(problem(
                format!("flow {:?} is defined twice", flow.id),
                near.clone(),
            ));
        }
        if flow.steps.is_empty() {
            out.push(problem(
                format!("flow {:?} has no steps", flow.id),
                near.clone(),
            ));
        }
        for step in &flow.steps {
            match step {
                Step::Collect(slot) if !scenario.slots.contains_key(slot) => out.push(problem(
                    format!("flow {:?} collects {slot:?}, which is not a slot", flow.id),
                    quoted(slot),
                )),
                Step::Action(action) if !scenario.actions.contains_key(action) => {
                    out.push(problem(
                        format!(
                            "flow {:?} calls {action:?}, which is not an action",
                            flow.id
                        ),
                        quoted(action),
                    ))
                }
                Step::Confirm(text) | Step::Reply(text) => templates.push(("step", text)),
                _ => {}
            }
        }
        templates.push(("cancelled", &flow.cancelled));
        if let Some(done) = &flow.done {
            templates.push(("done", done));
        }
    }

    for (name, slot) in &scenario.slots {
        templates.push(("prompt", &slot.prompt));
        let near = format!("[slots.{name}]");
        let keyed = slot.input == super::scenario::SlotInput::Keypad;
        if keyed && matches!(slot.kind, SlotKind::Text | SlotKind::Date) {
            out.push(problem(
                format!("slot {name:?}: input = \"keypad\" is for slots of digits (code, account, phone, amount)"),
                near.clone(),
            ));
        }
        if slot.secret && !(keyed && slot.kind == SlotKind::Code) {
            out.push(problem(
                format!("slot {name:?}: secret = true is for a code keyed on the keypad (type = \"code\", input = \"keypad\")"),
                near.clone(),
            ));
        }
        if (slot.min.is_some() || slot.max.is_some()) && slot.kind != SlotKind::Amount {
            out.push(problem(
                format!("slot {name:?}: min and max are for amount slots"),
                near.clone(),
            ));
        }
        if slot.min.zip(slot.max).is_some_and(|(low, high)| low > high) {
            out.push(problem(
                format!("slot {name:?}: min is larger than max"),
                near.clone(),
            ));
        }
        match slot.digits {
            Some(_) if !matches!(slot.kind, SlotKind::Account | SlotKind::Code) => {
                out.push(problem(
                    format!("slot {name:?}: digits is for account and code slots"),
                    near.clone(),
                ))
            }
            Some([low, high]) if low == 0 || low > high || high > 32 => out.push(problem(
                format!("slot {name:?}: digits must be [fewest, most], from 1 to 32"),
                near.clone(),
            )),
            _ => {}
        }
        if !slots.contains(name.as_str()) {
            out.push(problem(
                format!("slot {name:?} is not collected by any flow"),
                format!("[slots.{name}]"),
            ));
        }
    }
    for (name, action) in &scenario.actions {
        let near = format!("[actions.{name}]");
        if !action.url.starts_with("http://")
            && !action.url.starts_with("https://")
            && !action.url.starts_with("${")
        {
            out.push(problem(
                format!("action {name:?}: url must start with http://, https:// or ${{VAR}}"),
                near.clone(),
            ));
        }
        if action.timeout_ms == 0 || action.timeout_ms > 30_000 {
            out.push(problem(
                format!("action {name:?}: timeout_ms must be 1 to 30000"),
                near.clone(),
            ));
        }
        for argument in action.arguments.keys() {
            if !slots.contains(argument.as_str()) {
                out.push(problem(
                    format!("action {name:?}: argument {argument:?} is not a collected slot"),
                    near.clone(),
                ));
            }
        }
        templates.push(("success", &action.success));
        templates.push(("failure", &action.failure));
    }

    for (what, text) in templates {
        if let Some(secret) = template::variables(text)
            .into_iter()
            .find(|v| v.starts_with(template::SECRET_PREFIX))
        {
            out.push(problem(
                format!("{{{{{secret}}}}} in a {what} text: a secret variable reaches actions only (their url and with), never what the agent says"),
                format!("{{{{{secret}}}}}"),
            ));
        }
        if text.trim().is_empty() {
            out.push(problem(
                format!("an empty {what} text"),
                format!("{what} ="),
            ));
        }
        for placeholder in template::placeholders(text) {
            let (name, filter) = template::split_filter(placeholder);
            if let Some(filter) = filter.filter(|f| !template::FILTERS.contains(f)) {
                out.push(problem(
                    format!("{{{placeholder}}} in a {what} text: no filter {filter:?} (words or digits)"),
                    format!("{{{placeholder}}}"),
                ));
            }
            let known = slots.contains(name)
                || name.starts_with("result.")
                || template::BUILT_INS.contains(&name);
            if !known {
                out.push(problem(
                    format!("{{{name}}} in a {what} text is not a collected slot, result.NAME, time or date"),
                    format!("{{{name}}}"),
                ));
            }
        }
    }

    check_guardrails(scenario, &mut out);
    check_call(scenario, &mut out);
    check_tests(scenario, &mut out);
    out
}

fn check_call(scenario: &Scenario, out: &mut Vec<Problem>) {
    let intents: Vec<&str> = scenario.intents.iter().map(|i| i.id.as_str()).collect();
    let actions: Vec<&str> = scenario.actions.keys().map(String::as_str).collect();
    if let Some((key, message)) = scenario.call.problem(&intents, &actions) {
        out.push(problem(message, key));
    }
}

fn check_guardrails(scenario: &Scenario, out: &mut Vec<Problem>) {
    let g = &scenario.guardrails;
    let missing = |flag: bool, text: &Option<String>| {
        flag && text.as_deref().is_none_or(|t| t.trim().is_empty())
    };
    if missing(g.medical, &g.medical_notice) {
        out.push(problem(
            "guardrails: medical = true needs a medical_notice",
            "medical",
        ));
    }
    let rules = scenario.safety.current();
    if let Err((field, message)) = g.compile(&rules) {
        out.push(problem(format!("guardrails: {field}: {message}"), field));
    }
    let lexicon = &rules.lexicon;
    for category in g.emergency_advice.keys() {
        if lexicon.category(category).is_none_or(|c| c.crisis) {
            let known: Vec<&str> = lexicon
                .categories
                .iter()
                .filter(|c| !c.crisis)
                .map(|c| c.id.as_str())
                .collect();
            out.push(problem(
                format!(
                    "guardrails: emergency_advice has no category {category:?} (known: {})",
                    known.join(", ")
                ),
                "emergency_advice",
            ));
        }
    }
    if missing(!g.blocked_replies.is_empty(), &g.safe_reply) {
        out.push(problem(
            "guardrails: blocked_replies need a safe_reply",
            "blocked_replies",
        ));
    }
}

fn check_tests(scenario: &Scenario, out: &mut Vec<Problem>) {
    for test in &scenario.tests {
        let near = format!("\"{}\"", test.name);
        if test.turns.is_empty() {
            out.push(problem(
                format!("test {:?} has no turns", test.name),
                near.clone(),
            ));
        }
        for turn in &test.turns {
            if let Some(intent) = &turn.intent {
                if scenario.intent(intent).is_none() && !SPECIAL_OUTCOMES.contains(&intent.as_str())
                {
                    out.push(problem(
                        format!("test {:?}: no intent {intent:?}", test.name),
                        near.clone(),
                    ));
                }
            }
            if let Some(action) = &turn.action {
                if !scenario.actions.contains_key(action) {
                    out.push(problem(
                        format!("test {:?}: no action {action:?}", test.name),
                        near.clone(),
                    ));
                }
            }
            let named = turn.slot_was_set.iter().chain(&turn.slot_was_not_set);
            for slot in named.flat_map(|s| s.items()) {
                let name = slot.split_once('=').map_or(slot, |(n, _)| n).trim();
                if !scenario.slots.contains_key(name) {
                    out.push(problem(
                        format!("test {:?}: no slot {name:?}", test.name),
                        near.clone(),
                    ));
                }
            }
        }
        if let Some(fixture) = &test.fixture {
            for name in fixture
                .slots
                .keys()
                .filter(|n| !scenario.slots.contains_key(*n))
            {
                out.push(problem(
                    format!("test {:?}: the fixture fills no slot {name:?}", test.name),
                    near.clone(),
                ));
            }
            if let Some(flow) = fixture
                .flow
                .as_deref()
                .filter(|f| scenario.flow(f).is_none())
            {
                out.push(problem(
                    format!("test {:?}: the fixture names no flow {flow:?}", test.name),
                    near.clone(),
                ));
            }
        }
        for (name, stub) in &test.actions {
            if !scenario.actions.contains_key(name) {
                out.push(problem(
                    format!("test {:?}: stubs no action {name:?}", test.name),
                    near.clone(),
                ));
            }
            if let super::scenario::StubbedAction::Outcome(o) = stub {
                if o != "fail" && o != "timeout" {
                    out.push(problem(
                        format!("test {:?}: action {name:?} stubbed as {o:?}; use \"fail\", \"timeout\" or a result table", test.name),
                        near.clone(),
                    ));
                }
            }
        }
    }
}
