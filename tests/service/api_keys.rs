//! `sauti keys` against a data directory and a running server: new and revoked keys take effect within seconds,
//! names are checked, and commands other than `create` never make a database where there is none.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::kept_alive::KeptAlive;
use common::{get, Server};

fn keys(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("keys")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__STORAGE__DATA_DIR", data)
        .output()
        .expect("runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// How long until `/v1/voices` with `key` answers `status` (polling every 100 ms, giving up after 10 s), on a
/// new connection each time or, with `kept`, on that one keep-alive connection.
fn until_status(
    server: &Server,
    key: &str,
    status: u16,
    mut kept: Option<&mut KeptAlive>,
) -> Duration {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let answered = match kept.as_deref_mut() {
            Some(connection) => connection.get("/v1/voices", key).status,
            None => get(&server.url("/v1/voices"), Some(key)).status,
        };
        if answered == status {
            return started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the key never answered {status}");
}

#[test]
fn a_running_server_accepts_new_keys_and_refuses_revoked_ones_within_seconds() {
    let dir = common::temp_dir();
    let server = Server::start_raw(
        dir.path(),
        &[
            ("SAUTI__LIMITS__UNAUTHENTICATED_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let created = keys(dir.path(), &["create", "--name", "pilot"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let key = String::from_utf8_lossy(&created.stdout).trim().to_string();
    let accepted = until_status(&server, &key, 200, None);
    // A connection that has already presented the key, kept open across the revocation.
    let mut kept = KeptAlive::open(&server);
    assert_eq!(kept.get("/v1/voices", &key).status, 200);
    assert!(
        accepted < Duration::from_secs(3),
        "accepted after {accepted:?}"
    );

    let listed = keys(dir.path(), &["list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let id = listed
        .lines()
        .find(|l| l.contains("\tpilot\t"))
        .and_then(|l| l.split('\t').next())
        .expect("the new key is listed")
        .to_string();
    let revoked = keys(dir.path(), &["revoke", &id]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    let refused = until_status(&server, &key, 401, None);
    assert!(
        refused < Duration::from_secs(3),
        "refused after {refused:?}"
    );
    // Refused on the connection that used it before, too (it is still open: each answer was read whole).
    let refused_there = until_status(&server, &key, 401, Some(&mut kept));
    assert!(
        refused_there < Duration::from_secs(1),
        "refused there after {refused_there:?}"
    );
    eprintln!("new key accepted after {accepted:?}, revoked key refused after {refused:?}");
}

#[test]
fn key_names_must_be_one_short_line() {
    let dir = common::temp_dir();
    for (name, mentions) in [
        ("two\nlines", "control or invisible characters"),
        ("tab\there", "control or invisible characters"),
        ("   ", "cannot be empty"),
        (&"x".repeat(65), "at most 64 characters"),
    ] {
        let output = keys(dir.path(), &["create", "--name", name]);
        assert!(!output.status.success(), "{name:?} accepted");
        let message = stderr(&output);
        assert!(
            message.starts_with("sauti: invalid --name") && message.contains(mentions),
            "{name:?}: {message}"
        );
    }
    // Nothing was stored for the refused names; a good name (trimmed) is.
    let made = keys(dir.path(), &["create", "--name", "  bank pilot  "]);
    assert!(made.status.success(), "{}", stderr(&made));
    let listed = String::from_utf8_lossy(&keys(dir.path(), &["list"]).stdout).into_owned();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.contains("\tbank pilot\t"), "{listed}");
}

#[test]
fn listing_or_revoking_where_there_is_no_database_fails_without_making_one() {
    let dir = common::temp_dir();
    let data = dir.path().join("not-the-data-dir");
    for args in [&["list"][..], &["revoke", "key_0123456789abcdef"][..]] {
        let output = keys(&data, args);
        assert!(!output.status.success(), "{args:?} succeeded");
        let message = stderr(&output);
        assert!(
            message.contains("no database at") && message.contains("not-the-data-dir"),
            "{args:?}: {message}"
        );
        assert!(!data.exists(), "{args:?} created {}", data.display());
    }
    // Creating a key is how a fresh data directory starts, so that one command makes the database.
    assert!(keys(&data, &["create", "--name", "first"]).status.success());
    assert!(data.join("sauti.db").is_file());
    assert!(keys(&data, &["list"]).status.success());
}
