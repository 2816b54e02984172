//! Waiting for a private test server (PostgreSQL, Redis) that was just started to answer.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// Poll `ready(port)` every `poll` until it holds. An error, with the last `lines` lines of the server's log, if
/// it exits first (`child` is then None) or `limit` passes (the caller stops it).
pub fn wait_ready(
    child: &mut Option<Child>,
    port: u16,
    log: &Path,
    (limit, poll, lines): (Duration, Duration, usize),
    ready: impl Fn(u16) -> bool,
) -> Result<(), String> {
    let logged = || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join(" | ")
    };
    let started = Instant::now();
    while !ready(port) {
        if let Some(Ok(Some(status))) = child.as_mut().map(Child::try_wait) {
            *child = None;
            return Err(format!("exited ({status}) on port {port}: {}", logged()));
        }
        if started.elapsed() > limit {
            return Err(format!(
                "no answer on port {port} in {} s: {}",
                limit.as_secs(),
                logged()
            ));
        }
        std::thread::sleep(poll);
    }
    Ok(())
}

/// A loopback port nothing listens on at this moment.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `launch` a server on a free port; the port may be taken by another test's server before this one binds it,
/// so up to five ports are tried. Panics with the last error, naming `what`.
pub fn on_a_free_port(what: &str, mut launch: impl FnMut(u16) -> Result<(), String>) {
    for attempt in 1.. {
        match launch(free_port()) {
            Ok(()) => return,
            Err(why) if attempt < 5 => eprintln!("{what}: {why}; again on another port"),
            Err(why) => panic!("{what} did not start: {why}"),
        }
    }
}
