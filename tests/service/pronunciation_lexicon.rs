//! Pronunciation beyond a request's own dictionaries, black box: the operator's server-wide lexicon (and a bad
//! one stopping start-up), the agent's spoken reply read with the dictionaries it names, and
//! `sauti text phonemes --dictionary`.

use crate::common;

use std::process::Command;

use common::cli::{sauti, stdout};
use common::dictionaries::*;
use common::{post_json, problem_body, KEY_A, KEY_B};
use serde_json::{json, Value};

#[test]
fn the_operators_lexicon_applies_to_every_request_and_a_bad_one_stops_start_up() {
    let data = common::temp_dir();
    let file = data.path().join("lexicon.json");
    std::fs::write(
        &file,
        r#"{"rules": [{"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "ˈnɛ.rɔ.bi", "alphabet": "ipa"}]}"#,
    )
    .unwrap();
    let plain = {
        let server = start(&data, &[]);
        audio(&speak(&server, KEY_A, json!([])))
    };
    let path = file.display().to_string();
    let server = start(&data, &[("SAUTI__TTS__LEXICON_PATH", path.as_str())]);
    let served = audio(&speak(&server, KEY_A, json!([])));
    assert_ne!(
        served, plain,
        "the server-wide rule applies without a locator"
    );
    drop(server);

    let bad = data.path().join("bad.pls");
    std::fs::write(&bad, PLS.replace("ˈnɛ.rɔ.bi", "nɛQ")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__STORAGE__DATA_DIR", data.path())
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__AUTH__API_KEYS", KEY_A)
        .env("SAUTI__TTS__LEXICON_PATH", &bad)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("tts.lexicon_path")
            && stderr.contains("line 10")
            && stderr.contains("\"Q\""),
        "{stderr}"
    );
}

#[test]
fn the_agents_spoken_reply_reads_with_the_dictionaries_it_names() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let words = [
        "na",
        "ya",
        "wa",
        "ni",
        "kwa",
        "habari",
        "karibu",
        "je",
        "nini",
        "tafadhali",
        "asante",
    ];
    let rules: Vec<Value> = words
        .iter()
        .map(|w| json!({"type": "alias", "string_to_replace": w, "alias": "bababa"}))
        .collect();
    let made = create(&server, KEY_A, &json!({"name": "Maneno", "rules": rules})).json();
    let turn = |key: &str, locators: Value| {
        post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(key),
            &json!({"text": "Habari", "pronunciation_dictionary_locators": locators}),
        )
    };
    let plain = turn(KEY_A, json!([])).json();
    let ruled = turn(KEY_A, locator(&made));
    assert_eq!(
        ruled.status,
        200,
        "{}",
        String::from_utf8_lossy(&ruled.body)
    );
    let ruled = ruled.json();
    assert_eq!(
        ruled["agent_text"], plain["agent_text"],
        "the words are the same"
    );
    assert_ne!(
        ruled["audio_base64"], plain["audio_base64"],
        "the reading is not"
    );
    problem_body(&turn(KEY_B, locator(&made)), 404);
}

#[test]
fn text_phonemes_and_normalize_show_a_dictionarys_rules() {
    let dir = common::temp_dir();
    let pls = dir.path().join("majina.pls");
    std::fs::write(&pls, PLS).unwrap();
    let json = dir.path().join("sheng.json");
    std::fs::write(&json, rules_body().to_string()).unwrap();
    let plain = stdout(&sauti(&["text", "phonemes", "Nairobi"]));
    let ruled = sauti(&[
        "text",
        "phonemes",
        "--dictionary",
        pls.to_str().unwrap(),
        "Nairobi",
    ]);
    assert!(
        ruled.status.success(),
        "{}",
        String::from_utf8_lossy(&ruled.stderr)
    );
    assert!(stdout(&ruled).contains("nɛ.ˈrɔ.bi"), "{}", stdout(&ruled));
    assert!(!plain.contains("nɛ.ˈrɔ.bi"), "{plain}");
    let normalized = sauti(&[
        "text",
        "normalize",
        "--dictionary",
        pls.to_str().unwrap(),
        "--dictionary",
        json.to_str().unwrap(),
        "Sheng ya M-Pesa",
    ]);
    assert_eq!(stdout(&normalized).trim(), "sheng'i ya em pesa");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"[{"type": "phoneme", "string_to_replace": "x", "phoneme": "Q", "alphabet": "ipa"}]"#,
    )
    .unwrap();
    let refused = sauti(&[
        "text",
        "phonemes",
        "--dictionary",
        bad.to_str().unwrap(),
        "x",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("\"Q\""));
}
