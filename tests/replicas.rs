//! Two replicas sharing PostgreSQL (`storage.url`) and one audio folder, a client alternating between them:
//! a job created on one is run once and served by either, dictionaries and keys made on one are seen on the
//! other, a revoked key stops working on both, and a PostgreSQL restart gives 503 `storage_unavailable`
//! meanwhile and loses nothing.

mod common;

use std::time::{Duration, Instant};

use common::postgres::Postgres;
use common::*;
use serde_json::json;

fn replicas(postgres: &Postgres, data: &tempfile::TempDir) -> (Server, Server) {
    let url = postgres.url();
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    (
        Server::start(data.path(), &env),
        Server::start(data.path(), &env),
    )
}

#[test]
fn a_client_alternating_between_two_replicas_sees_one_service() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(&postgres, &data);
    for server in [&a, &b] {
        let ready = get(&server.url("/readyz"), None);
        assert_eq!(ready.status, 200);
        assert_eq!(ready.json()["storage"], "postgres");
    }

    // Jobs: created on either, each run exactly once, read and downloaded on the other.
    let mut ids = Vec::new();
    for i in 0..6 {
        let server = if i % 2 == 0 { &a } else { &b };
        let reply = post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({ "text": format!("Habari za asubuhi. Hii ni kazi namba {i}.") }),
        );
        assert_eq!(
            reply.status,
            202,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        ids.push(reply.json()["job_id"].as_str().unwrap().to_string());
    }
    for (i, id) in ids.iter().enumerate() {
        let other = if i % 2 == 0 { &b } else { &a };
        let done = wait_for_job(other, KEY_A, id, Duration::from_secs(60));
        assert_eq!(done["status"], "succeeded", "{done}");
        let audio = get(&other.url(&format!("/v1/tts/jobs/{id}/audio")), Some(KEY_A));
        assert_eq!(audio.status, 200);
        let (rate, channels, seconds) = wav_properties(&audio.body);
        assert_eq!((rate, channels), (16_000, 1));
        assert!(seconds > 0.5, "{seconds}");
        // Another key still cannot see it, on either replica.
        assert_eq!(
            get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_B)).status,
            404
        );
    }

    // A pronunciation dictionary made on A is read, listed and used on B.
    let made = common::dictionaries::create(&a, KEY_A, &common::dictionaries::rules_body());
    assert_eq!(made.status, 201);
    let id = made.json()["id"].as_str().unwrap().to_string();
    let read = get(
        &b.url(&format!("/v1/pronunciation-dictionaries/{id}")),
        Some(KEY_A),
    );
    assert_eq!(read.status, 200, "{}", String::from_utf8_lossy(&read.body));
    let spoken =
        common::dictionaries::speak(&b, KEY_A, common::dictionaries::locator(&made.json()));
    assert_eq!(
        spoken.status,
        200,
        "{}",
        String::from_utf8_lossy(&spoken.body)
    );
}

#[test]
fn a_key_made_with_the_cli_works_on_every_replica_until_revoked() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(&postgres, &data);
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
            .args(args)
            .env("SAUTI__STORAGE__URL", postgres.url())
            .env("SAUTI__STORAGE__DATA_DIR", data.path())
            .output()
            .expect("sauti runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (key, made) = cli(&["keys", "create", "--name", "tawi la Arusha"]);
    let id = made.split_whitespace().nth(1).unwrap().to_string();
    let seen = |server: &Server, status: u16| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reply = get(&server.url("/v1/voices"), Some(&key));
            if reply.status == status {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "still {} on {}",
                reply.status,
                server.base
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    seen(&a, 200);
    seen(&b, 200);
    cli(&["keys", "revoke", &id]);
    seen(&a, 401);
    seen(&b, 401);
}

#[test]
fn a_postgres_restart_gives_503_meanwhile_and_loses_nothing() {
    let mut postgres = Postgres::start();
    let data = temp_dir();
    let (a, _b) = replicas(&postgres, &data);
    let job = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Karibu tena." }),
    );
    assert_eq!(job.status, 202);
    let id = job.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for_job(&a, KEY_A, &id, Duration::from_secs(60))["status"],
        "succeeded"
    );

    postgres.stop();
    let during = get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A));
    let problem = problem_body(&during, 503);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/errors/storage_unavailable"),
        "{problem}"
    );
    let created = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Habari." }),
    );
    assert_eq!(created.status, 503);
    assert_eq!(get(&a.url("/readyz"), None).status, 503);

    postgres.resume();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let after = get(&a.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A));
        if after.status == 200 {
            assert_eq!(after.json()["status"], "succeeded");
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {}", after.status);
        std::thread::sleep(Duration::from_millis(200));
    }
    let again = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Habari." }),
    );
    assert_eq!(again.status, 202);
}

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
    let mut ids = Vec::new();
    for i in 0..20 {
        let server = if i % 2 == 0 { &a } else { &b };
        let reply = post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({ "text": long_text(i) }),
        );
        assert_eq!(
            reply.status,
            202,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        ids.push(reply.json()["job_id"].as_str().unwrap().to_string());
    }
    // Both replicas are running a job; then one of them dies without a word.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let holders: i64 = runtime
            .block_on(db.query_one(
                "SELECT COUNT(DISTINCT lease_owner) FROM jobs WHERE status = 'running'",
                &[],
            ))
            .unwrap()
            .get(0);
        if holders == 2 {
            break;
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
        assert!(
            Instant::now() < deadline,
            "the two replicas never ran jobs at once: {states:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let owner = loop {
        if let (status, Some(owner)) = holder(&id) {
            assert_eq!(status, "running");
            break owner;
        }
        assert!(Instant::now() < deadline, "A never started the job");
        std::thread::sleep(Duration::from_millis(10));
    };
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
    let s3 = common::moto::S3::start("sauti-audio");
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

    let reply = post_json(
        &a.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({ "text": "Ndugu mteja, akaunti yako imepokea shilingi elfu hamsini." }),
    );
    assert_eq!(reply.status, 202);
    let id = reply.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for_job(&b, KEY_A, &id, Duration::from_secs(60))["status"],
        "succeeded"
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

#[test]
fn a_voice_cloned_on_one_replica_speaks_on_the_other_until_deleted() {
    let postgres = Postgres::start();
    let data = (temp_dir(), temp_dir());
    let url = postgres.url();
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ];
    let a = Server::start(data.0.path(), &env);
    let b = Server::start(data.1.path(), &env);
    let reference = common::cloning::reference("low.wav");
    let made = common::cloning::clone(
        &a,
        KEY_A,
        Some(("audio/wav", &reference)),
        &[("name", "Bi Mwanaisha"), ("consent", "true")],
    );
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let voice = made.json()["voice_id"].as_str().unwrap().to_string();
    let until = |server: &Server, status: u16| {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let spoken = common::cloning::speak(server, KEY_A, &voice);
            if spoken.status == status {
                return spoken;
            }
            assert!(
                Instant::now() < deadline,
                "still {} on {}",
                spoken.status,
                server.base
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    until(&b, 200);
    // The other key still cannot use it, on either replica.
    assert_eq!(common::cloning::speak(&b, KEY_B, &voice).status, 404);
    let listed = get(&b.url("/v1/voices"), Some(KEY_A)).json();
    assert!(listed.to_string().contains(&voice), "{listed}");

    let deleted = method(
        "DELETE",
        &b.url(&format!("/v1/voices/{voice}")),
        Some(KEY_A),
    );
    assert!(
        deleted.status == 200 || deleted.status == 204,
        "{}",
        deleted.status
    );
    until(&a, 404);
}
