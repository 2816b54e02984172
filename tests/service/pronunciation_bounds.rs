//! Pronunciation dictionaries cannot get round the text limits, black box: a reading much longer than what it
//! replaces is refused when the dictionary is made; a text is measured as it reads with the rules on the
//! synchronous, streamed and job paths (422, the server answering on); a 1 MB PLS file of 19,000 lexemes is
//! refused at once while `/healthz` keeps answering; dictionary names follow the rules of key names.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::dictionaries::*;
use common::{get, post_json, problem_body, Server, KEY_A};
use serde_json::{json, Value};

/// A dictionary reading "a" as `alias`.
fn alias_of_a(alias: &str) -> Value {
    json!({"name": "Herufi", "rules": [{"type": "alias", "string_to_replace": "a", "alias": alias}]})
}

fn assert_healthy(server: &Server) {
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
}

#[test]
fn readings_far_longer_than_what_they_replace_are_refused_when_the_dictionary_is_made() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    // The attack's rule: one letter read as 499 characters.
    let body = problem_body(&create(&server, KEY_A, &alias_of_a(&"b".repeat(499))), 422);
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("rule 1 (\"a\")") && detail.contains("at most 64 characters"),
        "{detail}"
    );
    // A phoneme rule amplifies the same way, and is bounded the same way (8 times what it replaces).
    let phonemes = json!({"name": "Sauti", "rules": [
        {"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "nairobi".repeat(10), "alphabet": "ipa"}]});
    let detail = problem_body(&create(&server, KEY_A, &phonemes), 422)["detail"].to_string();
    assert!(
        detail.contains("rule 1 (\\\"Nairobi\\\")") && detail.contains("at most 64"),
        "{detail}"
    );
    // In a PLS file the line is named.
    let pls = PLS.replace(
        "<alias>em pesa</alias>",
        &format!("<alias>{}</alias>", "pesa ".repeat(40)),
    );
    let body = problem_body(
        &upload(&server, KEY_A, "x.pls", pls.as_bytes(), Some("x")),
        422,
    );
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("line 6:") && detail.contains("M-Pesa"),
        "{detail}"
    );
    // Real names, brands and Sheng read as long as they need within the bounds.
    let real = json!({"name": "Majina", "rules": [
        {"type": "alias", "string_to_replace": "TZ", "alias": "Jamhuri ya Muungano wa Tanzania"},
        {"type": "alias", "string_to_replace": "M-Pesa", "alias": "em pesa"},
        {"type": "alias", "string_to_replace": "msee", "alias": "mtu"},
        {"type": "alias", "string_to_replace": "a", "alias": "b".repeat(64)}]});
    let reply = create(&server, KEY_A, &real);
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(
        listed["pronunciation_dictionaries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_text_is_limited_by_what_it_reads_as_on_every_path_and_the_server_answers_on() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    // The longest reading one letter may have: 1,999 characters of "a a a …" read as 64,999.
    let made = create(&server, KEY_A, &alias_of_a(&"b".repeat(64))).json();
    let text = vec!["a"; 1_000].join(" ");
    assert_eq!(text.chars().count(), 1_999);
    let body =
        |text: &str| json!({"text": text, "pronunciation_dictionary_locators": locator(&made)});
    let refused = |reply: common::Reply, max: &str| {
        let detail = problem_body(&reply, 422)["detail"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            detail.contains(&format!("maximum length of {max} characters"))
                && detail.contains("pronunciation dictionaries' rules"),
            "{detail}"
        );
    };

    let started = Instant::now();
    refused(
        post_json(
            &server.url("/v1/text-to-speech/zuri"),
            Some(KEY_A),
            &body(&text),
        ),
        "5000",
    );
    refused(
        post_json(
            &server.url("/v1/text-to-speech/zuri/stream"),
            Some(KEY_A),
            &body(&text),
        ),
        "5000",
    );
    refused(
        post_json(&server.url("/v1/tts/jobs"), Some(KEY_A), &body(&text)),
        "20000",
    );
    // Over 2,000 characters text-to-speech makes a job: refused before it is queued.
    let long = format!("{text} {text}");
    refused(
        post_json(
            &server.url("/v1/text-to-speech/zuri"),
            Some(KEY_A),
            &body(&long),
        ),
        "5000",
    );
    refused(
        post_json(
            &server.url("/elevenlabs/v1/text-to-speech/zuri?output_format=pcm_16000"),
            Some(KEY_A),
            &body(&text),
        ),
        "5000",
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "refused at once"
    );
    assert_healthy(&server);
    let jobs = get(&server.url("/v1/tts/jobs"), Some(KEY_A));
    assert!(
        jobs.json()["jobs"].as_array().is_none_or(|j| j.is_empty()),
        "no job was queued"
    );

    // A text that reads within the limit with the same dictionary is spoken, synchronously and as a job.
    let short = "Habari a leo.";
    let reply = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &body(short),
    );
    audio(&reply);
    let job = post_json(&server.url("/v1/tts/jobs"), Some(KEY_A), &body(short));
    assert_eq!(job.status, 202, "{}", String::from_utf8_lossy(&job.body));
    let id = job.json()["job_id"].as_str().unwrap().to_string();
    let done = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_healthy(&server);
}

/// A PLS file of `lexemes` lexemes of 55 bytes, ten a line (so 19,000 make just under 1 MB).
fn pls_of(lexemes: usize) -> String {
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n<lexicon xmlns=\"http://www.w3.org/2005/01/pronunciation-lexicon\" alphabet=\"ipa\">\n",
    );
    for i in 0..lexemes {
        text.push_str("<lexeme><grapheme>x</grapheme><alias>y</alias></lexeme>");
        if i % 10 == 9 {
            text.push('\n');
        }
    }
    text + "</lexicon>\n"
}

#[test]
fn a_one_megabyte_pls_file_is_refused_at_once_while_the_server_keeps_answering() {
    let data = common::temp_dir();
    let server = Arc::new(start(&data, &[]));
    let file = pls_of(19_000);
    assert!(
        file.len() <= 1024 * 1024 && file.len() > 1_000_000,
        "{}",
        file.len()
    );
    assert_healthy(&server);

    // `/healthz` probed from a second thread for as long as the upload takes.
    let uploading = Arc::new(AtomicBool::new(true));
    let probes = {
        let (server, uploading) = (Arc::clone(&server), Arc::clone(&uploading));
        std::thread::spawn(move || {
            let mut took = Vec::new();
            while uploading.load(Ordering::SeqCst) || took.len() < 10 {
                let asked = Instant::now();
                assert_eq!(get(&server.url("/healthz"), None).status, 200);
                took.push(asked.elapsed());
            }
            took
        })
    };
    let started = Instant::now();
    let reply = upload(&server, KEY_A, "big.pls", file.as_bytes(), Some("Kubwa"));
    let upload_took = started.elapsed();
    uploading.store(false, Ordering::SeqCst);
    let took = probes.join().expect("the probes ran");

    let detail = problem_body(&reply, 422)["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(detail.contains("more than 1000 rules"), "{detail}");
    assert!(
        detail.starts_with("line 103:"),
        "the line it went over is named: {detail}"
    );
    assert!(
        upload_took < Duration::from_secs(1),
        "refused in {upload_took:?}"
    );
    // Health answers in well under 50 ms throughout (it took 26 s while a parse held the async threads). A
    // probe may meet a scheduling hiccup of this two-core test machine (the client is sending 1 MB at the
    // same time): at most one in ten may, and even that one answers within 500 ms.
    let mut sorted = took.clone();
    sorted.sort();
    let (median, slowest) = (sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
    let slow = sorted
        .iter()
        .filter(|t| **t >= Duration::from_millis(50))
        .count();
    assert!(
        median < Duration::from_millis(50)
            && slow <= sorted.len() / 10
            && slowest < Duration::from_millis(500),
        "/healthz during the upload: median {median:?}, {slow} of {} probes over 50 ms, slowest {slowest:?}",
        sorted.len()
    );
    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(listed["pronunciation_dictionaries"], json!([]));
}

#[test]
fn dictionary_names_follow_the_rules_of_key_names() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    for bad in ["Majina\nmapya", "rtl\u{202e}txt", "tab\there", "\u{200b}"] {
        let mut body = rules_body();
        body["name"] = json!(bad);
        let detail = problem_body(&create(&server, KEY_A, &body), 422)["detail"].to_string();
        assert!(detail.contains("name"), "{bad:?}: {detail}");
        let reply = upload(&server, KEY_A, "x.pls", PLS.as_bytes(), Some(bad));
        problem_body(&reply, 422);
    }
    let mut body = rules_body();
    body["name"] = json!("  Majina – Mombasa  ");
    let made = create(&server, KEY_A, &body);
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    assert_eq!(made.json()["name"], "Majina – Mombasa");
    let listed = get(&server.url("/v1/pronunciation-dictionaries"), Some(KEY_A)).json();
    assert_eq!(
        listed["pronunciation_dictionaries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
