//! The service across its life: start-up configuration, the development key, restarts after a crash, and a
//! graceful stop.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::json;

#[test]
fn twenty_jobs_survive_a_kill_9_mid_run_and_none_completes_twice() {
    let dir = temp_dir();
    let env = [
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
    ];
    let server = Server::start(dir.path(), &env);
    let jobs: Vec<String> = (0..20)
        .map(|i| {
            let reply = post_json(
                &server.url("/v1/tts/jobs"),
                Some(KEY_A),
                &json!({"text": text_of(2_500 + i * 50)}),
            );
            assert_eq!(reply.status, 202);
            reply.json()["job_id"].as_str().expect("job_id").to_string()
        })
        .collect();
    // kill -9 once some jobs have finished and one is running, the rest queued.
    let status_of = |server: &Server, job: &str| {
        get(&server.url(&format!("/v1/tts/jobs/{job}")), Some(KEY_A)).json()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let finished_before: Vec<(String, String)> = loop {
        let statuses: Vec<serde_json::Value> = jobs.iter().map(|j| status_of(&server, j)).collect();
        let done: Vec<(String, String)> = statuses
            .iter()
            .filter(|s| s["status"] == "succeeded")
            .map(|s| {
                (
                    s["job_id"].as_str().unwrap().to_string(),
                    s["completed_at"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let running = statuses.iter().any(|s| s["status"] == "running");
        if done.len() >= 2 && running {
            break done;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "jobs did not start: {statuses:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    server.crash();

    let server = Server::start(dir.path(), &env);
    for job in &jobs {
        let done = wait_for_job(&server, KEY_A, job, Duration::from_secs(300));
        assert_eq!(done["status"], "succeeded", "{job}: {done}");
        let audio = get(
            &server.url(&format!("/v1/tts/jobs/{job}/audio")),
            Some(KEY_A),
        );
        assert_eq!(audio.status, 200);
        let (rate, channels, seconds) = wav_properties(&audio.body);
        assert_eq!((rate, channels), (16_000, 1));
        assert!(seconds > 100.0, "{job}: {seconds} s");
        assert_eq!(
            audio.body.len(),
            44 + (seconds * 16_000.0).round() as usize * 2,
            "{job}: the WAV is complete"
        );
    }
    // Jobs that had finished before the crash were not run again.
    for (job, completed_at) in &finished_before {
        assert_eq!(
            status_of(&server, job)["completed_at"],
            completed_at.as_str(),
            "{job}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("jobs"))
        .expect("jobs folder")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");

    // And succeeded jobs survive a further restart, audio included.
    server.crash();
    let server = Server::start(dir.path(), &env);
    let audio = get(
        &server.url(&format!("/v1/tts/jobs/{}/audio", jobs[19])),
        Some(KEY_A),
    );
    assert_eq!(audio.status, 200);
}

#[test]
fn without_configured_keys_a_development_key_is_made_once() {
    let dir = temp_dir();
    let server = Server::start_raw(dir.path(), &[]);
    let key = server
        .created_key
        .clone()
        .expect("a development key is printed");
    assert_eq!(get(&server.url("/v1/voices"), Some(&key)).status, 200);
    server.crash();
    let database = std::fs::read(dir.path().join("sauti.db")).expect("database");
    assert!(
        !database.windows(key.len()).any(|w| w == key.as_bytes()),
        "the key itself is never stored"
    );

    let server = Server::start_raw(dir.path(), &[]);
    assert!(server.created_key.is_none(), "no second key");
    assert_eq!(get(&server.url("/v1/voices"), Some(&key)).status, 200);
}

#[test]
fn keys_made_with_the_cli_work_and_revoked_ones_stop_working() {
    let dir = temp_dir();
    let data = dir.path().display().to_string();
    let sauti = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sauti"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAUTI__STORAGE__DATA_DIR", &data)
            .output()
            .expect("runs")
    };
    let created = sauti(&["keys", "create", "--name", "pilot"]);
    assert!(created.status.success());
    let key = String::from_utf8_lossy(&created.stdout).trim().to_string();
    assert!(key.starts_with("sk_sauti_"));
    let listed = String::from_utf8_lossy(&sauti(&["keys", "list"]).stdout).to_string();
    assert!(listed.contains("pilot") && !listed.contains(&key));
    let id = listed.split('\t').next().expect("id").to_string();

    let server = Server::start_raw(dir.path(), &[]);
    assert!(
        server.created_key.is_none(),
        "a stored key exists, so no development key"
    );
    assert_eq!(get(&server.url("/v1/voices"), Some(&key)).status, 200);
    server.crash();
    assert!(sauti(&["keys", "revoke", &id]).status.success());
    assert!(
        !sauti(&["keys", "revoke", &id]).status.success(),
        "already revoked"
    );
    let server = Server::start_raw(dir.path(), &[]);
    assert_eq!(get(&server.url("/v1/voices"), Some(&key)).status, 401);
}

#[test]
fn invalid_configuration_stops_start_up_naming_the_key() {
    let dir = temp_dir();
    for (key, value, mention) in [
        (
            "SAUTI__LIMITS__SYNTHESIS_PER_MINUTE",
            "lots",
            "limits.synthesis_per_minute",
        ),
        (
            "SAUTI__LIMITS__STATUS_PER_MINUTE",
            "0",
            "limits.status_per_minute",
        ),
        ("SAUTI__SERVER__BIND", "not-an-address", "server.bind"),
        ("SAUTI__SERVER__IO_THREADS", "many", "server.io_threads"),
        ("SAUTI__SERVER__IO_THREADS", "100000", "server.io_threads"),
        ("SAUTI__TTS__DEFAULT_VOICE", "nobody", "tts.default_voice"),
        ("SAUTI__TURNS__VAD", "always", "turns.vad"),
        ("SAUTI__ASR__BATCH_SIZE", "0", "asr.batch_size"),
        ("SAUTI__ASR__BATCH_WINDOW_MS", "1000", "asr.batch_window_ms"),
        ("SAUTI__TURNS__VAD_THRESHOLD", "2", "turns.vad_threshold"),
        (
            "SAUTI__TURNS__EARLY_RECOGNITION_MS",
            "50",
            "turns.early_recognition_ms",
        ),
        // A model asked for by name that is not installed stops start-up, saying what to install.
        ("SAUTI__TURNS__VAD", "silero", "turns.vad = \"silero\""),
        ("SAUTI__TURNS__SMART_TURN", "true", "smart-turn-v3"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_sauti"))
            .arg("serve")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAUTI__STORAGE__DATA_DIR", dir.path())
            .env("SAUTI__AUTH__API_KEYS", KEY_A)
            .env(key, value)
            .output()
            .expect("runs");
        assert!(!output.status.success(), "{key}={value} should not start");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(mention), "{key}={value}: {stderr}");
    }
}

#[test]
fn sigterm_stops_the_server_gracefully() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
    let status = server
        .terminate(Duration::from_secs(15))
        .expect("exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    // The tightest window: SIGTERM the moment the listening line is printed. The handlers are in place by then, so
    // the exit is the graceful one (status 0), never the default action's death by signal.
    for attempt in 0..5 {
        let server = Server::start(dir.path(), &[]);
        let status = server
            .terminate(Duration::from_secs(15))
            .expect("exits after SIGTERM");
        assert!(status.success(), "attempt {attempt}: {status:?}");
    }
}
