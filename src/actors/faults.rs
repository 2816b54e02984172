//! Test-only fault injection (cargo feature `fault-injection`).
//!
//! Where the work runs: with `SAUTI_FAULT_<WORK>_EVERY=N` in the environment, every Nth piece of that work
//! panics where it runs, so tests can watch the one request fail alone (see `actors::work`):
//! `SYNTHESIS` (a synthesis request, on its worker thread), `RECOGNITION` (a recognition, on its worker
//! thread), `TURN` (a dialogue turn) and `JOB` (a job run, which fails the job).
//!
//! In the actors themselves: with `SAUTI_FAULT_<ACTOR>_EVERY=N` (`TTS`, `ASR`, `DIALOGUE`, `CLONE`), that actor
//! panics on every Nth message, so tests can watch the supervisor restart it. With `SAUTI_FAULT_JOB_ABORT=TEXT`, the process aborts (as an out-of-memory kill would
//! end it) whenever a job whose text contains `TEXT` starts running, so tests can watch a job that stops the
//! server on every start.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

static COUNTERS: OnceLock<Mutex<HashMap<&'static str, (u64, AtomicU64)>>> = OnceLock::new();

/// Panic if this is the Nth message to `actor` (or the Nth piece of work of that name) since start-up and N
/// is configured for it.
pub fn maybe_panic(actor: &'static str) {
    let counters = COUNTERS.get_or_init(Mutex::default);
    let every = {
        let Ok(mut map) = counters.lock() else { return };
        let (every, count) = map.entry(actor).or_insert_with(|| {
            let variable = format!("SAUTI_FAULT_{}_EVERY", actor.to_uppercase());
            (
                std::env::var(variable)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
                AtomicU64::new(0),
            )
        });
        let n = count.fetch_add(1, Ordering::Relaxed) + 1;
        (*every > 0 && n % *every == 0).then_some(n)
    };
    if let Some(n) = every {
        panic!("injected fault: {actor} message {n}");
    }
}

/// Abort the process if `text` (a job's, as it starts running) contains the configured `SAUTI_FAULT_JOB_ABORT`.
pub fn maybe_abort_job(text: &str) {
    let Ok(marker) = std::env::var("SAUTI_FAULT_JOB_ABORT") else {
        return;
    };
    if !marker.is_empty() && text.contains(&marker) {
        eprintln!("injected fault: a job stops the process");
        std::process::abort();
    }
}
