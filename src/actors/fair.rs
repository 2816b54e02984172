//! The synthesis and recognition workers: long-lived threads that take tasks from one fair queue (one pool for
//! synthesis, one for recognition). A worker that finishes a task picks up the next one at once, on the same
//! thread and with warm caches; no thread is started or woken from a pool per request.
//!
//! Fairness: tasks are queued per owner (an API key) and taken round-robin, and one owner may hold at most
//! `per_owner` workers at once. A key that sends the costliest texts or the longest uploads it may therefore
//! delays only itself; another key's request gets the next free worker, and with two or more workers there is
//! always one that the busy key cannot take.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

type Task = Box<dyn FnOnce() + Send>;

/// A fixed set of worker threads with a fair queue.
pub struct WorkerPool {
    shared: Arc<Shared>,
    size: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    idle: AtomicUsize,
}

#[derive(Default)]
struct Queue {
    /// Owners with waiting tasks, in the order they are served.
    turns: VecDeque<Arc<str>>,
    waiting: HashMap<Arc<str>, VecDeque<Task>>,
    running: HashMap<Arc<str>, usize>,
    per_owner: usize,
    closed: bool,
}

impl Queue {
    /// The next task of the first owner in turn that is under its share of the workers.
    fn take(&mut self) -> Option<(Arc<str>, Task)> {
        for _ in 0..self.turns.len() {
            let owner = self.turns.pop_front()?;
            let running = self.running.get(&owner).copied().unwrap_or(0);
            if running >= self.per_owner {
                self.turns.push_back(owner);
                continue;
            }
            let tasks = self.waiting.get_mut(&owner)?;
            let task = tasks.pop_front()?;
            if tasks.is_empty() {
                self.waiting.remove(&owner);
            } else {
                self.turns.push_back(Arc::clone(&owner));
            }
            *self.running.entry(Arc::clone(&owner)).or_default() += 1;
            return Some((owner, task));
        }
        None
    }

    fn finished(&mut self, owner: &Arc<str>) {
        if let Some(running) = self.running.get_mut(owner) {
            *running -= 1;
            if *running == 0 {
                self.running.remove(owner);
            }
        }
    }
}

impl WorkerPool {
    /// Start `size` threads named `{name}-{i}`; one owner may use `per_owner` of them at once (0: all but one,
    /// at least one).
    pub fn new(name: &str, size: usize, per_owner: usize) -> std::io::Result<Self> {
        let size = size.max(1);
        let per_owner = match per_owner {
            0 => size.saturating_sub(1).max(1),
            n => n.min(size),
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                per_owner,
                ..Queue::default()
            }),
            ready: Condvar::new(),
            idle: AtomicUsize::new(0),
        });
        for i in 0..size {
            let shared = Arc::clone(&shared);
            let pool = name.to_string();
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || work(&shared, &pool))?;
        }
        Ok(Self { shared, size })
    }

    /// Queue a task for `owner`; false when the pool is closed (never expected while the service runs).
    pub fn run(&self, owner: &str, task: impl FnOnce() + Send + 'static) -> bool {
        let mut queue = self.lock();
        if queue.closed {
            return false;
        }
        let owner: Arc<str> = Arc::from(owner);
        let tasks = queue.waiting.entry(Arc::clone(&owner)).or_default();
        tasks.push_back(Box::new(task));
        if tasks.len() == 1 {
            queue.turns.push_back(owner);
        }
        drop(queue);
        self.shared.ready.notify_one();
        true
    }

    /// Worker threads.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Workers waiting for a task right now.
    pub fn idle(&self) -> usize {
        self.shared.idle.load(Ordering::Acquire)
    }

    /// Workers `owner` may still take now: idle ones, within its share.
    pub fn idle_for(&self, owner: &str) -> usize {
        let queue = self.lock();
        let running = queue.running.get(owner).copied().unwrap_or(0);
        self.idle().min(queue.per_owner.saturating_sub(running))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.shared.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.lock().closed = true;
        self.shared.ready.notify_all();
    }
}

fn work(shared: &Shared, pool: &str) {
    let lock = || shared.queue.lock().unwrap_or_else(|p| p.into_inner());
    let mut queue = lock();
    loop {
        let Some((owner, task)) = queue.take() else {
            if queue.closed {
                return;
            }
            shared.idle.fetch_add(1, Ordering::AcqRel);
            queue = shared.ready.wait(queue).unwrap_or_else(|p| p.into_inner());
            shared.idle.fetch_sub(1, Ordering::AcqRel);
            continue;
        };
        drop(queue);
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)).is_err() {
            tracing::error!(pool, "a task panicked; the worker carries on");
        }
        queue = lock();
        queue.finished(&owner);
        // An owner that was at its share may have a task that can run now.
        shared.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn tasks_run_on_the_workers_and_a_panic_does_not_kill_one() {
        let pool = WorkerPool::new("test-worker", 2, 0).expect("threads");
        let (done, results) = channel();
        assert!(pool.run("a", || panic!("boom")));
        for i in 0..8 {
            let done = done.clone();
            assert!(pool.run(if i % 2 == 0 { "a" } else { "b" }, move || {
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

    #[test]
    fn a_busy_owner_leaves_a_worker_for_the_others() {
        let pool = WorkerPool::new("fair-worker", 2, 0).expect("threads");
        let (release, gate) = channel::<()>();
        let gate = Arc::new(Mutex::new(gate));
        // Owner "busy" queues many tasks that each block until released.
        for _ in 0..6 {
            let gate = Arc::clone(&gate);
            pool.run("busy", move || {
                let _ = gate.lock().unwrap().recv();
            });
        }
        std::thread::sleep(Duration::from_millis(50));
        let (done, finished) = channel();
        pool.run("other", move || done.send(()).unwrap());
        assert!(
            finished.recv_timeout(Duration::from_secs(5)).is_ok(),
            "another owner's task waited behind the busy owner"
        );
        assert_eq!(pool.idle_for("busy"), 0);
        for _ in 0..6 {
            release.send(()).unwrap();
        }
    }
}
