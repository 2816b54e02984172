//! The two-replica mode of [`Server`](super::Server): the service conformance tests run unchanged against
//! two replicas sharing PostgreSQL, Redis and an S3 bucket, each request going to the other replica.

use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Server;

/// Whether `SAUTI_TEST_REPLICAS=2` asks for two replicas.
pub fn wanted() -> bool {
    std::env::var("SAUTI_TEST_REPLICAS").is_ok_and(|v| v == "2")
}

/// The second replica and the services both share; stopped when dropped.
pub struct Replica {
    child: Child,
    base: String,
    turn: AtomicUsize,
    _postgres: super::postgres::Postgres,
    _redis: super::redis::Redis,
    _s3: super::moto::S3,
}

impl Replica {
    /// The base URL of the replica whose turn it is.
    pub fn next_base<'a>(&'a self, first: &'a str) -> &'a str {
        match self.turn.fetch_add(1, Ordering::Relaxed) % 2 {
            0 => first,
            _ => &self.base,
        }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Two replicas with `env`, each with a data directory of its own, sharing fresh private services.
pub fn start(data_dir: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Server {
    let postgres = super::postgres::Postgres::start();
    let redis = super::redis::Redis::start();
    let s3 = super::moto::S3::start("replicas");
    let mut owned: Vec<(&str, String)> = s3.env();
    owned.push(("SAUTI__STORAGE__URL", postgres.url()));
    owned.push(("SAUTI__STORAGE__BLOBS_URL", "s3://replicas/audio".into()));
    owned.push(("SAUTI__LIMITS__REDIS_URL", redis.url()));
    // Both read the same models; each keeps its scratch files in a directory of its own.
    owned.push((
        "SAUTI__MODELS__DIR",
        data_dir.join("models").display().to_string(),
    ));
    let mut all: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(env);
    let mut first = Server::spawn_one(data_dir, config, &all);
    let second_dir = data_dir.join("replica-b");
    std::fs::create_dir_all(&second_dir).unwrap();
    let (child, base, _) = Server::launch(&second_dir, config, &all);
    first.replica = Some(Box::new(Replica {
        child,
        base,
        turn: AtomicUsize::new(0),
        _postgres: postgres,
        _redis: redis,
        _s3: s3,
    }));
    first
}
