//! Storage engines, one replica: the embedded mode (SQLite, limits in memory) against PostgreSQL + Redis, both
//! private servers started by the benchmark, measured in the same run with alternating rounds.
//!
//! From outside, through the release server: a job's whole cycle (create, poll until it succeeds, download
//! its WAV), `GET /v1/voices` with a valid key, and an agent conversation's text turns (in memory on one
//! machine, stored in PostgreSQL for replicas), one keep-alive connection, sequential requests. In process:
//! each store call on its own (µs per call), which is where the difference goes.
//!
//! Run: `cargo bench --bench storage` (PostgreSQL and Redis from Debian's packages, as `tools/test.sh`
//! installs them).

#[path = "../tests/common/postgres.rs"]
#[allow(dead_code)]
mod postgres;
#[path = "../tests/common/readiness.rs"]
mod readiness;
#[path = "../tests/common/redis.rs"]
#[allow(dead_code)]
mod redis;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sauti::storage::{JobRecord, Storage};

const KEY: &str = "bench-key-0123456789";
const ROUNDS: usize = 3;
const JOB_CYCLES: usize = 40;
const VOICE_REQUESTS: usize = 3000;
const AGENT_TURNS: usize = 30;
const STORE_CALLS: usize = 400;

struct Server {
    child: Child,
    base: String,
    _data: tempfile::TempDir,
}

impl Server {
    fn start(env: &[(&str, String)]) -> Server {
        let data = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_sauti"));
        command
            .arg("serve")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
            .env("SAUTI__STORAGE__DATA_DIR", data.path())
            .env("SAUTI__AUTH__API_KEYS", KEY)
            .env("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000000")
            .env("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100000000")
            .env("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000000")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("sauti serve starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = loop {
            let line = lines.next().and_then(Result::ok).expect("sauti listens");
            if let Some(base) = line.strip_prefix("sauti listening on ") {
                break base.to_string();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            base,
            _data: data,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Milliseconds per job cycle: create, poll every 5 ms until it succeeds, download.
fn job_cycles(agent: &ureq::Agent, base: &str) -> f64 {
    let started = Instant::now();
    for i in 0..JOB_CYCLES {
        let created: serde_json::Value = agent
            .post(&format!("{base}/v1/tts/jobs"))
            .set("xi-api-key", KEY)
            .send_json(
                serde_json::json!({ "text": format!("Habari za asubuhi, kumbukumbu namba {i}.") }),
            )
            .expect("job created")
            .into_json()
            .unwrap();
        let id = created["job_id"].as_str().unwrap().to_string();
        loop {
            let status: serde_json::Value = agent
                .get(&format!("{base}/v1/tts/jobs/{id}"))
                .set("xi-api-key", KEY)
                .call()
                .unwrap()
                .into_json()
                .unwrap();
            if status["status"] == "succeeded" {
                break;
            }
            assert_ne!(status["status"], "failed", "{status}");
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut wav = Vec::new();
        std::io::Read::read_to_end(
            &mut agent
                .get(&format!("{base}/v1/tts/jobs/{id}/audio"))
                .set("xi-api-key", KEY)
                .call()
                .unwrap()
                .into_reader(),
            &mut wav,
        )
        .unwrap();
        assert!(wav.len() > 44);
    }
    started.elapsed().as_secs_f64() * 1000.0 / JOB_CYCLES as f64
}

/// Microseconds per `GET /v1/voices`.
fn voices(agent: &ureq::Agent, base: &str) -> f64 {
    let started = Instant::now();
    for _ in 0..VOICE_REQUESTS {
        let reply = agent
            .get(&format!("{base}/v1/voices"))
            .set("xi-api-key", KEY)
            .call()
            .unwrap();
        let _ = reply.into_string().unwrap();
    }
    started.elapsed().as_secs_f64() * 1e6 / VOICE_REQUESTS as f64
}

/// Milliseconds per text turn of one conversation (the spoken reply included).
fn agent_turns(agent: &ureq::Agent, base: &str) -> f64 {
    let mut session = serde_json::Value::Null;
    let started = Instant::now();
    for i in 0..AGENT_TURNS {
        let reply: serde_json::Value = agent
            .post(&format!("{base}/v1/voice-agent/converse"))
            .set("xi-api-key", KEY)
            .send_json(serde_json::json!({
                "text": format!("Swali namba {i}: tawi lenu liko wapi?"),
                "session_id": session,
            }))
            .expect("a turn answered")
            .into_json()
            .unwrap();
        session = reply["session_id"].clone();
        assert!(session.is_string(), "{reply}");
    }
    started.elapsed().as_secs_f64() * 1000.0 / AGENT_TURNS as f64
}

/// Microseconds per call of each store operation a job's cycle (and an agent turn) makes.
async fn store_calls(store: Storage) -> Vec<(&'static str, f64)> {
    let per_call = |started: Instant| started.elapsed().as_secs_f64() * 1e6 / STORE_CALLS as f64;
    let jobs: Vec<JobRecord> = (0..STORE_CALLS)
        .map(|i| JobRecord::new("bench", &format!("Habari {i}"), "zuri", Default::default()))
        .collect();
    let started = Instant::now();
    for job in &jobs {
        assert!(store.insert_job_within(job, usize::MAX).await.unwrap());
    }
    let insert = per_call(started);
    let started = Instant::now();
    for job in &jobs {
        store.job(&job.id).await.unwrap();
    }
    let read = per_call(started);
    let started = Instant::now();
    for _ in &jobs {
        store.claim_job().await.unwrap().expect("queued");
    }
    let claim = per_call(started);
    let started = Instant::now();
    for job in &jobs {
        store.job_succeeded(&job.id, 1.0).await.unwrap();
    }
    let succeed = per_call(started);
    let started = Instant::now();
    for _ in 0..STORE_CALLS {
        store.keys_version().await.unwrap();
    }
    let keys = per_call(started);
    store.delete_expired_jobs(i64::MAX).await.unwrap();
    let limits = sauti::storage::SessionLimits {
        idle: Duration::from_secs(600),
        per_owner: 10,
        capacity: 100,
    };
    let session = sauti::storage::SessionRecord {
        id: "ses_bench".into(),
        owner: "bench".into(),
        scenario: "general".into(),
        state: format!(
            r#"{{"history":[{}]}}"#,
            vec![r#"["user","Habari za leo, nataka kujua salio"]"#; 20].join(",")
        ),
    };
    store.insert_session(&session, &limits).await.unwrap();
    let started = Instant::now();
    for i in 0..STORE_CALLS {
        let token = format!("t{i}");
        let claimed = store
            .claim_session(
                "bench",
                "ses_bench",
                limits.idle,
                &token,
                Duration::from_secs(90),
            )
            .await
            .unwrap();
        assert!(matches!(claimed, sauti::storage::SessionClaim::Taken(_)));
        assert!(store
            .release_session("ses_bench", &token, Some(&session.state))
            .await
            .unwrap());
    }
    let turn = per_call(started);
    vec![
        ("job inserted (within the per-key cap)", insert),
        ("job read", read),
        ("job claimed (oldest queued)", claim),
        ("job marked succeeded (fenced)", succeed),
        ("keys version read (every second)", keys),
        ("agent session taken and written back (a turn)", turn),
    ]
}

fn main() {
    // A database each: replicas sharing one would share its queue, and each keeps its audio on its own disk.
    let (pg, pg_alone) = (postgres::Postgres::start(), postgres::Postgres::start());
    let redis = redis::Redis::start();
    let shared_env = vec![
        ("SAUTI__STORAGE__URL", pg.url()),
        ("SAUTI__LIMITS__REDIS_URL", redis.url()),
    ];
    // Three replicas' worth of configuration: embedded, PostgreSQL with limits in memory (to tell the
    // database's share from Redis's), PostgreSQL + Redis.
    let servers = [
        Server::start(&[]),
        Server::start(&[("SAUTI__STORAGE__URL", pg_alone.url())]),
        Server::start(&shared_env),
    ];
    let agent = ureq::AgentBuilder::new().build();
    for server in &servers {
        job_cycles(&agent, &server.base);
    }
    let mut cycles = [Vec::new(), Vec::new(), Vec::new()];
    let mut listing = [Vec::new(), Vec::new(), Vec::new()];
    let mut turns = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (i, server) in servers.iter().enumerate() {
            cycles[i].push(job_cycles(&agent, &server.base));
            listing[i].push(voices(&agent, &server.base));
            turns[i].push(agent_turns(&agent, &server.base));
        }
    }
    drop(servers);

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("{cores}-core machine; one replica; the benchmark's client, the server, PostgreSQL and Redis share it");
    println!("\n## Through the server ({ROUNDS} alternating rounds, medians)\n");
    println!("| workload | embedded (SQLite, limits in memory) | PostgreSQL, limits in memory | PostgreSQL + Redis | PostgreSQL + Redis / embedded |");
    println!("|---|---|---|---|---|");
    let [a, b, c] = cycles.map(median);
    println!("| job: create + poll + download, ms per job ({JOB_CYCLES} a round) | {a:.2} | {b:.2} | {c:.2} | {:.2}× |", c / a);
    let [a, b, c] = listing.map(median);
    println!("| `GET /v1/voices`, µs per request ({VOICE_REQUESTS} a round) | {a:.0} | {b:.0} | {c:.0} | {:.2}× |", c / a);
    let [a, b, c] = turns.map(median);
    println!("| agent text turn (sessions in memory / in PostgreSQL), ms per turn ({AGENT_TURNS} a round) | {a:.2} | {b:.2} | {c:.2} | {:.2}× |", c / a);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (sqlite, postgres) = runtime.block_on(async {
        let open = |url: String| sauti::config::StorageSettings {
            url,
            data_dir: data.path().to_path_buf(),
            ..Default::default()
        };
        let sqlite = sauti::storage::open(&open(String::new())).await.unwrap();
        let postgres = sauti::storage::open(&open(pg.url())).await.unwrap();
        (
            store_calls(Arc::clone(&sqlite)).await,
            store_calls(Arc::clone(&postgres)).await,
        )
    });
    println!(
        "\n## Where the time goes: each store call on its own (µs per call, {STORE_CALLS} calls)\n"
    );
    println!("| call | SQLite | PostgreSQL | PostgreSQL / SQLite |");
    println!("|---|---|---|---|");
    for ((name, s), (_, p)) in sqlite.iter().zip(&postgres) {
        println!("| {name} | {s:.0} | {p:.0} | {:.1}× |", p / s);
    }
}
