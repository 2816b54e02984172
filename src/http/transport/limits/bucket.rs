//! One rate limit counted in this process: governor's GCRA, one state per key, the states found by key in a
//! concurrent map, or straight from the connection's memo when its previous request was counted on the same
//! key in the same limit (a client on a kept-alive connection looks its key up once).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderValue;
use dashmap::DashMap;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use super::memo::{ConnectionMemo, REMAINING_SLOT, RESET_SLOT};
use super::{Allowance, Verdict};
use crate::http::transport::coarse_clock;
use crate::http::transport::problem::ApiError;

/// Keys hashed with a fast hasher seeded per process (addresses come from anyone, so not a fixed one).
type Hasher = foldhash::fast::RandomState;

type Limiter = RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>;

/// One key's count in one limit: its GCRA state, and when it was last counted.
pub struct Tally {
    limiter: Limiter,
    /// Milliseconds since the server started, when this key was last counted.
    used: AtomicU64,
}

/// The tally a connection's previous request was counted on, with the limit and the key it belongs to.
pub struct KeptTally {
    /// The [`Bucket`] it belongs to, by address.
    bucket: usize,
    key: Arc<str>,
    tally: Arc<Tally>,
}

/// One limit: so many requests a minute per key.
pub struct Bucket<K: std::hash::Hash + Eq + Clone> {
    tallies: DashMap<K, Arc<Tally>, Hasher>,
    quota: Quota,
    /// The limit.
    pub per_minute: u32,
    /// `x-ratelimit-limit`, the same on every response.
    limit_header: HeaderValue,
}

/// After this long without a request, a key's state is the same as a new one's (the whole allowance is
/// back within a minute), so it can be forgotten.
const IDLE: Duration = Duration::from_secs(60);

impl<K: std::hash::Hash + Eq + Clone> Bucket<K> {
    pub fn new(per_minute: u32) -> Self {
        let rate = NonZeroU32::new(per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        Self {
            tallies: DashMap::with_hasher(Hasher::default()),
            quota: Quota::per_minute(rate),
            per_minute: rate.get(),
            limit_header: HeaderValue::from(rate.get()),
        }
    }

    /// Count one request of `key` here.
    pub fn local(&self, key: &K) -> Verdict {
        self.count_on(&self.tally(key))
    }

    /// The tally of `key`, made on its first request.
    fn tally(&self, key: &K) -> Arc<Tally> {
        if let Some(tally) = self.tallies.get(key) {
            return Arc::clone(&tally);
        }
        let tally = self.tallies.entry(key.clone()).or_insert_with(|| {
            Arc::new(Tally {
                limiter: RateLimiter::direct(self.quota).with_middleware(),
                used: AtomicU64::new(0),
            })
        });
        Arc::clone(&tally)
    }

    fn count_on(&self, tally: &Tally) -> Verdict {
        tally
            .used
            .store(coarse_clock::millis_since_start(), Ordering::Relaxed);
        let interval = 60.0 / f64::from(self.per_minute);
        let now = coarse_clock::unix_seconds();
        match tally.limiter.check() {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Verdict {
                    remaining,
                    reset: now + f64::from(self.per_minute - remaining) * interval,
                    retry_after: None,
                }
            }
            Err(not_until) => Verdict {
                remaining: 0,
                reset: now + f64::from(self.per_minute) * interval,
                retry_after: Some(not_until.wait_time_from(DefaultClock::default().now())),
            },
        }
    }

    /// Forget the keys not counted for a minute (their state is as good as new), except those a connection
    /// keeps: it would count on without them, and the next connection of the key on a new state.
    pub fn forget_idle(&self) {
        self.forget_idle_at(coarse_clock::millis_since_start());
    }

    /// [`Bucket::forget_idle`] at `now`, in milliseconds since the server started.
    fn forget_idle_at(&self, now: u64) {
        let idle = IDLE.as_millis() as u64;
        self.tallies.retain(|_, tally| {
            Arc::strong_count(tally) > 1
                || now.saturating_sub(tally.used.load(Ordering::Relaxed)) < idle
        });
    }

    /// How many keys are remembered.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.tallies.len()
    }

    /// The headers to send for `verdict` either way, and a 429 when it is over the limit.
    pub fn answer(
        &self,
        verdict: Verdict,
        limit_for: &str,
        memo: Option<&ConnectionMemo>,
    ) -> (Allowance, Option<ApiError>) {
        let value = |slot, number| match memo {
            Some(memo) => memo.value(slot, number),
            None => HeaderValue::from(number),
        };
        let allowance = Allowance([
            self.limit_header.clone(),
            value(REMAINING_SLOT, u64::from(verdict.remaining)),
            value(RESET_SLOT, verdict.reset.ceil() as u64),
        ]);
        let refusal = verdict.retry_after.map(|wait| {
            let retry_after = wait.as_secs_f64().ceil().max(1.0) as u64;
            let detail = format!(
                "rate limit exceeded: {} requests per minute {limit_for}; retry in {retry_after} s",
                self.per_minute
            );
            ApiError::rate_limited(detail, retry_after)
        });
        (allowance, refusal)
    }
}

impl Bucket<Arc<str>> {
    /// Count one request of `key` here, on the tally `memo` keeps when its connection's previous request was
    /// counted on the same key here; that tally is kept for the next one.
    pub fn local_for(&self, key: &Arc<str>, memo: &ConnectionMemo) -> Verdict {
        let bucket = self as *const Self as usize;
        let mut kept = memo.tally.borrow_mut();
        if let Some(kept) = kept.as_ref() {
            if kept.bucket == bucket && (Arc::ptr_eq(&kept.key, key) || kept.key == *key) {
                return self.count_on(&kept.tally);
            }
        }
        let tally = self.tally(key);
        let verdict = self.count_on(&tally);
        *kept = Some(KeptTally {
            bucket,
            key: Arc::clone(key),
            tally,
        });
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_tally_counts_with_the_shared_one_and_is_not_forgotten() {
        let bucket: Bucket<Arc<str>> = Bucket::new(5);
        let other: Bucket<Arc<str>> = Bucket::new(5);
        let key: Arc<str> = Arc::from("key-a");
        let (first, second) = (ConnectionMemo::default(), ConnectionMemo::default());
        let remaining: Vec<u32> = [
            bucket.local_for(&key, &first),
            bucket.local_for(&key, &first),
            bucket.local_for(&Arc::from("key-a"), &second),
            bucket.local(&key),
            // The same key in another limit is counted there, not on the kept tally.
            other.local_for(&key, &first),
            bucket.local_for(&key, &first),
        ]
        .iter()
        .map(|v| v.remaining)
        .collect();
        assert_eq!(remaining, [4, 3, 2, 1, 4, 0]);
        assert!(bucket.local_for(&key, &second).retry_after.is_some());
        // Kept by a connection: not forgotten however long it waits; forgotten once nobody keeps it and it
        // has been idle for a minute.
        bucket.forget_idle();
        assert_eq!(bucket.remembered(), 1);
        let later = coarse_clock::millis_since_start() + 61_000;
        bucket.forget_idle_at(later);
        assert_eq!(bucket.remembered(), 1);
        drop((first, second));
        bucket.forget_idle_at(later - 2_000);
        assert_eq!(bucket.remembered(), 1, "counted less than a minute ago");
        bucket.forget_idle_at(later);
        assert_eq!(bucket.remembered(), 0);
    }
}
