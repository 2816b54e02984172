//! Black-box tests that measure the server while loading it: memory kept flat under floods and bombs, real-time
//! pacing, fairness between keys, write and idle timeouts, ten thousand requests, the costliest syntheses and
//! clones at once, spoken realtime turns. Each takes [`common::alone`] first, so they run one at a time whatever
//! `--test-threads` says: on a two-core machine a neighbouring test would be measured with them.

#[path = "../common/mod.rs"]
mod common;

mod audio_bombs;
mod call_records;
mod concurrent_limits;
mod connections;
mod fair_recognition;
mod keypad;
mod load;
mod realtime;
mod realtime_bounds;
mod resource_limits;
mod transfers;
mod turn_taking;
mod webhooks;
mod work_budget;
