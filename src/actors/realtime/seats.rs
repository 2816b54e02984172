//! How many realtime sessions may be open: per API key and in all. A seat is taken before the socket is
//! accepted (so a refusal is an HTTP answer the client can read) and given back when the session ends. A seat
//! also carries its key's revocation: when the key is revoked, every open session of it is told to close.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// The open sessions, counted.
#[derive(Debug)]
pub struct Seats {
    max_per_key: usize,
    max_total: usize,
    taken: Mutex<HashMap<String, Held>>,
}

/// One key's open sessions.
#[derive(Debug)]
struct Held {
    count: usize,
    /// Cancelled when the key is revoked: its sessions close.
    revoked: CancellationToken,
}

/// Why no seat was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatError {
    /// This key holds its share.
    #[error("this API key already has {0} realtime sessions open (realtime.max_sessions_per_key); close one first")]
    KeyFull(usize),
    /// The server holds all it may.
    #[error(
        "the server already holds {0} realtime sessions (realtime.max_sessions); try again shortly"
    )]
    ServerFull(usize),
}

/// One open session's place; given back when dropped.
pub struct Seat {
    seats: Arc<Seats>,
    owner: String,
    revoked: CancellationToken,
    /// Held as long as the seat (a place among the sessions of every replica, when those are counted too).
    also: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seat").field("owner", &self.owner).finish()
    }
}

impl Seat {
    /// Hold `place` for as long as this seat.
    pub fn also_hold(&mut self, place: impl std::any::Any + Send + Sync) {
        self.also = Some(Box::new(place));
    }

    /// The key holding the seat.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Cancelled when the seat's key is revoked.
    pub fn revoked(&self) -> CancellationToken {
        self.revoked.clone()
    }
}

impl Seats {
    /// Room for `max_per_key` sessions per key and `max_total` in all.
    pub fn new(max_per_key: usize, max_total: usize) -> Arc<Self> {
        Arc::new(Self {
            max_per_key,
            max_total,
            taken: Mutex::new(HashMap::new()),
        })
    }

    /// A seat for `owner`, or why not.
    pub fn take(self: &Arc<Self>, owner: &str) -> Result<Seat, SeatError> {
        let mut taken = self.taken.lock().unwrap_or_else(|p| p.into_inner());
        let total: usize = taken.values().map(|held| held.count).sum();
        if total >= self.max_total {
            return Err(SeatError::ServerFull(self.max_total));
        }
        let own = taken.entry(owner.to_string()).or_insert_with(|| Held {
            count: 0,
            revoked: CancellationToken::new(),
        });
        if own.count >= self.max_per_key {
            return Err(SeatError::KeyFull(self.max_per_key));
        }
        own.count += 1;
        metrics::gauge!(crate::telemetry::metrics::REALTIME_SESSIONS).increment(1.0);
        Ok(Seat {
            seats: Arc::clone(self),
            owner: owner.to_string(),
            revoked: own.revoked.clone(),
            also: None,
        })
    }

    /// Sessions open now.
    pub fn open(&self) -> usize {
        self.taken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|held| held.count)
            .sum()
    }

    /// Tell the open sessions of every key that `valid` no longer accepts to close; how many keys that was.
    pub fn close_revoked(&self, valid: impl Fn(&str) -> bool) -> usize {
        let taken = self.taken.lock().unwrap_or_else(|p| p.into_inner());
        let mut closed = 0;
        for (owner, held) in taken.iter() {
            if !held.revoked.is_cancelled() && !valid(owner) {
                held.revoked.cancel();
                closed += 1;
            }
        }
        closed
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut taken = self.seats.taken.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(own) = taken.get_mut(&self.owner) {
            own.count = own.count.saturating_sub(1);
            if own.count == 0 {
                taken.remove(&self.owner);
            }
        }
        metrics::gauge!(crate::telemetry::metrics::REALTIME_SESSIONS).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_counted_per_key_and_in_all_and_given_back() {
        let seats = Seats::new(2, 3);
        let a1 = seats.take("a").unwrap();
        let _a2 = seats.take("a").unwrap();
        assert_eq!(seats.take("a").unwrap_err(), SeatError::KeyFull(2));
        let _b1 = seats.take("b").unwrap();
        assert_eq!(seats.take("c").unwrap_err(), SeatError::ServerFull(3));
        drop(a1);
        assert_eq!(seats.open(), 2);
        assert!(seats.take("c").is_ok());
    }

    #[test]
    fn a_revoked_key_s_sessions_are_told_to_close_and_no_other() {
        let seats = Seats::new(2, 4);
        let a = seats.take("a").unwrap();
        let b = seats.take("b").unwrap();
        assert_eq!(seats.close_revoked(|owner| owner != "a"), 1);
        assert!(a.revoked().is_cancelled());
        assert!(!b.revoked().is_cancelled());
        // Told once; a key that comes back after its sessions closed starts afresh.
        assert_eq!(seats.close_revoked(|owner| owner != "a"), 0);
        drop(a);
        assert!(!seats.take("a").unwrap().revoked().is_cancelled());
    }
}
