//! Ids in paths cannot reach into the data dir: traversal, encoded separators, NUL bytes and over-long ids in
//! job and voice ids are answered 404 problem+json — never a file of the data dir, never a 500.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{get, method, post_json, problem_body, temp_dir, wait_for_job, Server, KEY_A};
use serde_json::json;

/// A GET with the path sent exactly as written (no client-side normalisation of `..`).
fn raw_get(server: &Server, path: &str) -> String {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn ids_in_paths_never_reach_the_data_dir() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    let created = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari za asubuhi."}),
    );
    assert_eq!(created.status, 202);
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for_job(&server, KEY_A, &id, Duration::from_secs(60))["status"],
        "succeeded"
    );
    // The job's audio and the database are where a traversal would aim.
    assert!(dir.path().join(format!("jobs/{id}.wav")).exists());

    let long = "a".repeat(5_000);
    let ids = [
        "..%2Fsauti.db".to_string(),
        "..%2F..%2F..%2Fetc%2Fpasswd".to_string(),
        format!("..%2Fjobs%2F{id}"),
        format!("{id}%2F..%2F{id}"),
        format!("{id}.wav"),
        format!("{id}%00"),
        "%2E%2E".to_string(),
        long,
    ];
    for bad in &ids {
        for path in [
            format!("/v1/tts/jobs/{bad}"),
            format!("/v1/tts/jobs/{bad}/audio"),
            format!("/v1/voices/{bad}"),
        ] {
            let reply = get(&server.url(&path), Some(KEY_A));
            problem_body(&reply, 404);
        }
        problem_body(
            &method(
                "DELETE",
                &server.url(&format!("/v1/voices/{bad}")),
                Some(KEY_A),
            ),
            404,
        );
        let synthesis = post_json(
            &server.url(&format!("/v1/text-to-speech/{bad}")),
            Some(KEY_A),
            &json!({"text": "Habari"}),
        );
        problem_body(&synthesis, 404);
    }

    // Literal dot segments, sent unnormalised: no route matches them.
    for path in [
        format!("/v1/tts/jobs/../jobs/{id}/audio"),
        "/v1/tts/jobs/../../sauti.db".to_string(),
        "/v1/voices/../../../etc/passwd".to_string(),
    ] {
        let answer = raw_get(&server, &path);
        assert!(answer.starts_with("HTTP/1.1 404"), "{path}: {answer}");
        assert!(
            answer.contains("application/problem+json"),
            "{path}: {answer}"
        );
        assert!(!answer.contains("RIFF"), "{path}: {answer}");
    }

    // The real id still works, and nothing was touched.
    let audio = get(
        &server.url(&format!("/v1/tts/jobs/{id}/audio")),
        Some(KEY_A),
    );
    assert_eq!(audio.status, 200);
    assert!(dir.path().join(format!("jobs/{id}.wav")).exists());
}
