//! A scripted HTTP/1.1 server on 127.0.0.1:0 for black-box tests: it records every request and answers each
//! with what the test's closure says (status, JSON body, optional delay).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request the fake server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub body: serde_json::Value,
    /// The body as sent (a form, where JSON is `Null`).
    pub raw: String,
    /// Headers, names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Received {
    /// A form field of the body, decoded.
    pub fn form(&self, name: &str) -> Option<String> {
        form_urlencoded::parse(self.raw.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What to answer.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub delay: Duration,
}

impl Answer {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }
}

type Script = dyn Fn(&Received, usize) -> Answer + Send + Sync;

/// The running fake; it stops serving when dropped (its thread ends with the test process).
pub struct FakeHttp {
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeHttp {
    /// Start; `script(request, index)` answers the `index`-th request (0-based).
    pub fn start(script: impl Fn(&Received, usize) -> Answer + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let log = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, script) = (Arc::clone(&log), Arc::clone(&script));
                std::thread::spawn(move || serve(stream, &log, &*script));
            }
        });
        Self { base, received }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Received>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut length = 0;
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let request = Received {
        method,
        path,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        raw: String::from_utf8_lossy(&body).into_owned(),
        headers,
    };
    let index = {
        let mut log = log.lock().unwrap();
        log.push(request.clone());
        log.len() - 1
    };
    let answer = script(&request, index);
    std::thread::sleep(answer.delay);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
        answer.status,
        answer.body.len(),
        answer.body
    );
}
