//! A clock that one thread moves every 10 ms, for what is noted on every request or every byte moved and only
//! ever compared in seconds (connection timeouts, the rate-limit reset time): reading it is one relaxed load,
//! where a clock read costs more than the note it serves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the clock started (the process's first reading).
static SINCE_START: AtomicU64 = AtomicU64::new(0);
/// Milliseconds since the epoch by the system clock, as of the last tick.
static UNIX: AtomicU64 = AtomicU64::new(0);
static CLOCK: Once = Once::new();

/// How often the clock moves.
const TICK: Duration = Duration::from_millis(10);

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn started() {
    CLOCK.call_once(|| {
        let started = Instant::now();
        UNIX.store(unix_now(), Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("coarse-clock".into())
            .spawn(move || loop {
                std::thread::sleep(TICK);
                SINCE_START.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
                UNIX.store(unix_now(), Ordering::Relaxed);
            });
        if let Err(error) = spawned {
            tracing::error!(%error, "no clock thread: connection timeouts will not fire");
        }
    });
}

/// Milliseconds since the clock started, within 10 ms (steady: never goes back).
pub fn millis_since_start() -> u64 {
    started();
    SINCE_START.load(Ordering::Relaxed)
}

/// Seconds since the epoch by the system clock, within 10 ms.
pub fn unix_seconds() -> f64 {
    started();
    UNIX.load(Ordering::Relaxed) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_clock_follows_the_system_clock_and_moves() {
        let system = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!((super::unix_seconds() - system).abs() < 1.0);
        // It moves every 10 ms; a loaded machine may hold its thread back a while, so wait up to 5 s for it.
        let before = super::millis_since_start();
        let waited = std::time::Instant::now();
        let mut after = before;
        while after == before && waited.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            after = super::millis_since_start();
        }
        assert!(after > before, "{before} then {after}");
        assert!(after - before < 10_000, "{before} then {after}");
    }
}
