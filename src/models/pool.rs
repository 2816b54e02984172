//! A model's sessions, one per concurrent caller. ONNX Runtime runs a session from one thread at a time
//! (`Session::run` takes `&mut self`), so a model that serves several synthesis workers owns several sessions,
//! made on demand up to a limit and handed out exclusively.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use ort::session::Session;

use super::ModelError;

type Build<S> = Box<dyn Fn() -> Result<S, ModelError> + Send + Sync>;

/// Up to `limit` sessions of one model (a [`Session`], or a model's set of sessions that are used together).
pub struct SessionPool<S = Session> {
    build: Build<S>,
    limit: usize,
    state: Mutex<State<S>>,
    returned: Condvar,
}

struct State<S> {
    idle: Vec<S>,
    made: usize,
}

impl<S> SessionPool<S> {
    /// A pool that makes sessions with `build`, the first one now (so a broken model fails at load).
    pub fn new(
        limit: usize,
        build: impl Fn() -> Result<S, ModelError> + Send + Sync + 'static,
    ) -> Result<Self, ModelError> {
        let first = build()?;
        Ok(Self {
            build: Box::new(build),
            limit: limit.max(1),
            state: Mutex::new(State {
                idle: vec![first],
                made: 1,
            }),
            returned: Condvar::new(),
        })
    }

    /// Run `work` with a session of its own: an idle one, a new one while under the limit, or the next one
    /// returned.
    pub fn with<T>(&self, work: impl FnOnce(&mut S) -> T) -> Result<T, ModelError> {
        let mut checkout = Checkout {
            pool: self,
            session: Some(self.take()?),
        };
        let session = checkout.session.as_mut().expect("a checked-out session");
        Ok(work(session))
    }

    /// A view of one session (input names, metadata) without running it.
    pub fn inspect<T>(&self, look: impl FnOnce(&S) -> T) -> Result<T, ModelError> {
        self.with(|session| look(session))
    }

    fn take(&self) -> Result<S, ModelError> {
        let mut state = self.lock();
        loop {
            if let Some(session) = state.idle.pop() {
                return Ok(session);
            }
            if state.made < self.limit {
                state.made += 1;
                drop(state);
                return (self.build)().inspect_err(|_| {
                    self.lock().made -= 1;
                    self.returned.notify_one();
                });
            }
            state = self
                .returned
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A session out of the pool; it goes back when dropped, also when the work panicked.
struct Checkout<'p, S> {
    pool: &'p SessionPool<S>,
    session: Option<S>,
}

impl<S> Drop for Checkout<'_, S> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            self.pool.lock().idle.push(session);
            self.pool.returned.notify_one();
        }
    }
}
