//! A PostgreSQL for a test: `SAUTI_TEST_POSTGRES_URL` when set (each test gets a database of its own there),
//! otherwise a private server — Debian's `postgresql` package, installed by `tools/test.sh` — on a free
//! loopback port with its files in a temporary directory, stopped when dropped. A test that cannot have one
//! fails.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Postgres {
    child: Option<Child>,
    port: u16,
    dir: Option<tempfile::TempDir>,
    url: String,
}

/// The directory of the newest installed server's programs (`initdb`, `postgres`).
fn binaries() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
    });
    found
        .pop()
        .expect("PostgreSQL under /usr/lib/postgresql (tools/test.sh installs it: apt-get install postgresql)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `program` as the `postgres` user when this runs as root (the server refuses to run as root).
fn as_server_user(program: PathBuf) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command
            .args([
                "--reuid",
                "postgres",
                "--regid",
                "postgres",
                "--init-groups",
                "--",
            ])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

impl Postgres {
    /// A database of this test's own.
    pub fn start() -> Postgres {
        if let Ok(url) = std::env::var("SAUTI_TEST_POSTGRES_URL") {
            return Self::given(&url);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(
                status.success(),
                "the temporary directory could not be given to postgres"
            );
        }
        let output = as_server_user(binaries().join("initdb"))
            .args([
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-sync",
            ])
            .arg("-D")
            .arg(dir.path().join("data"))
            .output()
            .expect("initdb runs");
        assert!(
            output.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut postgres = Postgres {
            child: None,
            port: 0,
            dir: Some(dir),
            url: String::new(),
        };
        super::readiness::on_a_free_port("postgres", |port| {
            postgres.port = port;
            postgres.url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
            postgres.launch()
        });
        postgres
    }

    /// A fresh database on the server `url` names.
    fn given(url: &str) -> Postgres {
        let name = format!("sauti_test_{}", uuid::Uuid::new_v4().simple());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("SAUTI_TEST_POSTGRES_URL answers");
            tokio::spawn(connection);
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .expect("a test database can be created");
        });
        let mut config: tokio_postgres::Config = url.parse().expect("a PostgreSQL URL");
        config.dbname(&name);
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
            _ => "127.0.0.1".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("postgres").to_string();
        let password = config
            .get_password()
            .map(|p| format!(":{}", String::from_utf8_lossy(p)))
            .unwrap_or_default();
        Postgres {
            child: None,
            port,
            dir: None,
            url: format!("postgres://{user}{password}@{host}:{port}/{name}"),
        }
    }

    /// `postgres://…` for `storage.url`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stop the server at once (fast shutdown: open connections are cut); its files stay for
    /// [`Postgres::resume`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// Start the private server again on the same port and files.
    pub fn resume(&mut self) {
        if let Err(why) = self.launch() {
            panic!("postgres did not start again: {why}");
        }
    }

    /// Start the private server on `self.port`: an error (with what it logged) if it exits or does not accept
    /// connections within a minute.
    fn launch(&mut self) -> Result<(), String> {
        let dir = self
            .dir
            .as_ref()
            .expect("a private server")
            .path()
            .to_path_buf();
        let log = dir.join("postgres.log");
        let output = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("a log file");
        let child = as_server_user(binaries().join("postgres"))
            .arg("-D")
            .arg(dir.join("data"))
            .args([
                "-p",
                &self.port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
            ])
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .arg("-k")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(output)
            .spawn()
            .expect("postgres runs");
        self.child = Some(child);
        let timing = (Duration::from_secs(60), Duration::from_millis(50), 5);
        let waited = super::readiness::wait_ready(&mut self.child, self.port, &log, timing, ready);
        if waited.is_err() {
            self.stop();
        }
        waited
    }
}

/// Whether the server on `port` accepts connections (not only listens: it may still be starting up).
fn ready(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
        && Command::new(binaries().join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|s| s.success())
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
