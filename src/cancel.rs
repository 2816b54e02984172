//! Cancellation of work a caller no longer waits for. The caller holds a [`CancelOnDrop`]; when its future is
//! dropped (the client disconnected) or its deadline passes, the flag is set, and the worker, which checks it
//! between bounded units of work (a sentence, a clause, a recognition window), stops at the next one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag shared between a caller and the work it asked for.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the caller has gone away.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Resolves once the flag is set (looked at every 50 ms): for work waiting its turn, so it lets go of what
    /// it holds as soon as its caller has gone.
    pub async fn cancelled(&self) {
        while !self.is_cancelled() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Tell the work to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// A guard that cancels when dropped: held by the caller for as long as it waits.
    pub fn on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(self.clone())
    }
}

/// Cancels its flag when dropped. Work that has already finished ignores the flag.
#[derive(Debug)]
pub struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
