//! Browsers on other origins (`server.cors_origins`) and OpenAI-style `Authorization: Bearer` keys: preflights
//! answered before authentication, allowed origins named on every answer (refusals too), other origins and a
//! server without CORS giving the browser nothing to go on — checked over HTTP and in headless Chromium.

use crate::common;

use std::process::Command;

use common::*;

const PAGE: &str = "http://127.0.0.1:5173";

fn start(origins: &str) -> (tempfile::TempDir, Server) {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__SERVER__CORS_ORIGINS", origins),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    (data, server)
}

fn preflight(server: &Server, origin: &str, path: &str) -> Reply {
    call(
        "OPTIONS",
        &server.url(path),
        &[
            ("origin", origin),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "authorization, content-type",
            ),
        ],
        None,
    )
}

#[test]
fn an_allowed_origin_gets_its_preflight_and_every_answer_marked() {
    let (_data, server) = start(&format!("https://kliniki.example, {PAGE}"));
    let answer = preflight(&server, PAGE, "/v1/text-to-speech/zuri");
    assert_eq!(answer.status, 204);
    assert_eq!(answer.header("access-control-allow-origin"), Some(PAGE));
    assert!(answer
        .header("access-control-allow-methods")
        .unwrap()
        .contains("POST"));
    assert_eq!(
        answer.header("access-control-allow-headers"),
        Some("authorization, content-type")
    );
    assert!(answer.header("x-request-id").is_some());

    let bearer = format!("Bearer {KEY_A}");
    let voices = call(
        "GET",
        &server.url("/v1/voices"),
        &[("origin", PAGE), ("authorization", &bearer)],
        None,
    );
    assert_eq!(voices.status, 200);
    assert_eq!(voices.header("access-control-allow-origin"), Some(PAGE));
    let exposed = voices.header("access-control-expose-headers").unwrap();
    for name in ["x-request-id", "x-ratelimit-remaining", "retry-after"] {
        assert!(exposed.contains(name), "{exposed}");
    }
    assert!(voices.header("vary").unwrap().contains("origin"));
    // An answer to a request without Origin varies by it too, so no cache hands it to a page.
    let plain = get(&server.url("/v1/voices"), Some(KEY_A));
    assert_eq!(plain.header("vary"), Some("origin"));
    assert_eq!(plain.header("access-control-allow-origin"), None);

    // A refusal reaches the page too, or the browser would hide its problem body.
    let refused = call("GET", &server.url("/v1/voices"), &[("origin", PAGE)], None);
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("access-control-allow-origin"), Some(PAGE));

    // Another origin gets no preflight answer and no permission.
    let stranger = preflight(&server, "http://127.0.0.1:9999", "/v1/voices");
    assert_eq!(stranger.status, 401);
    assert_eq!(stranger.header("access-control-allow-origin"), None);
}

#[test]
fn without_cors_origins_nothing_is_allowed_and_a_star_allows_all() {
    let (_data, server) = start("");
    let answer = preflight(&server, PAGE, "/v1/voices");
    assert_eq!(answer.header("access-control-allow-origin"), None);
    let plain = call(
        "GET",
        &server.url("/v1/voices"),
        &[("origin", PAGE), ("xi-api-key", KEY_A)],
        None,
    );
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("access-control-allow-origin"), None);

    let (_data, open) = start("*");
    let answer = preflight(&open, "http://anything.example:8000", "/v1/voices");
    assert_eq!(answer.status, 204);
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn a_bearer_key_is_the_same_key_and_a_wrong_one_is_refused() {
    let (_data, server) = start("");
    let url = server.url("/v1/voices");
    let bearer = |k: &str| format!("Bearer {k}");
    assert_eq!(
        call("GET", &url, &[("authorization", &bearer(KEY_B))], None).status,
        200
    );
    let wrong = call(
        "GET",
        &url,
        &[("authorization", &bearer("sk-not-a-key-0000"))],
        None,
    );
    assert_eq!(problem_body(&wrong, 401)["detail"], "invalid API key");
    let basic = call(
        "GET",
        &url,
        &[("authorization", "Basic dXNlcjpwdw==")],
        None,
    );
    let detail = problem_body(&basic, 401)["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(detail.contains("Bearer"), "{detail}");
}

#[test]
fn a_configured_origin_that_is_not_an_origin_stops_start_up() {
    let data = temp_dir();
    let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data.path())
        .env("SAUTI__SERVER__CORS_ORIGINS", "https://kliniki.example/app")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("server.cors_origins"), "{text}");
}

/// Run tests/browser/cors.mjs: a page served on `http://127.0.0.1:{port}` calls `server` from Chromium.
fn page_calls(server: &Server, port: u16, mode: &str) {
    common::browser::run("cors.mjs", &[&server.base, KEY_A, &port.to_string(), mode]);
}

#[test]
fn a_page_on_another_origin_calls_the_api_only_when_its_origin_is_allowed() {
    // A free loopback port for the page, so its origin is known before the server starts.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (_data, allowing) = start(&format!("http://127.0.0.1:{port}"));
    page_calls(&allowing, port, "allowed");
    drop(allowing);
    let (_data, closed) = start("");
    page_calls(&closed, port, "refused");
}
