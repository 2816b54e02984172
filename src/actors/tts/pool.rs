//! The synthesis workers: long-lived threads that take jobs from one queue. A worker that finishes a job
//! picks up the next one at once, on the same thread and with warm caches; no thread is started or woken from
//! a pool per request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

type Task = Box<dyn FnOnce() + Send>;

/// A fixed set of worker threads.
pub struct WorkerPool {
    queue: Mutex<Sender<Task>>,
    size: usize,
    idle: Arc<AtomicUsize>,
}

impl WorkerPool {
    /// Start `size` threads named `{name}-{i}`.
    pub fn new(name: &str, size: usize) -> std::io::Result<Self> {
        let (queue, tasks) = channel::<Task>();
        let tasks = Arc::new(Mutex::new(tasks));
        let idle = Arc::new(AtomicUsize::new(0));
        for i in 0..size.max(1) {
            let (tasks, idle) = (Arc::clone(&tasks), Arc::clone(&idle));
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || work(&tasks, &idle))?;
        }
        Ok(Self {
            queue: Mutex::new(queue),
            size: size.max(1),
            idle,
        })
    }

    /// Queue a task; false when every worker has gone (never expected: tasks run inside `catch_unwind`).
    pub fn run(&self, task: impl FnOnce() + Send + 'static) -> bool {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.send(Box::new(task)).is_ok()
    }

    /// Worker threads.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Workers waiting for a task right now.
    pub fn idle(&self) -> usize {
        self.idle.load(Ordering::Acquire)
    }
}

fn work(tasks: &Mutex<Receiver<Task>>, idle: &AtomicUsize) {
    loop {
        // One idle worker waits on the queue; the others wait for the lock. Ends when the pool is dropped.
        idle.fetch_add(1, Ordering::AcqRel);
        let task = {
            let tasks = tasks.lock().unwrap_or_else(|p| p.into_inner());
            tasks.recv()
        };
        idle.fetch_sub(1, Ordering::AcqRel);
        let Ok(task) = task else { return };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)).is_err() {
            tracing::error!("a synthesis task panicked; the worker carries on");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_run_on_the_workers_and_a_panic_does_not_kill_one() {
        let pool = WorkerPool::new("test-worker", 2).expect("threads");
        let (done, results) = channel();
        assert!(pool.run(|| panic!("boom")));
        for i in 0..8 {
            let done = done.clone();
            assert!(pool.run(move || {
                let name = std::thread::current().name().map(str::to_string);
                done.send((i, name)).unwrap();
            }));
        }
        let mut seen: Vec<(i32, Option<String>)> =
            (0..8).map(|_| results.recv().unwrap()).collect();
        seen.sort();
        assert_eq!(seen.len(), 8);
        assert!(seen.iter().all(|(_, name)| name
            .as_deref()
            .is_some_and(|n| n.starts_with("test-worker-"))));
    }
}
