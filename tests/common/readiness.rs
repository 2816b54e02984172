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
