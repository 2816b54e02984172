//! Reading a chunked answer off the socket chunk by chunk, as the server framed it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::head::Head;
use super::{Server, KEY_A};

/// An answer read off the socket chunk by chunk, as the server framed it; its status and headers through
/// [`Head`].
pub struct Chunked {
    pub head: Head,
    pub chunks: Vec<Vec<u8>>,
}

impl std::ops::Deref for Chunked {
    type Target = Head;

    fn deref(&self) -> &Head {
        &self.head
    }
}

impl Chunked {
    pub fn joined(&self) -> Vec<u8> {
        self.chunks.concat()
    }
}

/// POST `body` to `path` and read the answer's chunks; stop after `limit` chunks (dropping the connection).
pub fn post_chunked(
    server: &Server,
    path: &str,
    body: &serde_json::Value,
    limit: usize,
) -> Chunked {
    let address = server.url("").trim_start_matches("http://").to_string();
    let stream = TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.to_string();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    (&stream).write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let head = super::head::read_head(&mut reader).expect("an answer");
    let mut answer = Chunked {
        head,
        chunks: Vec::new(),
    };
    let mut line = String::new();
    if answer.header("transfer-encoding") != Some("chunked") {
        let mut body = Vec::new();
        reader.read_to_end(&mut body).unwrap();
        answer.chunks.push(body);
        return answer;
    }
    while answer.chunks.len() < limit {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let size = usize::from_str_radix(line.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        let mut chunk = vec![0u8; size + 2];
        reader.read_exact(&mut chunk).unwrap();
        chunk.truncate(size);
        answer.chunks.push(chunk);
    }
    answer
}
