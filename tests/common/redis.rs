//! A private Redis for a test: `redis-server` (installed by `tools/test.sh` from Debian's packages) on a free
//! loopback port, its files in a temporary directory, stopped when dropped. A test that cannot start one fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Redis {
    /// Start a Redis on a free port.
    pub fn start() -> Redis {
        let mut redis = Redis {
            child: None,
            port: 0,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        super::readiness::on_a_free_port("redis-server", |port| {
            redis.port = port;
            redis.launch()
        });
        redis
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kill it (as a crash would).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-CONT", &child.id().to_string()])
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freeze or thaw it (SIGSTOP / SIGCONT): a Redis that accepts connections and never answers.
    pub fn freeze(&self, frozen: bool) {
        let child = self.child.as_ref().expect("running");
        let signal = if frozen { "-STOP" } else { "-CONT" };
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Start it again on the same port (empty: it keeps nothing on disk).
    pub fn resume(&mut self) {
        if let Err(why) = self.launch() {
            panic!("redis-server did not start again: {why}");
        }
    }

    /// Start it on `self.port`: an error (with what it logged) if it exits or does not answer within 30 s.
    fn launch(&mut self) -> Result<(), String> {
        let log = self.dir.path().join("redis.log");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (tools/test.sh installs it: apt-get install redis-server)");
        self.child = Some(child);
        let timing = (Duration::from_secs(30), Duration::from_millis(20), 3);
        let waited =
            super::readiness::wait_ready(&mut self.child, self.port, &log, timing, answers);
        if waited.is_err() {
            self.stop();
        }
        waited
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether the server on `port` answers PING.
fn answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}
