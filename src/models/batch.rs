//! Model runs of concurrent callers gathered into one batched run.
//!
//! A caller hands its input to a [`Batcher`] and blocks until its output comes back. While fewer than `leaders`
//! batches are running, a caller leads one: it waits up to `window` for others (never when the batch is full, and
//! not at all with a zero window), takes the inputs waiting that can share its run (the same `key`: inputs of one
//! shape), up to `max`, runs them as one and hands each caller its own output. Callers that arrive while every
//! leader is busy wait and go into the next batch together, so batches form from a backlog and a lone caller is
//! never held back. The order is first come, first served; which callers are running at all (and so may wait here)
//! is decided fairly between API keys before, by the recognition workers.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How the batches are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// Most inputs in one run (1: every input runs alone).
    pub max: usize,
    /// How long a batch's leader waits for more inputs when its batch is not full.
    pub window: Duration,
    /// Batches running at once (the model's sessions).
    pub leaders: usize,
}

impl Batching {
    /// No batching: every input runs alone, `leaders` at once.
    pub fn alone(leaders: usize) -> Self {
        Self {
            max: 1,
            window: Duration::ZERO,
            leaders,
        }
    }
}

/// Gathers inputs of type `I` into batched runs giving outputs of type `O`.
pub struct Batcher<I, O> {
    /// Names the model in `sauti_model_batch_size{model}`.
    model: &'static str,
    batching: Batching,
    state: Mutex<State<I, O>>,
    changed: Condvar,
    runs: AtomicU64,
    inputs: AtomicU64,
}

struct State<I, O> {
    next: u64,
    /// Inputs not yet taken into a batch: (ticket, key, input).
    waiting: Vec<(u64, usize, I)>,
    /// Outputs not yet collected by their callers.
    done: HashMap<u64, Result<O, String>>,
    leading: usize,
}

impl<I, O> Batcher<I, O> {
    /// A batcher for `model`.
    pub fn new(model: &'static str, batching: Batching) -> Self {
        Self {
            model,
            batching: Batching {
                max: batching.max.max(1),
                leaders: batching.leaders.max(1),
                ..batching
            },
            state: Mutex::new(State {
                next: 0,
                waiting: Vec::new(),
                done: HashMap::new(),
                leading: 0,
            }),
            changed: Condvar::new(),
            runs: AtomicU64::new(0),
            inputs: AtomicU64::new(0),
        }
    }

    /// How the batches are formed.
    pub fn batching(&self) -> Batching {
        self.batching
    }

    /// Batched runs so far and the inputs they held (equal when nothing was batched).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.runs.load(Ordering::Relaxed),
            self.inputs.load(Ordering::Relaxed),
        )
    }

    /// The output for `input`, run in a batch with other callers' inputs of the same `key`. `batch` turns the
    /// inputs of one batch into their outputs, in order; a panic or an error in it fails that batch's callers.
    pub fn run(
        &self,
        key: usize,
        input: I,
        batch: impl FnOnce(Vec<I>) -> Result<Vec<O>, String>,
    ) -> Result<O, String> {
        let mut state = self.lock();
        let ticket = state.next;
        state.next += 1;
        state.waiting.push((ticket, key, input));
        self.changed.notify_all();
        loop {
            if let Some(output) = state.done.remove(&ticket) {
                return output;
            }
            let mine = state.waiting.iter().position(|(t, _, _)| *t == ticket);
            if let Some(at) = mine.filter(|_| state.leading < self.batching.leaders) {
                state.leading += 1;
                let (_, _, input) = state.waiting.remove(at);
                return self.lead(state, (ticket, key, input), batch);
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Wait for company, take this batch's inputs, run them and hand out the outputs.
    fn lead(
        &self,
        mut state: MutexGuard<'_, State<I, O>>,
        (ticket, key, input): (u64, usize, I),
        batch: impl FnOnce(Vec<I>) -> Result<Vec<O>, String>,
    ) -> Result<O, String> {
        let deadline = Instant::now() + self.batching.window;
        loop {
            let company = state.waiting.iter().filter(|(_, k, _)| *k == key).count();
            let now = Instant::now();
            if company + 1 >= self.batching.max || now >= deadline {
                break;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        // This caller's input first, then the others of its key in the order they came.
        let (mut tickets, mut inputs, mut rest) = (vec![ticket], vec![input], Vec::new());
        for (t, k, input) in std::mem::take(&mut state.waiting) {
            if tickets.len() < self.batching.max && k == key {
                tickets.push(t);
                inputs.push(input);
            } else {
                rest.push((t, k, input));
            }
        }
        state.waiting = rest;
        drop(state);

        let count = tickets.len();
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.inputs.fetch_add(count as u64, Ordering::Relaxed);
        ::metrics::histogram!(crate::telemetry::metrics::MODEL_BATCH_SIZE, "model" => self.model)
            .record(count as f64);
        let outputs = catch_unwind(AssertUnwindSafe(|| batch(inputs)))
            .unwrap_or_else(|_| Err(format!("the {} model failed on this batch", self.model)))
            .and_then(|outputs| match outputs.len() == count {
                true => Ok(outputs),
                false => Err(format!(
                    "the {} model gave {} outputs for {count} inputs",
                    self.model,
                    outputs.len()
                )),
            });

        let mut state = self.lock();
        state.leading -= 1;
        let own = match outputs {
            Ok(outputs) => {
                let mut own = None;
                for (t, output) in tickets.into_iter().zip(outputs) {
                    match t == ticket {
                        true => own = Some(Ok(output)),
                        false => {
                            state.done.insert(t, Ok(output));
                        }
                    }
                }
                own.unwrap_or_else(|| Err("the batch lost its leader's output".into()))
            }
            Err(why) => {
                for &t in tickets.iter().filter(|&&t| t != ticket) {
                    state.done.insert(t, Err(why.clone()));
                }
                Err(why)
            }
        };
        drop(state);
        self.changed.notify_all();
        own
    }

    fn lock(&self) -> MutexGuard<'_, State<I, O>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
