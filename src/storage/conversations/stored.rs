//! Sessions in the shared database, for several replicas: each turn takes its session from the database (a
//! lock with an expiry) and writes it back when done, so the next turn may reach any replica and still find the
//! conversation where it was left — and two turns of one conversation never run at once, wherever they arrive.

use std::time::Duration;

use async_trait::async_trait;

use super::{Commit, SessionError, SessionStore, SessionTurn};
use crate::dialogue::Session;
use crate::storage::{SessionClaim, SessionLimits, SessionRecord, Storage};

/// Longest a turn keeps its session locked: past it a replica that died mid-turn no longer holds it. A little
/// longer than the longest turn.
const HOLD: Duration = Duration::from_secs(90);

/// First and longest pause between tries while another turn of the session runs.
const WAIT_FIRST: Duration = Duration::from_millis(10);
const WAIT_MOST: Duration = Duration::from_millis(200);

/// Conversations in the store.
pub struct StoredSessions {
    storage: Storage,
    limits: SessionLimits,
}

impl StoredSessions {
    /// Sessions in `storage`, forgotten after `idle`, at most `capacity` of them (a tenth of that per key).
    pub fn new(storage: Storage, idle: Duration, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            storage,
            limits: SessionLimits {
                idle,
                per_owner: (capacity / 10).max(1),
                capacity,
            },
        }
    }

    /// Take session `id` for a turn, waiting while another turn of it runs (anywhere).
    async fn claim(&self, owner: &str, id: &str) -> Result<(SessionRecord, String), SessionError> {
        let token = format!("turn_{}", uuid::Uuid::new_v4().simple());
        let mut wait = WAIT_FIRST;
        loop {
            match self
                .storage
                .claim_session(owner, id, self.limits.idle, &token, HOLD)
                .await?
            {
                SessionClaim::Taken(record) => return Ok((record, token)),
                SessionClaim::Missing => return Err(SessionError::NotFound(id.to_string())),
                SessionClaim::Busy => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(WAIT_MOST);
                }
            }
        }
    }
}

#[async_trait]
impl SessionStore for StoredSessions {
    async fn scenario_of(&self, owner: &str, id: &str) -> Result<Option<String>, SessionError> {
        Ok(self
            .storage
            .session_scenario(owner, id, self.limits.idle)
            .await?)
    }

    async fn open(
        &self,
        owner: &str,
        scenario: &str,
        id: Option<&str>,
    ) -> Result<SessionTurn, SessionError> {
        let id = match id {
            Some(id) => id.to_string(),
            None => {
                let record = SessionRecord {
                    id: format!("ses_{}", uuid::Uuid::new_v4().simple()),
                    owner: owner.to_string(),
                    scenario: scenario.to_string(),
                    state: encode(&Session::default())?,
                };
                self.storage.insert_session(&record, &self.limits).await?;
                record.id
            }
        };
        let (record, token) = self.claim(owner, &id).await?;
        let held = Held {
            storage: self.storage.clone(),
            id: id.clone(),
            token,
            done: false,
        };
        if record.scenario != scenario {
            return Err(SessionError::OtherScenario {
                id,
                scenario: record.scenario,
            });
        }
        let session = serde_json::from_str(&record.state).map_err(|e| {
            SessionError::Unavailable(format!(
                "the stored conversation {id:?} cannot be read: {e}"
            ))
        })?;
        Ok(SessionTurn::new(id, session, Box::new(held)))
    }
}

fn encode(session: &Session) -> Result<String, SessionError> {
    serde_json::to_string(session).map_err(|e| SessionError::Unavailable(e.to_string()))
}

/// A turn's hold on a stored session; dropped without a commit, it lets the session go unchanged.
struct Held {
    storage: Storage,
    id: String,
    token: String,
    done: bool,
}

#[async_trait]
impl Commit for Held {
    async fn commit(mut self: Box<Self>, session: Session) -> Result<(), SessionError> {
        let state = encode(&session)?;
        let kept = self
            .storage
            .release_session(&self.id, &self.token, Some(&state))
            .await?;
        self.done = true;
        if !kept {
            tracing::warn!(
                session = self.id,
                "a turn outlasted its hold on the session; what it changed was not kept"
            );
        }
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (storage, id, token) = (
            self.storage.clone(),
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.token),
        );
        runtime.spawn(async move {
            if let Err(error) = storage.release_session(&id, &token, None).await {
                tracing::warn!(session = id, %error, "a session could not be let go; it frees itself shortly");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, StoredSessions) {
        let dir = tempfile::tempdir().unwrap();
        let db: Storage = std::sync::Arc::new(crate::storage::Database::open(dir.path()).unwrap());
        (dir, StoredSessions::new(db, Duration::from_secs(60), 100))
    }

    #[tokio::test]
    async fn a_turn_keeps_what_it_commits_and_nothing_when_dropped() {
        let (_dir, sessions) = store();
        let id = super::super::tests::one_turn_at_a_time_and_only_what_it_commits(&sessions).await;

        // A wrong scenario or key is refused without holding the session.
        assert!(matches!(
            sessions.open("key-a", "health", Some(&id)).await,
            Err(SessionError::OtherScenario { .. })
        ));
        assert_eq!(
            sessions.open("key-b", "general", Some(&id)).await.err(),
            Some(SessionError::NotFound(id.clone()))
        );
        assert_eq!(
            sessions.scenario_of("key-a", &id).await.unwrap().as_deref(),
            Some("general")
        );
        let free = tokio::time::timeout(
            Duration::from_secs(5),
            sessions.open("key-a", "general", Some(&id)),
        )
        .await;
        assert!(free.is_ok(), "the refusal held nothing");
    }
}
