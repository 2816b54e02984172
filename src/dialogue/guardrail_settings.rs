//! A scenario's `[guardrails]`: its replies for safety cases, its own signs, its changes to the built-in
//! categories and its blocked reply patterns, compiled against the safety rules in use.

use std::collections::BTreeMap;

use serde::Deserialize;

fn on() -> bool {
    true
}

/// Safety rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guardrails {
    /// Warn a caller who offers a PIN, password, one-time code or CVV, and never ask for or repeat one
    /// (on unless a scenario turns it off).
    #[serde(default = "on")]
    pub secrets: bool,
    /// Said to a user who offers a secret.
    #[serde(default)]
    pub secret_warning: Option<String>,
    /// Never diagnose or prescribe doses.
    #[serde(default)]
    pub medical: bool,
    /// Replaces a reply that diagnoses or names a dose.
    #[serde(default)]
    pub medical_notice: Option<String>,
    /// Signs of the scenario's own that make a turn an emergency (besides the safety rules).
    #[serde(default)]
    pub emergency_signs: Vec<String>,
    /// Said first when an emergency sign appears: the emergency numbers.
    #[serde(default)]
    pub emergency_reply: Option<String>,
    /// Replaces the built-in advice said after `emergency_reply`, by category (`poisoning`, `burns`, …).
    #[serde(default)]
    pub emergency_advice: BTreeMap<String, String>,
    /// Signs of the scenario's own for suicidal thoughts or self-harm (besides the safety rules).
    #[serde(default)]
    pub crisis_signs: Vec<String>,
    /// The caring reply, with the crisis lines to call, for suicidal thoughts or self-harm.
    #[serde(default)]
    pub crisis_reply: Option<String>,
    /// Built-in categories this scenario extends with signs of its own, or narrows with exceptions
    /// (`[guardrails.categories.poisoning]`); a crisis category cannot be narrowed.
    #[serde(default)]
    pub categories: BTreeMap<String, CategoryChange>,
    /// Extra regular expressions an outgoing reply must not match.
    #[serde(default)]
    pub blocked_replies: Vec<String>,
    /// Replaces a blocked reply.
    #[serde(default)]
    pub safe_reply: Option<String>,
    /// The signs and patterns above, compiled once per version of the safety rules.
    #[serde(skip)]
    pub compiled: CompiledCache,
}

/// A scenario's change to a built-in category of the safety rules.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryChange {
    /// More signs for the category (answered with its advice).
    #[serde(default)]
    pub signs: Vec<String>,
    /// Signs that make a turn not this category (an emergency category only).
    #[serde(default)]
    pub unless: Vec<String>,
}

/// A category change, compiled.
#[derive(Debug, Clone)]
pub struct CompiledChange {
    /// `signs`.
    pub signs: Vec<super::safety::signs::Sign>,
    /// `unless`.
    pub unless: Vec<super::safety::signs::Sign>,
}

/// A scenario's own signs and blocked patterns, compiled. `None` is a list that does not compile, which loading
/// refuses; a scenario made some other way fails closed on it (every turn escalated, every reply blocked).
#[derive(Debug, Clone)]
pub struct CompiledGuardrails {
    /// `emergency_signs`.
    pub emergency: Option<Vec<super::safety::signs::Sign>>,
    /// `crisis_signs`.
    pub crisis: Option<Vec<super::safety::signs::Sign>>,
    /// `categories`, by id.
    pub categories: Option<BTreeMap<String, CompiledChange>>,
    /// `blocked_replies`.
    pub blocked: Option<Vec<regex::Regex>>,
}

/// The compiled guardrails and the version of the rules they were compiled against.
#[derive(Debug, Default)]
pub struct CompiledCache(std::sync::Mutex<Option<(u64, std::sync::Arc<CompiledGuardrails>)>>);

impl Clone for CompiledCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl Guardrails {
    /// The scenario's own signs, category changes and blocked patterns, compiled against `rules` the first time
    /// they are needed with that version of the rules.
    pub fn compiled(
        &self,
        rules: &super::safety::SafetyRules,
    ) -> std::sync::Arc<CompiledGuardrails> {
        let mut cache = self.compiled.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((generation, compiled)) = cache.as_ref() {
            if *generation == rules.generation {
                return std::sync::Arc::clone(compiled);
            }
        }
        let compiled =
            std::sync::Arc::new(self.compile(rules).unwrap_or_else(|_| CompiledGuardrails {
                emergency: None,
                crisis: None,
                categories: None,
                blocked: None,
            }));
        *cache = Some((rules.generation, std::sync::Arc::clone(&compiled)));
        compiled
    }

    /// Compile against `rules`: every list that compiles, and the first problem when one does not.
    pub fn compile(
        &self,
        rules: &super::safety::SafetyRules,
    ) -> Result<CompiledGuardrails, (String, String)> {
        let first_problem: std::cell::RefCell<Option<(String, String)>> = Default::default();
        let note = |field: &str, problem: String| {
            first_problem
                .borrow_mut()
                .get_or_insert((field.to_string(), problem));
        };
        let lexicon = &rules.lexicon;
        let window = super::safety::DEFAULT_WINDOW;
        let signs = |field: &str, texts: &[String], window: usize| {
            lexicon
                .compile_signs(texts, window)
                .map_err(|e| note(field, e.to_string()))
                .ok()
        };
        let emergency = signs("emergency_signs", &self.emergency_signs, window);
        let crisis = signs("crisis_signs", &self.crisis_signs, window);
        let mut categories = Some(BTreeMap::new());
        for (id, change) in &self.categories {
            let compiled = match lexicon.category(id) {
                None => {
                    let known: Vec<&str> =
                        lexicon.categories.iter().map(|c| c.id.as_str()).collect();
                    note(
                        "categories",
                        format!("no built-in category {id:?} (known: {})", known.join(", ")),
                    );
                    None
                }
                Some(category) if category.crisis && !change.unless.is_empty() => {
                    note(
                        "categories",
                        format!("the crisis category {id:?} cannot be narrowed with unless"),
                    );
                    None
                }
                Some(category) => signs("categories", &change.signs, category.window)
                    .zip(signs(
                        "categories",
                        &change.unless,
                        super::safety::lexicon::WHOLE_TURN,
                    ))
                    .map(|(signs, unless)| CompiledChange { signs, unless }),
            };
            match (compiled, categories.as_mut()) {
                (Some(c), Some(all)) => {
                    all.insert(id.clone(), c);
                }
                _ => categories = None,
            }
        }
        let blocked = self
            .blocked_replies
            .iter()
            .map(|p| regex::Regex::new(p))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                note(
                    "blocked_replies",
                    format!("blocked reply pattern does not compile: {e}"),
                )
            })
            .ok();
        let compiled = CompiledGuardrails {
            emergency,
            crisis,
            categories,
            blocked,
        };
        match first_problem.into_inner() {
            Some(problem) => Err(problem),
            None => Ok(compiled),
        }
    }
}

impl Default for Guardrails {
    fn default() -> Self {
        Self {
            secrets: true,
            secret_warning: None,
            medical: false,
            medical_notice: None,
            emergency_signs: Vec::new(),
            emergency_reply: None,
            emergency_advice: BTreeMap::new(),
            crisis_signs: Vec::new(),
            crisis_reply: None,
            categories: BTreeMap::new(),
            blocked_replies: Vec::new(),
            safe_reply: None,
            compiled: CompiledCache::default(),
        }
    }
}
