//! Sessions in this process's memory: the default for one machine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{Commit, SessionError, SessionStore, SessionTurn};
use crate::dialogue::Session;

/// A session shared between turns; its lock also keeps two turns of one conversation in order.
type SharedSession = Arc<tokio::sync::Mutex<Session>>;

struct Entry {
    owner: String,
    scenario: String,
    session: SharedSession,
    used: Instant,
}

/// Every live session.
pub struct MemorySessions {
    idle: Duration,
    capacity: usize,
    entries: Mutex<HashMap<String, Entry>>,
}

impl MemorySessions {
    /// A store forgetting sessions idle for `idle`, holding at most `capacity`.
    pub fn new(idle: Duration, capacity: usize) -> Self {
        Self {
            idle,
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn scenario(&self, owner: &str, id: &str) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(id)
            .filter(|e| e.owner == owner && e.used.elapsed() < self.idle)
            .map(|e| e.scenario.clone())
    }

    /// The caller's session `id`, or a new one when `id` is `None`: its id and the session.
    fn entry(
        &self,
        owner: &str,
        scenario: &str,
        id: Option<&str>,
    ) -> Result<(String, SharedSession), SessionError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        entries.retain(|_, e| now.duration_since(e.used) < self.idle);
        if let Some(id) = id {
            let entry = entries
                .get_mut(id)
                .filter(|e| e.owner == owner)
                .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
            if entry.scenario != scenario {
                return Err(SessionError::OtherScenario {
                    id: id.to_string(),
                    scenario: entry.scenario.clone(),
                });
            }
            entry.used = now;
            return Ok((id.to_string(), Arc::clone(&entry.session)));
        }
        // One key may hold a tenth of the sessions: beyond that its own oldest goes, so no key can push
        // another's conversations out. When the store is full, the oldest of all goes.
        let per_owner = (self.capacity / 10).max(1);
        let own = entries.values().filter(|e| e.owner == owner).count();
        let victim = if own >= per_owner {
            entries
                .iter()
                .filter(|(_, e)| e.owner == owner)
                .min_by_key(|(_, e)| e.used)
        } else if entries.len() >= self.capacity {
            entries.iter().min_by_key(|(_, e)| e.used)
        } else {
            None
        };
        if let Some(victim) = victim.map(|(k, _)| k.clone()) {
            entries.remove(&victim);
        }
        let id = format!("ses_{}", uuid::Uuid::new_v4().simple());
        let session = SharedSession::default();
        entries.insert(
            id.clone(),
            Entry {
                owner: owner.to_string(),
                scenario: scenario.to_string(),
                session: Arc::clone(&session),
                used: now,
            },
        );
        Ok((id, session))
    }

    /// Live sessions.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl SessionStore for MemorySessions {
    async fn scenario_of(&self, owner: &str, id: &str) -> Result<Option<String>, SessionError> {
        Ok(self.scenario(owner, id))
    }

    async fn open(
        &self,
        owner: &str,
        scenario: &str,
        id: Option<&str>,
    ) -> Result<SessionTurn, SessionError> {
        let (id, shared) = self.entry(owner, scenario, id)?;
        let held = shared.lock_owned().await;
        let session = held.clone();
        Ok(SessionTurn::new(id, session, Box::new(Held(held))))
    }
}

/// A turn's hold on a session in memory: the session's own lock.
struct Held(tokio::sync::OwnedMutexGuard<Session>);

#[async_trait]
impl Commit for Held {
    async fn commit(mut self: Box<Self>, session: Session) -> Result<(), SessionError> {
        *self.0 = session;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_private_bound_and_expire() {
        let store = MemorySessions::new(Duration::from_millis(50), 2);
        let (id, _) = store.entry("key-a", "banking", None).expect("new");
        assert!(store.entry("key-a", "banking", Some(&id)).is_ok());
        assert_eq!(
            store.entry("key-b", "banking", Some(&id)).unwrap_err(),
            SessionError::NotFound(id.clone())
        );
        assert!(matches!(
            store.entry("key-a", "health", Some(&id)),
            Err(SessionError::OtherScenario { .. })
        ));
        std::thread::sleep(Duration::from_millis(60));
        assert!(store.entry("key-a", "banking", Some(&id)).is_err());
        for _ in 0..5 {
            store.entry("key-a", "general", None).expect("new");
        }
        assert_eq!(
            store.len(),
            1,
            "a key holds a tenth of the store (at least one)"
        );
        let big = MemorySessions::new(Duration::from_secs(60), 20);
        let (kept, _) = big.entry("key-a", "general", None).expect("new");
        for _ in 0..50 {
            big.entry("key-b", "general", None).expect("new");
        }
        assert!(
            big.entry("key-a", "general", Some(&kept)).is_ok(),
            "key-b cannot push key-a out"
        );
        assert_eq!(big.len(), 3);
    }

    #[tokio::test]
    async fn a_turn_keeps_what_it_commits_and_nothing_when_dropped() {
        let store = MemorySessions::new(Duration::from_secs(60), 10);
        super::super::tests::one_turn_at_a_time_and_only_what_it_commits(&store).await;
    }
}
