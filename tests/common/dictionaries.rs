//! Pronunciation dictionaries over HTTP: a server with limits raised, and the requests the dictionary tests make.

use serde_json::{json, Value};

use super::{post_json, post_raw, Reply, Server};

pub const BOUNDARY: &str = "sauti-dictionary-boundary-7d1";
pub const TEXT: &str = "Nimefika Nairobi leo.";

pub const PLS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
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

pub fn start(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

pub fn rules_body() -> Value {
    json!({
        "name": "Majina",
        "description": "Names read right",
        "rules": [
            {"type": "alias", "string_to_replace": "Sheng", "alias": "sheng'i"},
            {"type": "phoneme", "string_to_replace": "Nairobi", "phoneme": "ˈnɛ.rɔ.bi", "alphabet": "ipa"}
        ]
    })
}

pub fn create(server: &Server, key: &str, body: &Value) -> Reply {
    post_json(
        &server.url("/v1/pronunciation-dictionaries/add-from-rules"),
        Some(key),
        body,
    )
}

pub fn upload(
    server: &Server,
    key: &str,
    file_name: &str,
    file: &[u8],
    name: Option<&str>,
) -> Reply {
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
pub fn speak(server: &Server, key: &str, locators: Value) -> Reply {
    post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(key),
        &json!({"text": TEXT, "pronunciation_dictionary_locators": locators}),
    )
}

pub fn audio(reply: &Reply) -> String {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()["audio_base64"].as_str().unwrap().to_string()
}

pub fn locator(dictionary: &Value) -> Value {
    json!([{"pronunciation_dictionary_id": dictionary["id"], "version_id": dictionary["version_id"]}])
}
