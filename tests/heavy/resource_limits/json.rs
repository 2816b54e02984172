//! JSON bodies over the 1 MB limit: declared, sent whole, or sent chunked without a length.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::common::{self, Server, KEY_A};

#[test]
fn json_over_the_body_limit_is_413() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let body = serde_json::to_vec(&json!({ "text": "a".repeat(2 * 1024 * 1024) })).unwrap();
    let (status, problem) = common::send_raw(
        &server,
        "/v1/text-to-speech/zuri",
        "application/json",
        body.len(),
        &body,
    );
    assert!(status.contains("413"), "{status:?}");
    assert!(problem.contains("larger than 1 MB"), "{problem}");
}

#[test]
fn json_sent_chunked_without_a_length_is_cut_off_at_the_limit() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let address = server.base.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /v1/text-to-speech/zuri HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    // 1.5 MB in 64 KiB chunks: over this endpoint's 1 MB, under the 2 MB a JSON body may have elsewhere.
    let body = serde_json::to_vec(&json!({ "text": "a".repeat(1536 * 1024) })).unwrap();
    for chunk in body.chunks(64 * 1024) {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        if stream.write_all(&framed).is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let (status, problem) = common::head::read_answer(&mut stream);
    assert!(status.starts_with("HTTP/1.1 413"), "{status:?}");
    assert!(problem.contains("larger than 1 MB"), "{problem}");
}

#[test]
fn json_declaring_more_than_the_limit_is_refused_before_it_arrives() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let started = Instant::now();
    // Two megabytes declared, a few bytes sent: the answer does not wait for the rest.
    let (status, problem) = common::send_raw(
        &server,
        "/v1/text-to-speech/zuri",
        "application/json",
        2 * 1024 * 1024,
        b"{\"text\": \"Habari",
    );
    assert!(status.contains("413"), "{status:?}");
    assert!(problem.contains("larger than 1 MB"), "{problem}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
