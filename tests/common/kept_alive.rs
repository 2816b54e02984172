//! One HTTP/1.1 connection that stays open between requests, as a client's connection pool keeps it.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub use super::head::Head as Answer;
use super::Server;

pub struct KeptAlive(BufReader<TcpStream>);

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
        let answer = super::head::read_head(&mut self.0).expect("the connection was closed");
        let length: usize = answer
            .header("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut body = vec![0; length];
        self.0.read_exact(&mut body).unwrap();
        answer
    }
}
