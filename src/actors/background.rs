//! The service's background loops (key sync, voice sync, the job listener), owned and watched: each runs in a
//! [`Background`] set that starts it again, after a growing pause, whenever it panics or ends, counts that in
//! `sauti_background_restarts_total{loop}`, and stops them all at shutdown.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::work::{catch_unwind, panic_message};

/// The first pause before a loop that stopped is started again; it doubles on each stop, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause before a loop is started again.
const MAX_PAUSE: Duration = Duration::from_secs(60);
/// A loop that ran this long before it stopped starts again after the first pause.
const SETTLED: Duration = Duration::from_secs(300);

/// The running background loops.
pub struct Background {
    tasks: JoinSet<()>,
    stop: CancellationToken,
    first_pause: Duration,
    max_pause: Duration,
}

impl Default for Background {
    fn default() -> Self {
        Self::new()
    }
}

impl Background {
    /// No loops yet.
    pub fn new() -> Self {
        Self::with_pauses(FIRST_PAUSE, MAX_PAUSE)
    }

    /// No loops yet; a stopped loop starts again after `first` and then up to `max`.
    pub fn with_pauses(first: Duration, max: Duration) -> Self {
        Self {
            tasks: JoinSet::new(),
            stop: CancellationToken::new(),
            first_pause: first,
            max_pause: max,
        }
    }

    /// Run the loop `start` makes, named `name`, until [`Background::stop`]; it is made again whenever it panics
    /// or ends.
    pub fn spawn<F, L>(&mut self, name: &'static str, mut start: F)
    where
        F: FnMut() -> L + Send + 'static,
        L: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stop.clone();
        let (first, max) = (self.first_pause, self.max_pause);
        self.tasks.spawn(async move {
            let mut pause = first;
            loop {
                let started = Instant::now();
                let ended = tokio::select! {
                    _ = stop.cancelled() => return,
                    ended = catch_unwind(start()) => ended,
                };
                if started.elapsed() >= SETTLED {
                    pause = first;
                }
                metrics::counter!(crate::telemetry::metrics::BACKGROUND_RESTARTS, "loop" => name)
                    .increment(1);
                match ended {
                    Ok(()) => tracing::error!(
                        task = name,
                        pause_ms = pause.as_millis() as u64,
                        "a background loop ended; starting it again"
                    ),
                    Err(panic) => tracing::error!(
                        task = name,
                        panic = panic_message(panic.as_ref()),
                        pause_ms = pause.as_millis() as u64,
                        "a background loop panicked; starting it again"
                    ),
                }
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(max);
            }
        });
    }

    /// Loops running.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether no loop runs.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Stop every loop (at its next pause point) and wait for them.
    pub async fn stop(mut self) {
        self.stop.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.cancel();
        self.tasks.abort_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn a_loop_that_panics_or_ends_is_started_again_and_all_stop_together() {
        let mut loops = Background::with_pauses(Duration::from_millis(1), Duration::from_millis(4));
        let starts = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&starts);
        let (settled, mut running) = tokio::sync::mpsc::unbounded_channel();
        loops.spawn("test", move || {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let settled = settled.clone();
            async move {
                match n {
                    0 => panic!("first run fails"),
                    1 => {}
                    _ => {
                        let _ = settled.send(n);
                        std::future::pending::<()>().await
                    }
                }
            }
        });
        let third = tokio::time::timeout(Duration::from_secs(10), running.recv()).await;
        assert_eq!(third.ok().flatten(), Some(2));
        assert_eq!(loops.len(), 1);
        tokio::time::timeout(Duration::from_secs(10), loops.stop())
            .await
            .expect("every loop stops");
        assert_eq!(starts.load(Ordering::SeqCst), 3);
    }
}
