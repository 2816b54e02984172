//! One HTTP/1.1 connection that stays open between requests, as a client's connection pool keeps it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::Server;

pub struct KeptAlive(BufReader<TcpStream>);

/// Status and headers (names in lower case) of one answer.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl KeptAlive {
    pub fn open(server: &Server) -> Self {
        let stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Self(BufReader::new(stream))
    }

    /// `GET path` with `key`, on this connection (which must still be open); the body is read and dropped.
    pub fn get(&mut self, path: &str, key: &str) -> Answer {
        let request = format!("GET {path} HTTP/1.1\r\nHost: sauti\r\nxi-api-key: {key}\r\n\r\n");
        self.0.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        assert!(
            self.0.read_line(&mut status_line).unwrap() > 0,
            "the connection was closed"
        );
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            self.0.read_line(&mut line).unwrap();
            let Some((name, value)) = line.trim_end().split_once(':') else {
                break;
            };
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        let answer = Answer {
            status: status_line.split(' ').nth(1).unwrap().parse().unwrap(),
            headers,
        };
        let length: usize = answer
            .header("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut body = vec![0; length];
        self.0.read_exact(&mut body).unwrap();
        answer
    }
}
