//! The safety and keypad guards of the shipped scenarios: a scenario's changes to a built-in category, a code said
//! right after a secret was named, and a PIN keyed on a call.

use std::path::Path;

use sauti::dialogue::scenario;

fn shipped(id: &str) -> sauti::dialogue::Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{id}.toml"));
    scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_scenario_extends_and_narrows_a_built_in_category_but_never_a_crisis() {
    use sauti::dialogue::safety::{screen, SafetyCase};
    let source = include_str!("../../scenarios/general.toml");
    let shipped = scenario::parse("general.toml", source, Some("general")).unwrap();
    let drill = "tunafanya drill ya dharura: mtu amezimia ofisini";
    let licked = "mtoto amelamba kiberiti";
    assert_eq!(
        screen(&shipped, drill),
        Some(SafetyCase::Emergency("unconscious".into()))
    );
    assert_eq!(screen(&shipped, licked), None);

    let changed = format!(
        "{source}\n[guardrails.categories.unconscious]\nunless = [\"drill|zoezi_la_dharura\"]\n\n\
         [guardrails.categories.poisoning]\nsigns = [\"lamba kiberiti\"]\n"
    );
    let scenario = scenario::parse("general.toml", &changed, Some("general")).unwrap();
    assert_eq!(screen(&scenario, drill), None, "narrowed");
    assert_eq!(
        screen(&scenario, "mtu amezimia ofisini hajitambui"),
        Some(SafetyCase::Emergency("unconscious".into())),
        "the rest of the category stays"
    );
    assert_eq!(
        screen(&scenario, licked),
        Some(SafetyCase::Emergency("poisoning".into()))
    );
    let reply =
        sauti::dialogue::safety::reply(&scenario, &SafetyCase::Emergency("poisoning".into()));
    let advice = scenario
        .safety
        .current()
        .lexicon
        .category("poisoning")
        .unwrap()
        .advice
        .clone()
        .unwrap();
    assert!(reply.ends_with(&advice), "{reply}");

    for (change, problem) in [
        (
            "[guardrails.categories.crisis]\nunless = [\"filamu\"]\n",
            "cannot be narrowed",
        ),
        (
            "[guardrails.categories.no_such]\nsigns = [\"homa\"]\n",
            "no built-in category",
        ),
        (
            "[guardrails.categories.burns]\nsigns = [\"@NO_CLASS\"]\n",
            "no word class",
        ),
    ] {
        let text = format!("{source}\n{change}");
        let error = scenario::parse("general.toml", &text, Some("general")).unwrap_err();
        assert!(error.message.contains(problem), "{error}");
        let line = text
            .lines()
            .position(|l| l.starts_with("[guardrails.categories"))
            .unwrap()
            + 1;
        assert!(error.line >= 134 && error.line <= line + 1, "{error}");
    }
}

#[tokio::test]
async fn a_code_said_right_after_the_caller_named_a_secret_is_that_secret() {
    use sauti::dialogue::{converse, RecordingActions, Role, ScenarioBackend, Session};
    let scenario = shipped("banking");
    let backend = ScenarioBackend::new(std::sync::Arc::new(RecordingActions::default()));
    let mut session = Session::default();
    let first = converse(
        &scenario,
        &mut session,
        "pin yangu imefungwa",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert_eq!(first.outcome, "pin_reset");
    let code = converse(
        &scenario,
        &mut session,
        "ni moja mbili tatu nne kama unataka kuijua",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert_eq!(code.outcome, "secret", "{}", code.text);
    let kept: Vec<&str> = session
        .history
        .iter()
        .filter(|(role, _)| *role == Role::User)
        .map(|(_, text)| text.as_str())
        .collect();
    assert!(!kept[1].contains("moja mbili tatu"), "{kept:?}");
    // Without the secret named just before, a bare number is an ordinary turn.
    let mut fresh = Session::default();
    let plain = converse(
        &scenario,
        &mut fresh,
        "ni moja mbili tatu nne",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert_ne!(plain.outcome, "secret");
}

#[tokio::test]
async fn a_pin_keyed_on_a_call_completes_the_balance_step_and_is_kept_only_as_its_digest() {
    use sauti::dialogue::keypad::converse_keys;
    use sauti::dialogue::{converse, RecordingActions, ScenarioBackend, Session};
    let scenario = shipped("banking");
    let actions = std::sync::Arc::new(RecordingActions::default());
    let backend = ScenarioBackend::new(actions.clone());
    let mut session = Session::default();
    // "Bonyeza 1 kwa salio": the key stands for the balance intent; the account is keyed too.
    let menu = converse_keys(&scenario, &mut session, "1", &backend, None)
        .await
        .unwrap();
    assert_eq!(menu.outcome, "balance", "{}", menu.text);
    let account = converse_keys(&scenario, &mut session, "0123456789", &backend, None)
        .await
        .unwrap();
    assert!(account.text.contains("bonyeza PIN"), "{}", account.text);
    let short = converse_keys(&scenario, &mut session, "48", &backend, None)
        .await
        .unwrap();
    assert!(short.text.contains("tarakimu nne"), "{}", short.text);
    let done = converse_keys(&scenario, &mut session, "4821", &backend, None)
        .await
        .unwrap();
    assert!(done.text.contains("Salio"), "{}", done.text);
    let calls = actions.take();
    let (name, arguments) = calls.last().unwrap();
    assert_eq!(name, "balance");
    assert_eq!(arguments["account"], "0123456789");
    let pin = arguments["pin"].as_str().unwrap();
    assert!(pin.starts_with("sha256:") && pin.len() == 71, "{pin}");
    let remembered = serde_json::to_string(&session).unwrap();
    assert!(!remembered.contains("4821"), "{remembered}");
    // No later reply may say it.
    let later = converse(
        &scenario,
        &mut session,
        "PIN yangu ilikuwa ipi?",
        &backend,
        None,
    )
    .await
    .unwrap();
    assert!(!later.text.contains("4821"));

    // An HTTP conversation has no keypad: the step is left out and the balance is asked without a PIN.
    let mut typed = Session::default();
    converse(&scenario, &mut typed, "nataka kujua salio", &backend, None)
        .await
        .unwrap();
    let answered = converse(&scenario, &mut typed, "0123456789", &backend, None)
        .await
        .unwrap();
    assert!(answered.text.contains("Salio"), "{}", answered.text);
    let (_, arguments) = actions.take().pop().unwrap();
    assert!(arguments.get("pin").is_none());

    // At a confirm step, 1 is yes: the money is sent; 2 is no.
    let mut sending = Session::default();
    converse(
        &scenario,
        &mut sending,
        "nataka kutuma shilingi elfu tano kwa 0712345678",
        &backend,
        None,
    )
    .await
    .unwrap();
    let sent = converse_keys(&scenario, &mut sending, "1", &backend, None)
        .await
        .unwrap();
    assert_eq!(sent.actions, ["send_money"], "{}", sent.text);
    assert_eq!(actions.take().pop().unwrap().1["amount"], "5000");
    let mut declined = Session::default();
    converse(
        &scenario,
        &mut declined,
        "nataka kutuma shilingi elfu tano kwa 0712345678",
        &backend,
        None,
    )
    .await
    .unwrap();
    let stopped = converse_keys(&scenario, &mut declined, "2", &backend, None)
        .await
        .unwrap();
    assert!(
        stopped.actions.is_empty() && declined.flow.is_none(),
        "{}",
        stopped.text
    );
    assert!(actions.take().is_empty());

    // A key that stands for nothing gets the fallback, the key itself never written down.
    let mut other = Session::default();
    let nothing = converse_keys(&scenario, &mut other, "9", &backend, None)
        .await
        .unwrap();
    assert_eq!(nothing.outcome, "fallback");
    assert_eq!(other.history[0].1, "(vitufe) *");
}

#[tokio::test]
async fn a_caller_posing_as_staff_decides_for_fraud_but_the_words_alone_do_not() {
    use sauti::dialogue::{converse, RecordingActions, ScenarioBackend, Session};
    let scenario = shipped("banking");
    let backend = ScenarioBackend::new(std::sync::Arc::new(RecordingActions::default()));
    for (said, intent) in [
        (
            "nimepigiwa na mtu anasema ni wa benki ananiomba nimtumie code iliyokuja kwa sms",
            "fraud_report",
        ),
        ("mtu ananiomba otp nifanye nini", "fraud_report"),
        ("nataka kuuliza kuhusu pin yangu imefungwa", "pin_reset"),
        ("sema jinsi ya kubadilisha pin", "pin_reset"),
        (
            "nimempa mke wangu pin yangu sasa nataka kuibadilisha",
            "pin_reset",
        ),
        (
            "hapana sijampa mtu yeyote pin yangu nataka tu kuibadilisha",
            "pin_reset",
        ),
    ] {
        let mut session = Session::default();
        let reply = converse(&scenario, &mut session, said, &backend, None)
            .await
            .unwrap();
        assert_eq!(reply.outcome, intent, "{said:?} → {}", reply.text);
    }
}

#[test]
fn a_transfer_that_names_no_intent_or_no_reachable_line_is_refused_with_its_line() {
    let source = include_str!("../../scenarios/banking.toml");
    let shipped = scenario::parse("banking.toml", source, Some("banking")).unwrap();
    let ons: Vec<&str> = shipped
        .call
        .transfers
        .iter()
        .map(|t| t.on.as_str())
        .collect();
    assert_eq!(ons, ["human_agent", "emergency"]);
    assert_eq!(shipped.call.end_after, ["goodbye"]);
    for (from, to, problem) in [
        ("on = \"human_agent\"", "on = \"mhudumu\"", "not an intent"),
        (
            "to = \"+255222110000\"",
            "to = \"tel:0800\"",
            "not a phone number",
        ),
        (
            "to = \"+255222110000\"",
            "to = \"sip:afisa\"",
            "not a sip: address",
        ),
        (
            "on = \"emergency\"",
            "on = \"human_agent\"",
            "two transfers",
        ),
        ("decline_seconds = 4", "decline_seconds = 300", "at most 30"),
        (
            "end_after = [\"goodbye\"]",
            "end_after = [\"kwaheri\"]",
            "not an intent",
        ),
    ] {
        let text = source.replacen(from, to, 1);
        assert_ne!(text, source, "{from}");
        let error = scenario::parse("banking.toml", &text, Some("banking")).unwrap_err();
        assert!(error.message.contains(problem), "{to}: {error}");
        let line = text.lines().position(|l| l.contains(to)).unwrap() + 1;
        assert!(
            error.line.abs_diff(line) <= 6,
            "{to}: line {} for {line}",
            error.line
        );
    }
}
