//! Edges a new user meets first: validation before availability (a wrong request is 422 even without a model),
//! final refusals without `Retry-After`, problem URLs on the address actually bound, conversations continued by
//! their id alone, both spellings of the upload paths, and forms whose parts are misnamed or too large.

use crate::common;

use common::cloning::{form, BOUNDARY};
use common::{Reply, Server, KEY_A};
use serde_json::json;

fn upload(
    server: &Server,
    path: &str,
    audio: Option<(&str, &[u8])>,
    fields: &[(&str, &str)],
) -> Reply {
    common::post_raw(
        &server.url(path),
        Some(KEY_A),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &form(audio, fields),
    )
}

/// A form whose file part is named `name` instead of `audio`.
fn misnamed(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"speech.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn speech() -> Vec<u8> {
    std::fs::read(common::fixture("audio/speech-pcm16-16000-1ch-2500ms.wav")).unwrap()
}

fn start() -> (tempfile::TempDir, Server) {
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    (data, server)
}

#[test]
fn without_a_model_invalid_requests_are_still_422_and_only_valid_ones_503() {
    let (_data, server) = start();
    let audio = speech();
    for path in [
        "/v1/speech-to-text/",
        "/v1/speech-to-text",
        "/v1/voice-agent/converse/audio",
    ] {
        let cases: Vec<(&str, Reply)> = vec![
            ("no audio part", upload(&server, path, None, &[])),
            (
                "random bytes",
                upload(
                    &server,
                    path,
                    Some(("audio/wav", b"not audio at all, just words")),
                    &[],
                ),
            ),
            (
                "misnamed part",
                common::post_raw(
                    &server.url(path),
                    Some(KEY_A),
                    &format!("multipart/form-data; boundary={BOUNDARY}"),
                    &misnamed("file", &audio),
                ),
            ),
        ];
        for (case, reply) in cases {
            let problem = common::problem_body(&reply, 422);
            assert!(reply.header("retry-after").is_none(), "{path} {case}");
            if case == "misnamed part" {
                assert!(
                    problem["detail"].as_str().unwrap().contains("`file`"),
                    "{problem}"
                );
            }
        }
    }
    let language = upload(
        &server,
        "/v1/speech-to-text/",
        Some(("audio/wav", &audio)),
        &[("language", "xx")],
    );
    common::problem_body(&language, 422);
    let scenario = upload(
        &server,
        "/v1/voice-agent/converse/audio",
        Some(("audio/wav", &audio)),
        &[("scenario", "no-such-scenario")],
    );
    common::problem_body(&scenario, 422);

    // A valid request: 503 naming what to install, final (no Retry-After: an operator must act).
    for path in ["/v1/speech-to-text/", "/v1/voice-agent/converse/audio"] {
        let reply = upload(&server, path, Some(("audio/wav", &audio)), &[]);
        let problem = common::problem_body(&reply, 503);
        assert!(
            problem["type"]
                .as_str()
                .unwrap()
                .ends_with("/errors/asr_unavailable"),
            "{problem}"
        );
        assert!(
            problem["detail"].as_str().unwrap().contains("sauti models"),
            "{problem}"
        );
        assert!(reply.header("retry-after").is_none(), "{path}");
    }
}

#[test]
fn an_inactive_voice_refuses_invalid_text_first_and_valid_text_for_good() {
    let (_data, server) = start();
    let url = server.url("/v1/text-to-speech/mms-swh");
    let invalid = common::post_json(&url, Some(KEY_A), &json!({"text": "   "}));
    common::problem_body(&invalid, 422);
    let valid = common::post_json(&url, Some(KEY_A), &json!({"text": "Habari"}));
    let problem = common::problem_body(&valid, 503);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/errors/voice_inactive"),
        "{problem}"
    );
    assert!(valid.header("retry-after").is_none());
}

#[test]
fn problem_urls_name_the_address_actually_bound_when_no_public_url_is_set() {
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__SERVER__PUBLIC_BASE_URL", "")]);
    let reply = common::get(&server.url("/v1/no-such-thing"), Some(KEY_A));
    let problem = common::problem_body(&reply, 404);
    assert_eq!(
        problem["type"].as_str().unwrap(),
        format!("{}/errors/not_found", server.base)
    );
}

#[test]
fn a_conversation_continues_with_its_session_id_alone() {
    let (_data, server) = start();
    let url = server.url("/v1/voice-agent/converse");
    let first = common::post_json(
        &url,
        Some(KEY_A),
        &json!({"text": "Nataka kujua salio langu", "scenario": "banking"}),
    );
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let session = first.json()["session_id"].as_str().unwrap().to_string();
    let next = common::post_json(
        &url,
        Some(KEY_A),
        &json!({"text": "Asante", "session_id": session}),
    );
    assert_eq!(next.status, 200, "{}", String::from_utf8_lossy(&next.body));
    assert_eq!(next.json()["scenario"], "banking");
    assert_eq!(next.json()["session_id"], session.as_str());
    // Naming another scenario for it is still a conflict.
    let other = common::post_json(
        &url,
        Some(KEY_A),
        &json!({"text": "Asante", "session_id": session, "scenario": "health"}),
    );
    common::problem_body(&other, 409);
}

#[test]
fn form_parts_that_are_too_large_are_named() {
    let (_data, server) = start();
    let big_text = "a".repeat(300 * 1024);
    let reply = upload(
        &server,
        "/v1/voice-clone",
        Some(("audio/wav", &speech())),
        &[("note", &big_text)],
    );
    let problem = common::problem_body(&reply, 413);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("`note`") && detail.contains("256 KiB"),
        "{detail}"
    );
    assert!(!detail.contains("25 MB"), "{detail}");
}
