//! The shipped scenarios: every file passes its checks and its test conversations, has the content the
//! product promises, and authors get `file:line` messages, `sauti scenario test` results and live reloads.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use sauti::dialogue::scenario;
use sauti::dialogue::testing::run_tests;
use serde_json::json;

fn shipped(id: &str) -> sauti::dialogue::Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{id}.toml"));
    scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn every_shipped_test_conversation_passes() {
    for (id, min_intents) in [("banking", 15), ("health", 12), ("general", 10)] {
        let scenario = shipped(id);
        assert!(
            scenario.intents.len() >= min_intents,
            "{id}: {} intents",
            scenario.intents.len()
        );
        assert!(
            scenario.tests.len() >= 8,
            "{id}: {} tests",
            scenario.tests.len()
        );
        let guardrail_cases = scenario
            .tests
            .iter()
            .flat_map(|t| &t.turns)
            .filter(|t| {
                matches!(
                    t.intent.as_deref(),
                    Some("guardrail" | "emergency" | "secret" | "crisis")
                )
            })
            .count();
        if id != "general" {
            assert!(guardrail_cases >= 1, "{id} has no guardrail test");
        }
        let failures: Vec<String> = run_tests(&scenario)
            .await
            .into_iter()
            .filter(|case| !case.passed())
            .map(|case| format!("{} :: {}: {:?}", id, case.name, case.failures))
            .collect();
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

#[tokio::test]
async fn a_wrong_expectation_fails_its_test() {
    let mut scenario = shipped("banking");
    let turn = &mut scenario.tests[0].turns[0];
    turn.intent = Some("goodbye".into());
    let results = run_tests(&scenario).await;
    assert!(!results[0].passed());
    assert!(
        results[0].failures[0].contains("expected intent \"goodbye\""),
        "{:?}",
        results[0].failures
    );
}

#[tokio::test]
async fn stubbed_failures_and_slot_assertions_can_fail_a_test() {
    let mut scenario = shipped("banking");
    let refused = scenario
        .tests
        .iter()
        .position(|t| t.name == "a transfer the bank refuses says no money moved")
        .expect("the shipped stubbed test");
    // The same conversation, expecting success: the stub's failure makes it fail.
    let turn = &mut scenario.tests[refused].turns[0];
    turn.reply_contains = Some(sauti::dialogue::scenario::OneOrMany::One(
        "Imekamilika".into(),
    ));
    turn.slot_was_set = Some(sauti::dialogue::scenario::OneOrMany::One(
        "amount=7000".into(),
    ));
    turn.slot_was_not_set = Some(sauti::dialogue::scenario::OneOrMany::One("phone".into()));
    let results = run_tests(&scenario).await;
    let result = &results[refused];
    assert!(!result.passed());
    let failures = result.failures.join("\n");
    for expected in [
        "does not contain \"Imekamilika\"",
        "is \"5000\", not \"7000\"",
        "slot \"phone\" was set",
    ] {
        assert!(failures.contains(expected), "{failures}");
    }
    assert_eq!(result.checks["reply_contains"], (0, 1));
    assert_eq!(result.checks["slot_was_set"], (0, 1));
}

#[test]
fn own_signs_and_patterns_that_do_not_compile_fail_closed() {
    // Loading refuses them; a scenario changed in code after loading escalates and blocks instead of skipping.
    let mut scenario = shipped("general");
    scenario.guardrails.crisis_signs = vec!["@NO_SUCH_CLASS".into()];
    scenario.guardrails.blocked_replies = vec!["(unclosed".into()];
    scenario.guardrails.compiled = Default::default();
    assert_eq!(
        sauti::dialogue::safety::screen(&scenario, "habari za asubuhi"),
        Some(sauti::dialogue::safety::SafetyCase::Crisis)
    );
    let blocked = sauti::dialogue::guardrails::screen_reply(&scenario, "Karibu sana!", "asante");
    assert!(matches!(
        blocked,
        Some((sauti::dialogue::guardrails::Blocked::Pattern, _))
    ));
    // The shipped scenario itself: compiled once, nothing escalated for a greeting.
    let shipped = shipped("general");
    assert_eq!(
        sauti::dialogue::safety::screen(&shipped, "habari za asubuhi"),
        None
    );
    assert!(shipped
        .guardrails
        .compiled(&shipped.safety.current())
        .crisis
        .is_some());
}

/// Write `source` to `file`, run `sauti scenario check` on it, require a failure and return what it printed.
fn refused_by_check(file: &Path, source: &str) -> String {
    std::fs::write(file, source).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["scenario", "check"])
        .arg(file)
        .output()
        .unwrap();
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn check_reports_file_and_line() {
    let dir = temp_dir();
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/general.toml"),
    )
    .unwrap();
    // A flow reference that does not exist, on a known line.
    let broken = format!("{source}\n[[intents]]\nid = \"broken\"\nexamples = [\"a b\", \"c d\"]\nflow = \"nowhere\"\n");
    let line = broken
        .lines()
        .position(|l| l == "flow = \"nowhere\"")
        .unwrap()
        + 1;
    let file = dir.path().join("general.toml");
    let stderr = refused_by_check(&file, &broken);
    assert!(
        stderr.contains(&format!(
            "general.toml:{line}: intent \"broken\": no flow \"nowhere\""
        )),
        "{stderr}"
    );

    // A TOML syntax error names its line too.
    assert!(refused_by_check(&file, "id = \"general\"\nname = \n").contains("general.toml:2:"));

    // A control character in a comment (found by the scenario fuzz target: TOML's own message is empty there).
    let stderr = refused_by_check(&file, "id = \"general\"\n# maoni \u{1}\nname = \"x\"\n");
    assert!(
        stderr.contains("general.toml:2: unexpected character U+0001"),
        "{stderr}"
    );
}

#[test]
fn scenario_test_prints_each_case() {
    let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["scenario", "test", "scenarios/health.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let cases = shipped("health").tests.len();
    assert_eq!(stdout.matches("PASS health :: ").count(), cases, "{stdout}");
    assert!(stdout.contains(&format!("{cases} passed, 0 failed")));
}

#[test]
fn edited_files_reload_and_broken_edits_keep_the_last_good_version() {
    let dir = temp_dir();
    for id in ["general", "banking", "health"] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{id}.toml"));
        std::fs::copy(from, dir.path().join(format!("{id}.toml"))).unwrap();
    }
    let data = temp_dir();
    let scenarios = dir.path().display().to_string();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__DIALOGUE__SCENARIOS_DIR", scenarios.as_str()),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let say = || {
        let reply = post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({ "text": "" }),
        );
        // An empty text is refused: use the greeting through a fresh scenario turn instead.
        assert_eq!(reply.status, 422);
        let reply = post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({ "text": "unajua kuruka angani kwa mbawa za karatasi?" }),
        );
        assert_eq!(reply.status, 200);
        reply.json()["agent_text"].as_str().unwrap().to_string()
    };
    let before = say();
    let file = dir.path().join("general.toml");
    let source = std::fs::read_to_string(&file).unwrap();
    let fallback = sauti::dialogue::scenario::parse("general.toml", &source, None)
        .unwrap()
        .fallback;
    assert!(fallback.contains(&before), "{before}");

    // A good edit: the fallback changes within a few seconds.
    let edited = source.replacen(
        &format!("{:?}", fallback[0]),
        "\"Samahani, hilo sijui bado.\"",
        1,
    );
    assert_ne!(
        edited, source,
        "the first fallback is written as a TOML basic string"
    );
    std::fs::write(&file, &edited).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while say() != "Samahani, hilo sijui bado." {
        assert!(Instant::now() < deadline, "the edit was not picked up");
        std::thread::sleep(Duration::from_millis(300));
    }

    // A broken edit: refused, and the last good version keeps answering. Then a good edit of banking.toml, which
    // each reload reads before general.toml (files go in name order): once it answers, a reload has read the
    // broken file too.
    std::fs::write(&file, edited.replace("language = \"sw\"", "language = 12")).unwrap();
    let banking = dir.path().join("banking.toml");
    let source = std::fs::read_to_string(&banking).unwrap();
    let marked = source.replacen(
        "Samahani, sijakuelewa vizuri.",
        "Samahani, benki haijakuelewa.",
        1,
    );
    assert_ne!(marked, source, "banking.toml's first fallback");
    std::fs::write(&banking, marked).unwrap();
    let bank_says = || {
        let reply = post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({ "text": "unajua kuruka angani kwa mbawa za karatasi?", "scenario": "banking" }),
        );
        assert_eq!(reply.status, 200);
        reply.json()["agent_text"].as_str().unwrap().to_string()
    };
    wait_until(
        Instant::now() + Duration::from_secs(10),
        "a reload read the edited files",
        || bank_says().starts_with("Samahani, benki haijakuelewa."),
    );
    assert_eq!(say(), "Samahani, hilo sijui bado.");
}

#[tokio::test]
async fn matching_forgives_case_punctuation_spelling_and_verb_forms() {
    use sauti::dialogue::{converse, RecordingActions, ScenarioBackend, Session};
    let scenario = shipped("banking");
    let backend = ScenarioBackend::new(std::sync::Arc::new(RecordingActions::default()));
    for (said, intent) in [
        ("NATAKA KUTUMA PESA!!!", "send_money"),
        ("nataka kutma pesa", "send_money"),
        ("tunataka kutumiana pesa", "send_money"),
        ("Kadi yangu imeibiwa.", "block_card"),
        ("nilipoteza kadi jana", "block_card"),
        ("salio langu ni kiasi gani?", "balance"),
        ("nimesahau PIN yangu", "pin_reset"),
        ("tawi linafunguliwa saa ngapi", "branch_hours"),
    ] {
        let mut session = Session::default();
        let reply = converse(&scenario, &mut session, said, &backend, None)
            .await
            .unwrap();
        assert_eq!(reply.outcome, intent, "{said:?} → {:?}", reply.text);
    }
    // Slots fill from the turn that starts the flow, in words or digits, and carry across turns.
    let mut session = Session::default();
    let reply = converse(
        &scenario,
        &mut session,
        "nataka kutuma shilingi elfu kumi na mbili",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert!(reply.text.contains("namba ya simu"), "{}", reply.text);
    let reply = converse(
        &scenario,
        &mut session,
        "kwa +255 754 000 111",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert!(
        reply.text.contains("elfu kumi na mbili")
            && reply
                .text
                .contains("jumlisha mbili tano tano, saba tano nne"),
        "{}",
        reply.text
    );
    let reply = converse(&scenario, &mut session, "hapana, acha", &backend, None)
        .await
        .unwrap();
    assert!(reply.text.contains("nimesitisha"), "{}", reply.text);
    assert!(session.flow.is_none() && session.slots.is_empty());
}

#[tokio::test]
async fn negated_yes_cancels_and_business_numbers_are_not_amounts() {
    use sauti::dialogue::{converse, RecordingActions, ScenarioBackend, Session};
    let scenario = shipped("banking");
    let actions = std::sync::Arc::new(RecordingActions::default());
    let backend = ScenarioBackend::new(actions.clone());
    let mut session = Session::default();
    converse(
        &scenario,
        &mut session,
        "nitatuma shilingi 5000 kwa 0712345678",
        &backend,
        None,
    )
    .await
    .unwrap();
    let reply = converse(&scenario, &mut session, "si sawa", &backend, None)
        .await
        .unwrap();
    assert!(reply.text.contains("nimesitisha"), "{}", reply.text);
    assert!(actions.take().is_empty(), "nothing was sent");

    let mut session = Session::default();
    let reply = converse(
        &scenario,
        &mut session,
        "nataka kulipa bili kwa namba 12345678",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert!(!reply.text.contains("shilingi 12345678"), "{}", reply.text);
    assert_eq!(
        session.slots.get("business_number").map(String::as_str),
        Some("12345678")
    );
    assert!(!session.slots.contains_key("amount"));
}
