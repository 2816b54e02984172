//! Key ids are keyed digests: an id (in logs, in `sauti keys list`) cannot be used to test a guessed key, since
//! it is derived under the store's own secret. Data an earlier release kept under a key's unkeyed id still
//! belongs to that key after the upgrade, for configured and stored keys alike, and to no other key.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::json;
use sha2::{Digest, Sha256};

/// The id an earlier release gave `key`: the first 64 bits of its unsalted SHA-256.
fn unkeyed_id(key: &str) -> String {
    let hash: String = Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("key_{}", &hash[..16])
}

fn keys(data: &Path, args: &[&str]) -> String {
    common::cli::keys(data, &[], args)
}

fn listed_id(data: &Path, name: &str) -> String {
    common::cli::listed_key_id(data, &[], name)
}

fn job_of(server: &Server, key: &str) -> String {
    let reply = post_json(
        &server.url("/v1/tts/jobs"),
        Some(key),
        &json!({"text": "Habari ya asubuhi."}),
    );
    assert_eq!(
        reply.status,
        202,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let id = reply.json()["job_id"].as_str().unwrap().to_string();
    let done = wait_for_job(server, key, &id, Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    id
}

#[test]
fn key_ids_are_keyed_and_data_kept_under_earlier_ids_stays_with_its_key() {
    let dir = temp_dir();
    let stored = keys(dir.path(), &["create", "--name", "pilot"])
        .trim()
        .to_string();
    let id = listed_id(dir.path(), "pilot");
    assert!(id.starts_with("key_") && id.len() == 20, "{id}");
    assert_ne!(
        id,
        unkeyed_id(&stored),
        "the id is not the key's bare digest"
    );

    let server = Server::start(dir.path(), &[]);
    let configured_job = job_of(&server, KEY_A);
    let stored_job = job_of(&server, &stored);
    drop(server);

    // The data as an earlier release kept it: under the keys' unkeyed ids.
    let db = rusqlite::Connection::open(dir.path().join("sauti.db")).unwrap();
    for (job, key) in [(&configured_job, KEY_A), (&stored_job, stored.as_str())] {
        db.execute(
            "UPDATE jobs SET owner = ?2 WHERE id = ?1",
            [job.as_str(), unkeyed_id(key).as_str()],
        )
        .unwrap();
    }
    db.execute(
        "UPDATE api_keys SET id = ?2 WHERE id = ?1",
        [id.as_str(), unkeyed_id(&stored).as_str()],
    )
    .unwrap();
    drop(db);

    // After the upgrade each key has its jobs again, under its keyed id; no other key sees them.
    let server = Server::start(dir.path(), &[]);
    let status = |key: &str, job: &str| get(&server.url(&format!("/v1/tts/jobs/{job}")), Some(key));
    assert_eq!(status(KEY_A, &configured_job).json()["status"], "succeeded");
    assert_eq!(status(&stored, &stored_job).json()["status"], "succeeded");
    assert_eq!(status(KEY_B, &configured_job).status, 404);
    assert_eq!(status(KEY_B, &stored_job).status, 404);
    assert_eq!(status(&stored, &configured_job).status, 404);
    let audio = get(
        &server.url(&format!("/v1/tts/jobs/{stored_job}/audio")),
        Some(&stored),
    );
    assert_eq!(audio.status, 200);
    assert_eq!(listed_id(dir.path(), "pilot"), id, "the same id as before");
    drop(server);

    // And across a further restart nothing moves again.
    let server = Server::start(dir.path(), &[]);
    assert_eq!(
        get(
            &server.url(&format!("/v1/tts/jobs/{configured_job}")),
            Some(KEY_A)
        )
        .status,
        200
    );
}
