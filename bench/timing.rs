//! Shared by the benches that include it: the median of `runs` timed calls after one untimed warm-up.

use std::time::{Duration, Instant};

/// The median time of `runs` calls of `f`, after one warm-up call.
pub fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}
