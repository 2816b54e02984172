//! Connection hygiene and downloads: large job audio streamed from disk (with ranges) to clients that do not
//! read, idle sockets, the cap on open connections, and shutdown with a client that never reads.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{Server, KEY_A};
use serde_json::json;

fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

fn gauge(server: &Server, name: &str) -> f64 {
    let metrics = common::get(&server.url("/metrics"), None);
    String::from_utf8_lossy(&metrics.body)
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

/// A finished job whose WAV is then made `bytes` long (sparse: the disk holds next to nothing) while the server
/// is stopped; the server started again on the same data, and the job's id.
fn server_with_large_audio(data: &Path, bytes: u64, env: &[(&str, &str)]) -> (Server, String) {
    let server = Server::start(data, env);
    let created = common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari ya asubuhi."}),
    );
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let job = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(job["status"], "succeeded", "{job}");
    drop(server);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(data.join(format!("jobs/{id}.wav")))
        .unwrap();
    file.set_len(bytes).unwrap();
    (Server::start(data, env), id)
}

fn request(server: &Server, head: &str) -> TcpStream {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(format!("{head}Host: {address}\r\n\r\n").as_bytes())
        .unwrap();
    stream
}

/// Whether the server closes `stream` within `limit` (reading at most a few kilobytes of what it sent).
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buffer = [0u8; 4096];
    let started = Instant::now();
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) if started.elapsed() < limit => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            _ => return false,
        }
    }
}

#[test]
fn downloads_stream_from_disk_in_ranges_and_clients_that_never_read_are_dropped() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let env = [
        ("SAUTI__SERVER__WRITE_TIMEOUT_SECONDS", "3"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
    ];
    let (server, id) = server_with_large_audio(data.path(), 1_400_000_000, &env);
    let path = format!("/v1/tts/jobs/{id}/audio");

    // A range: exactly those bytes, with the headers that say so.
    let mut partial = request(
        &server,
        &format!("GET {path} HTTP/1.1\r\nxi-api-key: {KEY_A}\r\nRange: bytes=0-43\r\nConnection: close\r\n"),
    );
    let mut answer = Vec::new();
    partial.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&answer[..split]).to_string();
    let body = &answer[split + 4..];
    assert!(head.starts_with("HTTP/1.1 206"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-range: bytes 0-43/1400000000"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase().contains("accept-ranges: bytes"),
        "{head}"
    );
    assert_eq!(body.len(), 44);
    assert!(body.starts_with(b"RIFF"));
    let beyond = request(
        &server,
        &format!("GET {path} HTTP/1.1\r\nxi-api-key: {KEY_A}\r\nRange: bytes=2000000000-\r\nConnection: close\r\n"),
    );
    let mut answer = String::new();
    { beyond }.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 416"), "{answer}");
    assert!(answer.contains("bytes */1400000000"), "{answer}");

    // Four clients ask for the 1.4 GB file and read nothing.
    let pid = server.child.id();
    let before = rss(pid);
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut client = request(
                &server,
                &format!("GET {path} HTTP/1.1\r\nxi-api-key: {KEY_A}\r\n"),
            );
            // The answer has begun (its head is here); from now on the client reads nothing.
            client
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let mut head = [0u8; 1024];
            let n = client.read(&mut head).unwrap();
            assert!(head[..n].starts_with(b"HTTP/1.1 200"));
            client
        })
        .collect();
    // After the write timeout they are gone (the metrics request sees only itself, give or take the previous
    // probe's connection closing); the server answers others meanwhile, and its memory stays flat throughout.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut peak = rss(pid);
    let mut open = gauge(&server, "sauti_http_connections_open");
    while open > 1.0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        peak = peak.max(rss(pid));
        open = gauge(&server, "sauti_http_connections_open");
    }
    assert!(open <= 1.0, "{open} connections still open");
    let growth = peak.saturating_sub(before);
    assert!(growth < 100 << 20, "RSS grew by {} MB", growth >> 20);
    // Each stalled client, reading at last, finds its connection closed after what the socket buffers held. The
    // closed socket's last bytes and its end come from the kernel, which on a loaded machine (CI builds the fuzz
    // targets beside this test) may take seconds to send them: each read may wait 20 s.
    for mut client in stalled {
        client
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut received = Vec::new();
        match client.read_to_end(&mut received) {
            Ok(_) => {}
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "the connection is still open"
            ),
        }
        assert!((received.len() as u64) < 1_400_000_000);
    }
    assert_eq!(common::get(&server.url("/readyz"), None).status, 200);
}

#[test]
fn idle_sockets_are_closed_and_connections_are_capped() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__SERVER__IDLE_TIMEOUT_SECONDS", "2"),
            ("SAUTI__SERVER__MAX_CONNECTIONS", "4"),
        ],
    );
    let address = server.base.trim_start_matches("http://").to_string();
    // Four connections that send nothing fill the cap: a fifth gets a 503 at once.
    let mut idle: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    // No wait needed: the server takes connections in the order they were made, and a connection holds its
    // place under the cap from the moment it is taken, so the four hold theirs when the fifth arrives.
    let mut fifth = TcpStream::connect(&address).unwrap();
    fifth
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut answer = String::new();
    let _ = fifth.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    // Each idle one is closed within the timeout (and a little slack for the watchdog's tick).
    let started = Instant::now();
    for stream in &mut idle {
        assert!(
            closed_within(stream, Duration::from_secs(6)),
            "an idle socket was kept open"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(6));
    // With the idle ones gone, connections are served again, and a keep-alive one is kept while in use.
    let mut alive = request(&server, "GET /healthz HTTP/1.1\r\n");
    let mut buffer = [0u8; 1024];
    let n = alive.read(&mut buffer).unwrap();
    assert!(String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 200"));
    assert!(
        closed_within(&mut alive, Duration::from_secs(6)),
        "an idle keep-alive connection was kept"
    );
}

#[test]
fn sigterm_with_a_client_that_never_reads_exits_within_the_grace_period() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let env = [
        ("SAUTI__SERVER__SHUTDOWN_GRACE_SECONDS", "2"),
        ("SAUTI__SERVER__WRITE_TIMEOUT_SECONDS", "600"),
    ];
    let (server, id) = server_with_large_audio(data.path(), 800_000_000, &env);
    let mut stalled = request(
        &server,
        &format!("GET /v1/tts/jobs/{id}/audio HTTP/1.1\r\nxi-api-key: {KEY_A}\r\n"),
    );
    // The answer is under way (its head is here) before the SIGTERM; then the client reads nothing.
    stalled
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = [0u8; 1024];
    let n = stalled.read(&mut head).unwrap();
    assert!(head[..n].starts_with(b"HTTP/1.1 200"));
    let started = Instant::now();
    let status = server.terminate(Duration::from_secs(15));
    let took = started.elapsed();
    assert!(status.is_some(), "still running 15 s after SIGTERM");
    assert!(status.unwrap().success(), "{status:?}");
    assert!(took < Duration::from_secs(10), "exit took {took:?}");
    drop(stalled);
}
