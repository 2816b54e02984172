//! The OpenAPI document: served without a key, 3.1, every route documented (and nothing documented that does
//! not answer), the key scheme, problem responses and rate-limit headers on every `/v1` operation.

use crate::common;

use common::*;
use serde_json::Value;

const METHODS: [&str; 4] = ["get", "post", "put", "delete"];

fn document(server: &Server) -> Value {
    let reply = get(&server.url("/openapi.json"), None);
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    reply.json()
}

/// (method, path, operation) for every documented operation.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(operation) = item.get(method) {
                out.push((method.to_uppercase(), path.clone(), operation.clone()));
            }
        }
    }
    out
}

#[test]
fn the_document_is_open_and_complete() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let doc = document(&server);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(
        doc["components"]["securitySchemes"]["api_key"],
        serde_json::json!({
            "type": "apiKey", "in": "header", "name": "xi-api-key",
            "description": "The API key. Every /v1 endpoint needs it (or the bearer scheme); limits are counted per key."
        })
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(
        doc["security"],
        serde_json::json!([{ "api_key": [] }, { "bearer": [] }])
    );

    let ops = operations(&doc);
    let mut ids = std::collections::HashSet::new();
    for (method, path, op) in &ops {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path}: no operationId"));
        assert!(ids.insert(id.to_string()), "operationId {id} twice");
        assert!(op["summary"].is_string(), "{method} {path}: no summary");
        for (status, response) in op["responses"].as_object().unwrap() {
            assert!(
                response["description"].is_string(),
                "{method} {path} {status}: no description"
            );
            if status.starts_with('4') || status.starts_with('5') {
                let schema = &response["content"]["application/problem+json"]["schema"]["$ref"];
                assert_eq!(
                    schema, "#/components/schemas/Problem",
                    "{method} {path} {status}"
                );
            }
        }
        if path.starts_with("/v1/") || path.starts_with("/elevenlabs/") {
            assert!(
                op.get("security").is_none(),
                "{path} uses the global key requirement"
            );
            for status in ["401", "429"] {
                assert!(
                    op["responses"][status].is_object(),
                    "{method} {path}: no {status}"
                );
            }
            for (status, response) in op["responses"].as_object().unwrap() {
                for header in [
                    "X-RateLimit-Limit",
                    "X-RateLimit-Remaining",
                    "X-RateLimit-Reset",
                ] {
                    assert!(
                        response["headers"][header].is_object(),
                        "{method} {path} {status}: no {header}"
                    );
                }
                if status == "429" || status == "503" {
                    assert!(
                        response["headers"]["Retry-After"].is_object(),
                        "{method} {path} {status}"
                    );
                }
            }
        } else {
            assert_eq!(op["security"], serde_json::json!([]), "{path} needs no key");
        }
    }
    // Request bodies: JSON for synthesis, jobs and the agent; multipart for the uploads.
    let body =
        |method: &str, path: &str| doc["paths"][path][method]["requestBody"]["content"].clone();
    assert!(body("post", "/v1/text-to-speech/{voice_id}")["application/json"].is_object());
    assert!(body("post", "/v1/tts/jobs")["application/json"].is_object());
    assert!(body("post", "/v1/voice-agent/converse")["application/json"].is_object());
    for path in [
        "/v1/speech-to-text/",
        "/v1/voice-clone/",
        "/v1/voice-agent/converse/audio",
    ] {
        let form = &body("post", path)["multipart/form-data"]["schema"]["$ref"];
        let name = form.as_str().unwrap().rsplit('/').next().unwrap();
        assert_eq!(
            doc["components"]["schemas"][name]["properties"]["audio"]["format"], "binary",
            "{path}"
        );
    }
    let tts = &doc["components"]["schemas"]["SynthesisResult"]["properties"];
    for field in [
        "audio_base64",
        "content_type",
        "duration_seconds",
        "characters_synthesized",
        "voice_id",
    ] {
        assert!(tts[field].is_object(), "SynthesisResult.{field}");
    }
}

#[test]
fn every_documented_operation_answers_and_undocumented_paths_do_not() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    let doc = document(&server);
    for (method, path, _) in operations(&doc) {
        let concrete = path
            .replace("{voice_id}", "zuri")
            .replace("{job_id}", "job_missing");
        let reply = common::method(&method, &server.url(&concrete), Some(KEY_A));
        assert!(
            reply.status != 405
                && !(reply.status == 404
                    && reply.json()["detail"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("no such")),
            "{method} {path} is documented but not routed: {}",
            reply.status
        );
    }
    for path in [
        "/v1/transcribe",
        "/v2/voices",
        "/admin",
        "/v1/voices/zuri/samples",
    ] {
        assert_eq!(get(&server.url(path), Some(KEY_A)).status, 404, "{path}");
    }
}

#[test]
fn routes_are_only_added_through_documented_handlers() {
    // axum cannot list its routes, so the rule is kept in the source: every route goes through utoipa-axum's
    // `routes!`, which documents it; a plain `.route(` would slip past the document. The one exception is another
    // spelling of a documented path, marked `// alias:` on its line.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if (line.contains(".route(")
                        || line.contains(".route_service(")
                        || line.contains(".nest_service("))
                        && !line.contains("// alias:")
                    {
                        offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "undocumented routes:\n{}",
        offenders.join("\n")
    );
}
