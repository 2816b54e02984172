//! Resource limits a hostile or broken client runs into: uploads far over the limit (with the server's memory
//! watched), audio that decodes to hours, JSON over the body limit, and bodies that stall.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, KEY_A};

#[path = "resource_limits/json.rs"]
mod json_bodies;

const BOUNDARY: &str = "limits-boundary-0a9e";

/// Resident memory of a process in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// Stream a `total`-byte audio part in chunks without a declared length; the status line of the answer.
fn stream_upload(server: &Server, path: &str, total: usize) -> String {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let opening = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"big.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    );
    let send = |stream: &mut TcpStream, data: &[u8]| {
        let framed = [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat();
        stream.write_all(&framed).is_ok()
    };
    send(&mut stream, opening.as_bytes());
    let block = vec![0x2au8; 256 * 1024];
    let mut sent = 0;
    while sent < total && send(&mut stream, &block) {
        sent += block.len();
    }
    read_status(&mut stream)
}

fn read_status(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
        }
    }
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn sixty_megabyte_uploads_are_refused_without_the_memory_to_match() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    let pid = server.child.id();
    let before = rss(pid);
    let mut peak = before;
    for path in [
        "/v1/speech-to-text/",
        "/v1/voice-clone/",
        "/v1/voice-agent/converse/audio",
    ] {
        let status = stream_upload(&server, path, 60 << 20);
        assert!(status.contains("413"), "{path}: {status:?}");
        peak = peak.max(rss(pid));
    }
    // At most one limit's worth of audio (50 MB for cloning) is held per upload; the multipart parser's
    // buffers and the allocator's not-yet-returned pages come on top (measured: +84 to +90 MB in all).
    let growth = peak.saturating_sub(before);
    eprintln!(
        "RSS before {} MB, peak {} MB (+{} MB) over three 60 MB uploads",
        before >> 20,
        peak >> 20,
        growth >> 20
    );
    assert!(
        growth < 5 * (50 << 20) / 2,
        "RSS grew by {} MB",
        growth >> 20
    );
    // Still serving.
    assert_eq!(common::get(&server.url("/readyz"), None).status, 200);
}

/// MPEG-1 Layer III frames of silence (32 kbit/s, 48 kHz, mono): 96 bytes for every 24 ms.
fn silent_mp3(seconds: f64) -> Vec<u8> {
    let frames = (seconds / 0.024).ceil() as usize;
    let mut frame = [0u8; 96];
    frame[..4].copy_from_slice(&[0xFF, 0xFB, 0x14, 0xC0]);
    frame.repeat(frames)
}

#[test]
fn audio_that_decodes_to_hours_is_stopped_at_the_cap() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    // 20 minutes in 4.8 MB: over the 15-minute decoding cap, well under the upload limit.
    let mp3 = silent_mp3(20.0 * 60.0);
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"long.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&mp3);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let started = Instant::now();
    let reply = common::post_raw(
        &server.url("/v1/voice-clone/"),
        Some(KEY_A),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &body,
    );
    let problem = common::problem_body(&reply, 422);
    assert!(
        problem["detail"].as_str().unwrap().contains("too long"),
        "{problem}"
    );
    eprintln!("20 min of MP3 refused in {:?}", started.elapsed());
}

/// Like an ordinary HTTP client (no `Expect: 100-continue`): send the whole body, only then read the answer.
fn send_whole_then_read(
    server: &Server,
    path: &str,
    key: Option<&str>,
    content_type: &str,
    size: usize,
) -> String {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let key = key
        .map(|k| format!("xi-api-key: {k}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\n{key}Content-Type: {content_type}\r\nContent-Length: {size}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let block = vec![0x2au8; 1 << 20];
    let mut sent = 0;
    while sent < size {
        let n = block.len().min(size - sent);
        stream
            .write_all(&block[..n])
            .expect("the server lets the client finish sending");
        sent += n;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).to_string()
}

#[test]
fn refusals_reach_a_client_that_sends_its_whole_body_before_reading() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    let multipart = format!("multipart/form-data; boundary={BOUNDARY}");
    for (path, key, content_type, size, status) in [
        (
            "/v1/speech-to-text/",
            Some(KEY_A),
            multipart.as_str(),
            60 << 20,
            "413",
        ),
        (
            "/v1/speech-to-text/",
            Some(KEY_A),
            multipart.as_str(),
            26 << 20,
            "413",
        ),
        (
            "/v1/voice-clone/",
            Some(KEY_A),
            multipart.as_str(),
            51 << 20,
            "413",
        ),
        (
            "/v1/voice-agent/converse/audio",
            Some(KEY_A),
            multipart.as_str(),
            30 << 20,
            "413",
        ),
        (
            "/v1/speech-to-text/",
            None,
            multipart.as_str(),
            8 << 20,
            "401",
        ),
        (
            "/v1/voice-clone/",
            Some(KEY_A),
            "application/octet-stream",
            8 << 20,
            "415",
        ),
    ] {
        let answer = send_whole_then_read(&server, path, key, content_type, size);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{path}: {:?}",
            &answer[..answer.len().min(200)]
        );
        assert!(
            answer.contains("application/problem+json"),
            "{path}: {answer}"
        );
        assert!(
            answer.contains("\"status\":"),
            "{path}: the problem body was not read: {answer}"
        );
    }
}

#[test]
fn stalled_bodies_time_out_with_408() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__SERVER__BODY_TIMEOUT_SECONDS", "2"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let address = server.base.trim_start_matches("http://").to_string();
    for (path, content_type) in [
        (
            "/v1/speech-to-text/",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        ),
        (
            "/v1/voice-clone/",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        ),
        ("/v1/text-to-speech/zuri", "application/json".to_string()),
    ] {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\nContent-Type: {content_type}\r\nContent-Length: 100000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).unwrap();
        let start = if content_type.starts_with("multipart") {
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"a.wav\"\r\n\r\nRIFF")
        } else {
            "{\"text\": \"Habari".to_string()
        };
        stream.write_all(start.as_bytes()).unwrap();
        let started = Instant::now();
        let status = read_status(&mut stream);
        assert!(status.contains("408"), "{path}: {status:?}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{path}: {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn connections_that_never_finish_their_headers_are_closed() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__SERVER__HEADER_TIMEOUT_SECONDS", "2")],
    );
    let address = server.base.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .write_all(format!("GET /v1/voices HTTP/1.1\r\nHost: {address}\r\nxi-api-").as_bytes())
        .unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 1024];
    // The server answers 408 or simply hangs up; either way the connection ends.
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) => continue,
        }
    }
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    // A complete request on a new connection is served as usual.
    assert_eq!(common::get(&server.url("/healthz"), None).status, 200);
}

#[test]
fn headers_trickled_byte_by_byte_are_cut_off_but_a_quiet_keep_alive_connection_is_not() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__SERVER__HEADER_TIMEOUT_SECONDS", "2"),
            ("SAUTI__SERVER__IDLE_TIMEOUT_SECONDS", "30"),
        ],
    );
    let address = server.base.trim_start_matches("http://").to_string();
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n");

    // A byte every 300 ms never lets the connection go idle, but its headers take too long: the server ends
    // the connection (the client reads its end; what it still sends is read and dropped for a while).
    let mut slow = TcpStream::connect(&address).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let started = Instant::now();
    let mut cut_off = false;
    for byte in request.as_bytes().iter().cycle().take(60) {
        if slow.write_all(&[*byte]).is_err() {
            cut_off = true;
            break;
        }
        let mut buffer = [0u8; 256];
        match slow.read(&mut buffer) {
            Ok(0) => {
                cut_off = true;
                break;
            }
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                cut_off = true;
                break;
            }
        }
    }
    let waited = started.elapsed();
    assert!(cut_off, "still open after {waited:?}");
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(8),
        "{waited:?}"
    );

    // A keep-alive connection quiet for longer than the header deadline still serves its next request: the
    // deadline counts from a request's first byte.
    let mut quiet = TcpStream::connect(&address).unwrap();
    quiet
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for pause in [Duration::ZERO, Duration::from_secs(3)] {
        std::thread::sleep(pause);
        quiet.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        quiet.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200", "after a pause of {pause:?}");
        // The rest of the small response: read until the JSON body closes.
        let mut rest = Vec::new();
        let mut byte = [0u8; 1];
        while !rest.ends_with(b"}") {
            quiet.read_exact(&mut byte).unwrap();
            rest.push(byte[0]);
        }
    }
}
