//! Supervision under injected faults (needs `--features fault-injection`, which `[[test]]` in Cargo.toml
//! requires): actors that panic, jobs that kill the server.

#[path = "../common/mod.rs"]
mod common;

mod poison_jobs;
mod supervision;
