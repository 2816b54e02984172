//! The dialogue's conversation stores: where the dialogue actor keeps each agent conversation (its history,
//! filled slots, a flow in progress) between turns. Conversations are owned by the API key that started them,
//! bound to one scenario, forgotten after an idle time, and capped in number (the least recently used goes
//! first). One turn of a conversation runs at a time.
//!
//! Two implementations of [`SessionStore`]: [`MemorySessions`], in this process's memory (one machine, the
//! default), and [`StoredSessions`], in the shared database through [`crate::storage::Store`] (many replicas: a
//! conversation continues on whichever one the next turn reaches). The rows the latter reads and writes — the
//! `agent_sessions` table's [`SessionRecord`](crate::storage::SessionRecord) — are defined in
//! [`crate::storage::sessions`], their SQL in each engine's `sessions` module. The dialogue actor uses these
//! stores through [`crate::actors::dialogue`], which re-exports them.

mod memory;
mod stored;

pub use memory::MemorySessions;
pub use stored::StoredSessions;

use std::sync::Arc;

use async_trait::async_trait;

use crate::dialogue::Session;

/// Why a session cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// No such session for this caller (never existed, expired, or another key's).
    #[error("session {0:?} not found; it may have expired — omit session_id to start a new conversation")]
    NotFound(String),
    /// The session belongs to another scenario.
    #[error("session {id:?} belongs to scenario {scenario:?}")]
    OtherScenario {
        /// The session.
        id: String,
        /// Its scenario.
        scenario: String,
    },
    /// The database keeping conversations failed or could not be reached.
    #[error("conversations cannot be read or kept right now: {0}")]
    Unavailable(String),
}

impl From<crate::storage::StorageError> for SessionError {
    fn from(error: crate::storage::StorageError) -> Self {
        Self::Unavailable(error.to_string())
    }
}

/// Where conversations are kept.
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// The scenario of the caller's live session `id` (`None`: no such session of the caller's).
    async fn scenario_of(&self, owner: &str, id: &str) -> Result<Option<String>, SessionError>;

    /// The caller's session `id` — or a new one when `id` is `None` — taken for one turn: no other turn of it
    /// runs until this one is committed or dropped. A dropped turn leaves the session as it was.
    async fn open(
        &self,
        owner: &str,
        scenario: &str,
        id: Option<&str>,
    ) -> Result<SessionTurn, SessionError>;
}

/// A store shared by the actor's restarts.
pub type Sessions = Arc<dyn SessionStore>;

/// What a store does when a turn ends.
#[async_trait]
pub trait Commit: Send {
    /// Keep `session` as the conversation's memory and let the next turn in.
    async fn commit(self: Box<Self>, session: Session) -> Result<(), SessionError>;
}

/// One turn's hold on a session.
pub struct SessionTurn {
    /// The session (new or continued).
    pub id: String,
    /// Its memory, to change during the turn.
    pub session: Session,
    commit: Box<dyn Commit>,
}

impl SessionTurn {
    /// A turn on session `id`, whose memory is `session`, ended by `commit`.
    pub fn new(id: String, session: Session, commit: Box<dyn Commit>) -> Self {
        Self {
            id,
            session,
            commit,
        }
    }

    /// Keep what the turn changed and let the next turn in.
    pub async fn commit(self) -> Result<(), SessionError> {
        self.commit.commit(self.session).await
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::SessionStore;
    use crate::dialogue::Role;

    /// What every store does: a turn's commit is what the next turn reads, a dropped turn changes nothing (its
    /// hold let go, at once or shortly on the runtime), and a second turn waits for the first. The session's id.
    pub async fn one_turn_at_a_time_and_only_what_it_commits(store: &dyn SessionStore) -> String {
        let mut turn = store.open("key-a", "general", None).await.unwrap();
        let id = turn.id.clone();
        turn.session
            .history
            .push((Role::User, "Nataka salio".into()));
        turn.session.slots.insert("akaunti".into(), "akiba".into());
        turn.commit().await.unwrap();

        let mut again = store.open("key-a", "general", Some(&id)).await.unwrap();
        assert_eq!(
            again.session.history,
            vec![(Role::User, "Nataka salio".into())]
        );
        assert_eq!(again.session.slots["akaunti"], "akiba");
        again.session.history.clear();
        drop(again);
        let next = tokio::time::timeout(
            Duration::from_secs(5),
            store.open("key-a", "general", Some(&id)),
        )
        .await
        .expect("the dropped turn let go")
        .unwrap();
        assert_eq!(
            next.session.history.len(),
            1,
            "a dropped turn changes nothing"
        );

        let waiting = store.open("key-a", "general", Some(&id));
        tokio::pin!(waiting);
        assert!(
            tokio::time::timeout(Duration::from_millis(100), &mut waiting)
                .await
                .is_err(),
            "one turn at a time"
        );
        next.commit().await.unwrap();
        waiting.await.unwrap().commit().await.unwrap();
        id.clone()
    }
}
