//! Jobs across replicas: one killed mid-job, one stopped on purpose, and job audio in an object store.

use std::time::Duration;

use super::{eventually, job_done, queue_job, Postgres};
use crate::common::*;
use serde_json::json;

/// Count, in the database itself, every time a job turns succeeded.
async fn audit_completions(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE TABLE completions (id TEXT NOT NULL);
             CREATE FUNCTION count_completion() RETURNS trigger AS $$
             BEGIN INSERT INTO completions VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql;
             CREATE TRIGGER completions AFTER UPDATE OF status ON jobs FOR EACH ROW
             WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION count_completion();",
        )
        .await
        .unwrap();
    client
}

fn busy_replicas(postgres: &Postgres, data: &tempfile::TempDir) -> (Server, Server) {
    let url = postgres.url();
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__STORAGE__JOB_LEASE_SECONDS", "3"),
        ("SAUTI__JOBS__WORKERS", "1"),
        ("SAUTI__JOBS__MAX_UNFINISHED_PER_KEY", "100"),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    (
        Server::start(data.path(), &env),
        Server::start(data.path(), &env),
    )
}

/// A long text, so a job takes a while to synthesise.
fn long_text(i: usize) -> String {
    let sentence = format!(
        "Ripoti namba {i}: mteja amelipa shilingi elfu kumi na mbili kwa simu leo asubuhi. "
    );
    sentence.repeat(60)
}

#[test]
fn a_replica_killed_mid_job_leaves_every_job_succeeded_exactly_once() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (a, b) = busy_replicas(&postgres, &data);
    let db = runtime.block_on(audit_completions(&postgres.url()));
    let ids: Vec<String> = (0..20)
        .map(|i| queue_job(if i % 2 == 0 { &a } else { &b }, &long_text(i)))
        .collect();
    // Both replicas are running a job; then one of them dies without a word.
    eventually(Duration::from_secs(30), || {
        let holders: i64 = runtime
            .block_on(db.query_one(
                "SELECT COUNT(DISTINCT lease_owner) FROM jobs WHERE status = 'running'",
                &[],
            ))
            .unwrap()
            .get(0);
        if holders == 2 {
            return Ok(());
        }
        let states = runtime
            .block_on(db.query("SELECT status, lease_owner, runs FROM jobs", &[]))
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}/{:?}/{}",
                    r.get::<_, String>(0),
                    r.get::<_, Option<String>>(1),
                    r.get::<_, i32>(2)
                )
            })
            .collect::<Vec<_>>();
        Err(format!(
            "the two replicas never ran jobs at once: {states:?}"
        ))
    });
    a.crash();

    for id in &ids {
        let done = wait_for_job(&b, KEY_A, id, Duration::from_secs(120));
        assert_eq!(done["status"], "succeeded", "{done}");
        let audio = get(&b.url(&format!("/v1/tts/jobs/{id}/audio")), Some(KEY_A));
        assert_eq!(audio.status, 200);
        let (rate, channels, seconds) = wav_properties(&audio.body);
        assert_eq!((rate, channels), (16_000, 1));
        assert!(seconds > 10.0, "a complete WAV: {seconds} s");
    }
    let counted = runtime
        .block_on(db.query("SELECT id, COUNT(*) FROM completions GROUP BY id", &[]))
        .unwrap();
    assert_eq!(counted.len(), 20, "every job completed");
    for row in counted {
        assert_eq!(
            row.get::<_, i64>(1),
            1,
            "{} completed more than once",
            row.get::<_, String>(0)
        );
    }
    let rerun: i64 = runtime
        .block_on(db.query_one("SELECT COUNT(*) FROM jobs WHERE runs > 1", &[]))
        .unwrap()
        .get(0);
    assert!(
        rerun >= 1,
        "the killed replica's job was run again elsewhere"
    );
}

#[test]
fn a_replica_that_stops_hands_its_running_jobs_back_at_once() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (client, connection) = runtime
        .block_on(tokio_postgres::connect(
            &postgres.url(),
            tokio_postgres::NoTls,
        ))
        .unwrap();
    runtime.spawn(connection);
    let url = postgres.url();
    // A lease far longer than the test: only a hand-back can move the job before the replica's end.
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__STORAGE__JOB_LEASE_SECONDS", "600"),
        ("SAUTI__JOBS__WORKERS", "1"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    let a = Server::start(data.path(), &env);
    let reply = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": long_text(0).repeat(3) }),
    );
    assert_eq!(reply.status, 202);
    let id = reply.json()["job_id"].as_str().unwrap().to_string();
    let holder = |id: &str| -> (String, Option<String>) {
        let row = runtime
            .block_on(
                client.query_one("SELECT status, lease_owner FROM jobs WHERE id = $1", &[&id]),
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    let owner = eventually(Duration::from_secs(30), || match holder(&id) {
        (status, Some(owner)) => {
            assert_eq!(status, "running");
            Ok(owner)
        }
        _ => Err("A never started the job".into()),
    });
    let b = Server::start(data.path(), &env);
    assert!(a.terminate(Duration::from_secs(30)).is_some(), "A stops");
    let (status, now_owner) = holder(&id);
    assert!(
        now_owner.as_deref() != Some(owner.as_str()),
        "A's job is still held by A after it stopped ({status})"
    );
    let done = wait_for_job(&b, KEY_A, &id, Duration::from_secs(120));
    assert_eq!(done["status"], "succeeded", "{done}");
}

#[test]
fn job_audio_in_an_object_store_is_served_by_every_replica() {
    let postgres = Postgres::start();
    let s3 = crate::common::moto::S3::start("sauti-audio");
    let url = postgres.url();
    let mut owned: Vec<(&str, String)> = s3.env();
    owned.push(("SAUTI__STORAGE__URL", url));
    owned.push(("SAUTI__STORAGE__BLOBS_URL", "s3://sauti-audio/benki".into()));
    owned.push(("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000".into()));
    let env: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // Separate data directories: nothing is shared but the database and the bucket.
    let (dir_a, dir_b) = (temp_dir(), temp_dir());
    let a = Server::start(dir_a.path(), &env);
    let b = Server::start(dir_b.path(), &env);
    assert_eq!(get(&b.url("/readyz"), None).json()["audio"], "s3");

    let id = job_done(
        &a,
        &b,
        "Ndugu mteja, akaunti yako imepokea shilingi elfu hamsini.",
    );
    let whole = get(&b.url(&format!("/v1/tts/jobs/{id}/audio")), Some(KEY_A));
    assert_eq!(whole.status, 200);
    let (rate, channels, seconds) = wav_properties(&whole.body);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 1.0, "{seconds}");
    assert_eq!(
        whole.header("content-length"),
        Some(whole.body.len().to_string().as_str())
    );
    let from_a = get(&a.url(&format!("/v1/tts/jobs/{id}/audio")), Some(KEY_A));
    assert_eq!(
        from_a.body, whole.body,
        "both replicas serve the same bytes"
    );

    // A range is read from the store as asked.
    let part = call(
        "GET",
        &b.url(&format!("/v1/tts/jobs/{id}/audio")),
        &[("xi-api-key", KEY_A), ("Range", "bytes=44-1043")],
        None,
    );
    assert_eq!(part.status, 206);
    assert_eq!(part.body, whole.body[44..1044]);
    let total = whole.body.len();
    assert_eq!(
        part.header("content-range"),
        Some(format!("bytes 44-1043/{total}").as_str())
    );
    // Re-encoded on the way out, from the stored WAV.
    let mp3 = get(
        &b.url(&format!(
            "/v1/tts/jobs/{id}/audio?output_format=mp3_22050_32"
        )),
        Some(KEY_A),
    );
    assert_eq!(mp3.status, 200, "{}", String::from_utf8_lossy(&mp3.body));

    // Published under its own key, and no temporary object is left.
    let keys = s3.keys("sauti-audio");
    assert_eq!(keys, vec![format!("benki/jobs/{id}.wav")], "{keys:?}");
}
