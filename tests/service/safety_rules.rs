//! Black-box tests of the safety rules as data: a scenarios folder's `language/safety.toml` is used by the real
//! binary, a broken copy stops start-up with its line, a broken edit is refused while the last good rules keep
//! answering, and a good edit is taken up without a restart.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;

use common::*;
use serde_json::json;

const BUILT_IN: &str = include_str!("../../scenarios/language/safety.toml");

/// The built-in advice for someone who is not breathing.
fn built_in_advice() -> &'static str {
    let at = BUILT_IN.find("id = \"breathing\"").unwrap();
    let line = BUILT_IN[at..]
        .lines()
        .find(|l| l.starts_with("advice = "))
        .unwrap();
    line.trim_start_matches("advice = ").trim_matches('"')
}

/// The built-in rules with other advice for someone who is not breathing.
fn rules_with_advice(advice: &str) -> String {
    BUILT_IN.replace(built_in_advice(), advice)
}

fn write_later(path: &Path, text: &str) {
    // Modification times may be whole seconds: wait for the next one.
    std::thread::sleep(Duration::from_millis(1_100));
    std::fs::write(path, text).unwrap();
}

/// The agent's text reply to an emergency told in Sheng ("the old man collapsed and is not breathing").
fn emergency_reply(server: &Server) -> String {
    std::thread::sleep(Duration::from_millis(100));
    let reply = post_json(
        &server.url("/v1/voice-agent/converse"),
        Some(KEY_A),
        &json!({ "text": "buda amedondoka hapumui", "scenario": "banking" }),
    );
    agent_text(&reply)
}

#[test]
fn safety_rules_come_from_the_scenarios_folder_and_a_broken_edit_keeps_the_last_good_ones() {
    let data = temp_dir();
    let scenarios = data.path().join("scenarios");
    std::fs::create_dir_all(scenarios.join("language")).unwrap();
    let file = scenarios.join("language/safety.toml");
    std::fs::write(
        &file,
        rules_with_advice("Dharura ya tawi: piga 0800 111 222 sasa hivi."),
    )
    .unwrap();
    std::fs::write(
        scenarios.join("banking.toml"),
        include_str!("../../scenarios/banking.toml"),
    )
    .unwrap();
    let folder = scenarios.to_str().unwrap();
    // The test polls for edits being taken up: more turns than a key's default minute allows.
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__DIALOGUE__SCENARIOS_DIR", folder),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let first = emergency_reply(&server);
    assert!(
        first.ends_with("Dharura ya tawi: piga 0800 111 222 sasa hivi."),
        "{first}"
    );

    // A pattern that does not compile: refused, and the rules in use stay (the emergency is still caught, with
    // their advice).
    let broken = rules_with_advice("Dharura iliyovunjika.").replace(
        "diagnoses = [\n",
        "diagnoses = [\n  '(?:una|ana)\\s+(malaria',\n",
    );
    write_later(&file, &broken);
    std::thread::sleep(Duration::from_secs(5));
    let kept = emergency_reply(&server);
    assert!(
        kept.ends_with("Dharura ya tawi: piga 0800 111 222 sasa hivi."),
        "{kept}"
    );

    // `sauti scenario check` names the file and the line at fault.
    let line = broken
        .lines()
        .position(|l| l.contains("(malaria'"))
        .unwrap()
        + 1;
    let check = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["scenario", "check"])
        .arg(scenarios.join("banking.toml"))
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&check.stderr).to_string()
        + &String::from_utf8_lossy(&check.stdout);
    assert!(!check.status.success(), "{printed}");
    assert!(
        printed.contains(&format!("safety.toml:{line}:")),
        "line {line}: {printed}"
    );

    // A server cannot start on the broken copy: it says where the problem is.
    let refused = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data.path().join("second"))
        .env("SAUTI__DIALOGUE__SCENARIOS_DIR", folder)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(said.contains(&format!("safety.toml:{line}:")), "{said}");

    // A good edit is taken up without a restart.
    write_later(
        &file,
        &rules_with_advice("Dharura: piga 0800 333 444 sasa hivi."),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    wait_until(deadline, "the new rules", || {
        emergency_reply(&server).ends_with("Dharura: piga 0800 333 444 sasa hivi.")
    });

    // Removed: the built-in rules again.
    std::fs::remove_file(&file).unwrap();
    wait_until(
        Instant::now() + Duration::from_secs(20),
        "the built-in rules",
        || emergency_reply(&server).ends_with(built_in_advice()),
    );
}
