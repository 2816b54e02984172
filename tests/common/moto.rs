//! An S3-compatible server for a test: moto in server mode (`tools/moto.sh` installs it from PyPI) on a free
//! loopback port, with one bucket, stopped when dropped. A test that cannot start one fails.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct S3 {
    child: Child,
    port: u16,
}

/// The directory holding moto.
fn installed() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let output = Command::new("bash")
            .arg(format!("{root}/tools/moto.sh"))
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "tools/moto.sh: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    })
}

impl S3 {
    /// A server with the bucket `bucket`.
    pub fn start(bucket: &str) -> S3 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .env("PYTHONPATH", installed())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs moto");
        let s3 = S3 { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "moto did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let made = ureq::put(&format!("{}/{bucket}", s3.endpoint())).send_bytes(&[]);
        assert!(made.is_ok(), "bucket not created: {made:?}");
        s3
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The environment a replica needs to use it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// The keys in `bucket` (moto's listing, unsigned).
    pub fn keys(&self, bucket: &str) -> Vec<String> {
        let listing = ureq::get(&format!("{}/{bucket}", self.endpoint()))
            .call()
            .expect("listing")
            .into_string()
            .unwrap();
        listing
            .split("<Key>")
            .skip(1)
            .filter_map(|part| part.split("</Key>").next())
            .map(str::to_string)
            .collect()
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
