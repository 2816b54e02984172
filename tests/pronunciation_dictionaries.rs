//! Pronunciation dictionaries, black box: created from rules and from a PLS file, listed, read, used in a
//! synthesis and a job (the audio changes), private to their key, refused with the rule, line or symbol at
//! fault, kept across a restart; the operator's server-wide lexicon; `sauti text phonemes --dictionary`.

mod common;

use std::process::Command;
use std::time::Duration;

use common::cli::{sauti, stdout};
use common::{get, method, post_json, post_raw, problem_body, Reply, Server, KEY_A, KEY_B};
use serde_json::{json, Value};

const BOUNDARY: &str = "sauti-dictionary-boundary-7d1";
const TEXT: &str = "Nimefika Nairobi leo.";

const PLS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
      alphabet="ipa" xml:lang="sw">
  <lexeme>
    <grapheme>M-Pesa</grapheme>
    <alias>em pesa</alias>
  </lexeme>
  <lexeme>
    <grapheme>Nairobi</grapheme>
    <phoneme>ˈnɛ.rɔ.bi</phoneme>
  </lexeme>
</lexicon>
"#;

fn start(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

fn rules_body() -> Value {
    json!({
        "name": "Majina",
        "description": "Names read right",
        "rules": [
            {"type": "alias", "string_to_replace": "Sheng", "alias": "sheng'i"},
            {"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "ˈnɛ.rɔ.bi", "alphabet": "ipa"}
        ]
    })
}

fn create(server: &Server, key: &str, body: &Value) -> Reply {
    post_json(
        &server.url("/v1/pronunciation-dictionaries/add-from-rules"),
        Some(key),
        body,
    )
}

fn upload(server: &Server, key: &str, file_name: &str, file: &[u8], name: Option<&str>) -> Reply {
    let mut body = Vec::new();
    if let Some(name) = name {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n{name}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/pls+xml\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    post_raw(
        &server.url("/v1/pronunciation-dictionaries/add-from-file"),
        Some(key),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &body,
    )
}

/// The base64 WAV of a synthesis of `TEXT` with these locators.
fn speak(server: &Server, key: &str, locators: Value) -> Reply {
    post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(key),
        &json!({"text": TEXT, "pronunciation_dictionary_locators": locators}),
    )
}

fn audio(reply: &Reply) -> String {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()["audio_base64"].as_str().unwrap().to_string()
}

fn locator(dictionary: &Value) -> Value {
    json!([{"pronunciation_dictionary_id": dictionary["id"], "version_id": dictionary["version_id"]}])
}

#[test]
fn a_dictionary_is_created_listed_read_used_private_and_deleted() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let reply = create(&server, KEY_A, &rules_body());
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let made = reply.json();
    let id = made["id"].as_str().unwrap().to_string();
    assert_eq!(
        reply.header("location"),
        Some(format!("/v1/pronunciation-dictionaries/{id}").as_str())
    );
    assert_eq!(made["name"], "Majina");
    assert_eq!(made["version_rules_num"], 2);
    assert!(made["version_id"].as_str().unwrap().starts_with("pdv_"));

    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(listed["has_more"], false);
    assert_eq!(listed["pronunciation_dictionaries"][0]["id"], made["id"]);
    assert_eq!(
        listed["pronunciation_dictionaries"][0]["latest_version_rules_num"],
        2
    );
    let read = get(
        &server.url(&format!("/v1/pronunciation-dictionaries/{id}")),
        Some(KEY_A),
    )
    .json();
    assert_eq!(read["rules"], rules_body()["rules"]);
    assert_eq!(read["latest_version_id"], made["version_id"]);

    // The rules change the audio; without a version the current one is used.
    let plain = audio(&speak(&server, KEY_A, json!([])));
    let ruled = audio(&speak(&server, KEY_A, locator(&made)));
    assert_ne!(plain, ruled, "the phoneme rule changes what is said");
    let latest = audio(&speak(
        &server,
        KEY_A,
        json!([{"pronunciation_dictionary_id": id}]),
    ));
    assert_eq!(latest, ruled);

    // Another key: as if it did not exist.
    let other = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_B)).json();
    assert_eq!(other["pronunciation_dictionaries"], json!([]));
    let path = format!("/v1/pronunciation-dictionaries/{id}");
    problem_body(&get(&server.url(&path), Some(KEY_B)), 404);
    problem_body(&method("DELETE", &server.url(&path), Some(KEY_B)), 404);
    let foreign = problem_body(&speak(&server, KEY_B, locator(&made)), 404);
    assert!(
        foreign["detail"].as_str().unwrap().contains(&id),
        "{foreign}"
    );
    let job = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_B),
        &json!({"text": TEXT, "pronunciation_dictionary_locators": locator(&made)}),
    );
    problem_body(&job, 404);
    let download = format!("{path}/{}/download", made["version_id"].as_str().unwrap());
    problem_body(&get(&server.url(&download), Some(KEY_B)), 404);

    // The owner downloads it as PLS and can upload that again.
    let pls = get(&server.url(&download), Some(KEY_A));
    assert_eq!(pls.status, 200);
    assert_eq!(pls.header("content-type"), Some("application/pls+xml"));
    let again = upload(&server, KEY_A, "majina.pls", &pls.body, Some("Tena"));
    assert_eq!(
        again.status,
        201,
        "{}",
        String::from_utf8_lossy(&again.body)
    );
    problem_body(
        &get(
            &server.url(&format!("{path}/pdv_other/download")),
            Some(KEY_A),
        ),
        404,
    );

    // Deleted: synthesis naming it is refused before any work.
    assert_eq!(
        method("DELETE", &server.url(&path), Some(KEY_A)).status,
        204
    );
    problem_body(&get(&server.url(&path), Some(KEY_A)), 404);
    problem_body(&speak(&server, KEY_A, locator(&made)), 404);
}

#[test]
fn a_pls_file_is_read_and_bad_rules_are_refused_with_what_is_wrong() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let reply = upload(
        &server,
        KEY_A,
        "majina.pls",
        PLS.as_bytes(),
        Some("Kutoka faili"),
    );
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let made = reply.json();
    assert_eq!(made["version_rules_num"], 2);
    assert_ne!(
        audio(&speak(&server, KEY_A, locator(&made))),
        audio(&speak(&server, KEY_A, json!([])))
    );

    // A bad IPA symbol in a PLS file: the line and the symbol are named.
    let bad = PLS.replace("ˈnɛ.rɔ.bi", "ˈnɛ.ʁɔ.bi");
    let body = problem_body(
        &upload(&server, KEY_A, "bad.pls", bad.as_bytes(), Some("x")),
        422,
    );
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("line 10") && detail.contains("\"ʁ\""),
        "{detail}"
    );
    // XML that is not well-formed: the line is named.
    let broken = PLS.replace("</grapheme>\n    <alias>", "\n    <alias>");
    let body = problem_body(
        &upload(&server, KEY_A, "bad.pls", broken.as_bytes(), Some("x")),
        422,
    );
    assert!(
        body["detail"].as_str().unwrap().starts_with("line "),
        "{body}"
    );
    // A bad IPA symbol in JSON rules: the rule and the symbol are named.
    let mut rules = rules_body();
    rules["rules"][1]["phoneme"] = json!("naiQobi");
    let body = problem_body(&create(&server, KEY_A, &rules), 422);
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("rule 2 (\"Nairobi\")") && detail.contains("\"Q\""),
        "{detail}"
    );
    // Too many rules, a missing name, no file, too large a file.
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"type": "alias", "string_to_replace": format!("neno{i}"), "alias": "neno"}))
        .collect();
    let body = problem_body(
        &create(&server, KEY_A, &json!({"name": "x", "rules": many})),
        422,
    );
    assert!(
        body["detail"].as_str().unwrap().contains("at most 1000"),
        "{body}"
    );
    problem_body(&upload(&server, KEY_A, "a.pls", PLS.as_bytes(), None), 422);
    let large = vec![b' '; 1024 * 1024 + 1];
    problem_body(&upload(&server, KEY_A, "a.pls", &large, Some("x")), 413);
    // Nothing refused was kept.
    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(
        listed["pronunciation_dictionaries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // More than 3 locators, or an unknown dictionary: refused before synthesis.
    let four = json!([
        {"pronunciation_dictionary_id": made["id"]}, {"pronunciation_dictionary_id": made["id"]},
        {"pronunciation_dictionary_id": made["id"]}, {"pronunciation_dictionary_id": made["id"]}
    ]);
    let body = problem_body(&speak(&server, KEY_A, four), 422);
    assert!(
        body["detail"].as_str().unwrap().contains("at most 3"),
        "{body}"
    );
    problem_body(
        &speak(
            &server,
            KEY_A,
            json!([{"pronunciation_dictionary_id": "pd_nothing"}]),
        ),
        404,
    );
}

#[test]
fn dictionaries_survive_a_restart_and_a_job_keeps_the_rules_it_was_created_with() {
    let data = common::temp_dir();
    let made;
    {
        let server = start(&data, &[]);
        made = create(&server, KEY_A, &rules_body()).json();
    }
    let server = start(&data, &[]);
    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(listed["pronunciation_dictionaries"][0]["id"], made["id"]);
    let spoken = audio(&speak(&server, KEY_A, locator(&made)));
    assert_ne!(spoken, audio(&speak(&server, KEY_A, json!([]))));

    // A job with the dictionary, which is deleted at once: the job still reads with its rules.
    let job = |locators: Value| {
        let reply = post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({"text": TEXT, "voice_id": "zuri", "pronunciation_dictionary_locators": locators}),
        );
        assert_eq!(
            reply.status,
            202,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()["job_id"].as_str().unwrap().to_string()
    };
    let with_rules = job(locator(&made));
    let path = format!(
        "/v1/pronunciation-dictionaries/{}",
        made["id"].as_str().unwrap()
    );
    assert_eq!(
        method("DELETE", &server.url(&path), Some(KEY_A)).status,
        204
    );
    let without = job(json!([]));
    let wav = |id: &str| {
        let done = common::wait_for_job(&server, KEY_A, id, Duration::from_secs(60));
        assert_eq!(done["status"], "succeeded", "{done}");
        get(
            &server.url(&format!("/v1/tts/jobs/{id}/audio")),
            Some(KEY_A),
        )
        .body
    };
    let (ruled, plain) = (wav(&with_rules), wav(&without));
    assert_ne!(ruled, plain);
    use base64::Engine as _;
    let synchronous = base64::engine::general_purpose::STANDARD
        .decode(spoken)
        .unwrap();
    assert_eq!(
        ruled, synchronous,
        "the job read with the deleted dictionary's rules"
    );
}

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
