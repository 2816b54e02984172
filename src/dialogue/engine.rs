//! The `scenario` backend: intents, slot filling across turns, flows, actions and templated replies, with no
//! network of its own (actions go through the [`ActionRunner`] it is given).

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::actions::ActionRunner;
use super::greetings;
use super::intents;
use super::scenario::{Flow, Scenario, SlotKind, Step};
use super::slots::{self, Extracted};
use super::template::{self, Values};
use super::{ActiveFlow, Reply, Session};

/// Said when a caller calls off something while nothing is in progress.
const NOTHING_TO_CANCEL: &str = "Sawa. Hakuna kinachoendelea sasa hivi; nikusaidie nini kingine?";

/// Score at which the rest of a turn that opened with a greeting is taken as a request.
const SURE: f32 = 0.6;

/// Answer one turn with the scenario engine.
pub async fn respond(
    scenario: &Scenario,
    session: &mut Session,
    text: &str,
    actions: &dyn ActionRunner,
    now: OffsetDateTime,
) -> Reply {
    let mut turn = Turn {
        scenario,
        session,
        actions,
        now,
        parts: Vec::new(),
        called: Vec::new(),
        failed: Vec::new(),
        rejected: Vec::new(),
    };
    let outcome = turn.run(text).await;
    let text = turn.parts.join(" ");
    Reply {
        text,
        outcome,
        actions: turn.called,
        failed: turn.failed,
    }
}

struct Turn<'a> {
    scenario: &'a Scenario,
    session: &'a mut Session,
    actions: &'a dyn ActionRunner,
    now: OffsetDateTime,
    parts: Vec<String>,
    called: Vec<String>,
    failed: Vec<String>,
    /// Slots this turn named a value for that could not be taken, with what was heard.
    rejected: Vec<(String, String)>,
}

impl Turn<'_> {
    fn say(&mut self, template: &str) {
        let values = Values {
            slots: Some(&self.session.slots),
            result: Some(&self.session.result),
            variables: Some(&self.session.variables),
        };
        let text = template::render(template, &values, self.now);
        if !text.is_empty() {
            self.parts.push(text);
        }
    }

    /// Ask for a slot: why the value heard this turn was not taken, or its prompt.
    fn ask(&mut self, name: &str, again: bool) {
        let Some(definition) = self.scenario.slots.get(name) else {
            return;
        };
        if let Some((_, heard)) = self.rejected.iter().find(|(slot, _)| slot == name) {
            let template = definition
                .out_of_range
                .clone()
                .unwrap_or_else(|| default_out_of_range(definition.kind).to_string());
            let text = template.replace("{value}", heard);
            self.say(&text);
            return;
        }
        let ask = match &definition.invalid {
            Some(invalid) if again => invalid.clone(),
            _ => definition.prompt.clone(),
        };
        self.say(&ask);
    }

    /// Answer a greeting (after its pair, already said) with the `greet` intent's reply or the scenario's
    /// greeting; the outcome.
    fn greet(&mut self) -> String {
        let greet = self.scenario.intent("greet");
        let reply = greet
            .and_then(|i| i.reply.clone())
            .unwrap_or_else(|| self.scenario.greeting.clone());
        self.say(&reply);
        if greet.is_some() { "greet" } else { "greeting" }.into()
    }

    async fn run(&mut self, text: &str) -> String {
        if text.trim().is_empty() {
            let greeting = self.scenario.greeting.clone();
            self.say(&greeting);
            return "greeting".into();
        }
        if let Some(active) = self.session.flow.clone() {
            if let Some(outcome) = self.continue_flow(&active, text).await {
                return outcome;
            }
        } else if super::repair::calls_off(text) {
            // "Acha", "sitaki tena" with nothing in progress: say so, rather than not understanding.
            self.say(NOTHING_TO_CANCEL);
            return "cancel".into();
        }
        // A greeting is answered with its pair (Shikamoo → Marahaba), then whatever else the turn asks.
        let opening = greetings::opening(text);
        let greeted = opening.is_some();
        let rest = match opening {
            Some((answer, taken)) => {
                self.parts.push(answer.to_string());
                greetings::rest(text, taken)
            }
            None => text.to_string(),
        };
        if greeted && intents::content(&rest).is_empty() {
            self.session.fallbacks = 0;
            return self.greet();
        }
        let text = rest.as_str();
        if let Some((first, second)) = intents::tied(self.scenario, text).filter(|_| !greeted) {
            // "Unamaanisha salio au kutuma pesa?": the next turn answers it like any other.
            let (a, b) = (first.title.clone(), second.title.clone());
            self.say(&format!(
                "Unamaanisha {} au {}?",
                a.unwrap_or_default(),
                b.unwrap_or_default()
            ));
            return "clarify".into();
        }
        let found =
            intents::best(self.scenario, text).filter(|(_, score)| !greeted || *score >= SURE);
        let Some((intent, _)) = found else {
            if greeted {
                // "Mambo vipi, niko hapa": a greeting with small talk is answered as a greeting.
                return self.greet();
            }
            let fallback = &self.scenario.fallback;
            let reply = fallback[self.session.fallbacks % fallback.len().max(1)].clone();
            self.session.fallbacks += 1;
            self.say(&reply);
            return "fallback".into();
        };
        let intent = intent.clone();
        self.session.fallbacks = 0;
        if let Some(reply) = &intent.reply {
            self.say(reply);
        } else if let Some(flow) = intent.flow.as_deref().and_then(|f| self.scenario.flow(f)) {
            let flow = flow.clone();
            self.session.slots.clear();
            self.session.flow = Some(ActiveFlow {
                flow: flow.id.clone(),
                intent: intent.id.clone(),
                step: 0,
            });
            self.fill_slots(&flow, text, None);
            self.run_steps(&flow).await;
        } else if let Some(action) = &intent.action {
            self.call_action(action).await;
        }
        intent.id
    }

    /// Handle a turn inside a flow; `None` when the user moved on to something else.
    async fn continue_flow(&mut self, active: &ActiveFlow, text: &str) -> Option<String> {
        let flow = self.scenario.flow(&active.flow)?.clone();
        let Some(step) = flow.steps.get(active.step) else {
            self.session.flow = None;
            return None;
        };
        let switching = || {
            intents::best(self.scenario, text)
                .is_some_and(|(intent, score)| intent.id != active.intent && score >= 0.75)
        };
        if super::repair::calls_off_flow(text) {
            // "Acha", "sitaki tena", "ghairi": the flow is called off and says so.
            self.cancel(&flow);
            return Some("cancel".into());
        }
        match step {
            Step::Confirm(question) => {
                // "hapana, nilimaanisha elfu mbili": a new value for something collected is taken, then asked again.
                if self.correct_slots(&flow, text) {
                    if self.rejected.is_empty() {
                        let question = question.clone();
                        self.say(&question);
                    }
                } else if intents::is_yes(text) {
                    self.advance();
                    self.run_steps(&flow).await;
                } else if intents::is_no(text) {
                    self.cancel(&flow);
                } else if switching() {
                    self.session.flow = None;
                    return None;
                } else {
                    let question = question.clone();
                    self.say(&question);
                }
            }
            Step::Collect(slot) => {
                if intents::is_no(text) && !self.session.slots.contains_key(slot) {
                    self.cancel(&flow);
                    return Some(active.intent.clone());
                }
                let filled = self.fill_slots(&flow, text, Some(slot));
                // A free-text answer ("Juma, kikohozi cha muda mrefu") is the answer, whatever it mentions.
                let free_text = self
                    .scenario
                    .slots
                    .get(slot)
                    .is_some_and(|s| s.kind == SlotKind::Text);
                if !filled && !free_text && switching() {
                    self.session.flow = None;
                    return None;
                }
                if self.session.slots.contains_key(slot) {
                    self.run_steps(&flow).await;
                } else {
                    let slot = slot.clone();
                    self.ask(&slot, true);
                }
            }
            Step::Action(_) | Step::Reply(_) => self.run_steps(&flow).await,
        }
        Some(active.intent.clone())
    }

    /// Fill every slot of the flow not yet filled that this turn contains; free-text slots only when asked
    /// for. Whether anything was filled.
    fn fill_slots(&mut self, flow: &Flow, text: &str, asked: Option<&str>) -> bool {
        let mut filled = false;
        // Numbers that are phones, accounts or dates are taken first and removed from what the amount
        // extractor sees, so a business number is never read as an amount.
        let mut text = text.to_string();
        let mut steps: Vec<&Step> = flow.steps.iter().collect();
        steps.sort_by_key(|step| match step {
            Step::Collect(name) => match self.scenario.slots.get(name).map(|s| s.kind) {
                Some(SlotKind::Amount) => 2,
                Some(SlotKind::Text) => 3,
                _ => 1,
            },
            _ => 0,
        });
        for step in steps {
            let Step::Collect(name) = step else { continue };
            if self.session.slots.contains_key(name) {
                continue;
            }
            let Some(slot) = self.scenario.slots.get(name) else {
                continue;
            };
            if slot.kind == SlotKind::Text && asked != Some(name.as_str()) {
                continue;
            }
            match slots::extract(slot, &text, self.now) {
                Extracted::Value(value) => {
                    text = slots::consume(slot.kind, &text, &value);
                    self.session.slots.insert(name.clone(), value);
                    filled = true;
                }
                Extracted::Rejected(heard) => {
                    text = slots::consume(slot.kind, &text, &heard);
                    self.rejected.push((name.clone(), heard));
                    filled = true;
                }
                Extracted::Nothing => {}
            }
        }
        filled
    }

    /// Take new values for slots the flow already holds, when the turn gives some; whether any changed. A value
    /// that cannot be taken is said back, and the confirmation waits.
    fn correct_slots(&mut self, flow: &Flow, text: &str) -> bool {
        let held: Vec<String> = flow
            .steps
            .iter()
            .filter_map(|step| match step {
                Step::Collect(name) => Some(name.clone()),
                _ => None,
            })
            .filter(|name| {
                self.scenario
                    .slots
                    .get(name)
                    .is_some_and(|s| s.kind != SlotKind::Text && s.kind != SlotKind::Date)
            })
            .collect();
        let before = self.session.slots.clone();
        for name in &held {
            self.session.slots.remove(name);
        }
        self.fill_slots(flow, text, None);
        let mut changed = false;
        for name in &held {
            match (self.session.slots.get(name), before.get(name)) {
                (Some(new), Some(old)) if new != old => changed = true,
                (None, Some(old)) => {
                    self.session.slots.insert(name.clone(), old.clone());
                }
                _ => {}
            }
        }
        if let Some((name, _)) = self.rejected.first().cloned() {
            self.ask(&name, true);
            return true;
        }
        changed
    }

    fn advance(&mut self) {
        if let Some(active) = &mut self.session.flow {
            active.step += 1;
        }
    }

    fn cancel(&mut self, flow: &Flow) {
        self.say(&flow.cancelled);
        self.session.flow = None;
        self.session.slots.clear();
    }

    /// Run steps from the current one until one needs the user (a question) or the flow ends.
    async fn run_steps(&mut self, flow: &Flow) {
        loop {
            let Some(index) = self.session.flow.as_ref().map(|a| a.step) else {
                return;
            };
            let Some(step) = flow.steps.get(index) else {
                if let Some(done) = &flow.done {
                    self.say(done);
                }
                // The values stay until the next flow starts or the caller cancels.
                self.session.flow = None;
                return;
            };
            match step {
                // A keyed value where the conversation has no keypad (an HTTP turn): the step is left out.
                Step::Collect(slot)
                    if super::keypad::left_out(
                        self.scenario.slots.get(slot),
                        self.session.keypad,
                    ) => {}
                Step::Collect(slot) if !self.session.slots.contains_key(slot) => {
                    let slot = slot.clone();
                    self.ask(&slot, false);
                    return;
                }
                Step::Collect(_) => {}
                Step::Confirm(question) => {
                    let question = question.clone();
                    self.say(&question);
                    return;
                }
                Step::Action(action) => {
                    let action = action.clone();
                    self.call_action(&action).await;
                }
                Step::Reply(text) => {
                    let text = text.clone();
                    self.say(&text);
                }
            }
            self.advance();
        }
    }

    /// Call an action with the slots it names, and say its success or failure template.
    async fn call_action(&mut self, name: &str) {
        let Some(action) = self.scenario.actions.get(name) else {
            return;
        };
        let arguments: Map<String, Value> = action
            .arguments
            .keys()
            .filter_map(|k| {
                self.session
                    .slots
                    .get(k)
                    .map(|v| (k.clone(), Value::String(v.clone())))
            })
            .collect();
        self.called.push(name.to_string());
        // Keyed values are sent when the call gave them; a conversation without a keypad has none to send.
        let needed = action
            .arguments
            .keys()
            .filter(|k| !super::keypad::left_out(self.scenario.slots.get(*k), self.session.keypad))
            .count();
        let outcome = if arguments.len() < needed {
            Err(super::actions::ActionError::Failed(
                "missing arguments".into(),
            ))
        } else {
            let variables = &self.session.variables;
            let (action, arguments) = super::actions::with_variables(action, &arguments, variables);
            self.actions.call(name, &action, &arguments).await
        };
        match outcome {
            Ok(result) => {
                self.session.result = result;
                self.say(&action.success);
            }
            Err(error) => {
                tracing::warn!(scenario = self.scenario.id, action = name, %error, "action failed");
                self.failed.push(name.to_string());
                self.session.result = Map::new();
                self.say(&action.failure);
            }
        }
    }
}

/// Said when a value was heard but cannot be taken, for slots that set no `out_of_range` of their own.
fn default_out_of_range(kind: SlotKind) -> &'static str {
    match kind {
        SlotKind::Amount => "Nimesikia shilingi {value}, lakini siwezi kutumia kiasi hicho hapa. Tafadhali taja kiasi tena kwa shilingi.",
        SlotKind::Account => "Namba {value} haina idadi sahihi ya tarakimu. Tafadhali itaje tena, tarakimu moja moja.",
        _ => "Sijapata jibu sahihi. Tafadhali rudia.",
    }
}
