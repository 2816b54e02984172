//! Pronunciation dictionaries, black box: created from rules and from a PLS file, listed, read, used in a
//! synthesis and a job (the audio changes), private to their key, refused with the rule, line or symbol at
//! fault, kept across a restart. (The server-wide lexicon, the agent and the CLI: `pronunciation_lexicon.rs`.)

use crate::common;

use std::time::Duration;

use common::dictionaries::*;
use common::{get, method, post_json, problem_body, KEY_A, KEY_B};
use serde_json::{json, Value};

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
