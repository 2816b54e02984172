//! Agent conversations as stored, so that a conversation goes on whichever replica the next turn reaches. A turn
//! takes its session for a while (a lock with an expiry, so a replica that dies mid-turn holds nothing for
//! ever), and writes it back when done. Sessions idle too long are gone, and each owner and the store as a whole
//! hold a bounded number: beyond it the least recently used goes.
//!
//! This module holds the records both engines share (the `agent_sessions` table's rows and the limits on them);
//! the SQL lies in [`super::sqlite`] and [`super::postgres`]. The dialogue's conversation stores built on them
//! are in [`super::conversations`].

use std::time::Duration;

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// `ses_…`.
    pub id: String,
    /// Id of the key that started it (only that key can continue it).
    pub owner: String,
    /// The scenario it is bound to.
    pub scenario: String,
    /// What it remembers, JSON.
    pub state: String,
}

/// How many sessions are kept and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session unused this long is gone.
    pub idle: Duration,
    /// Most sessions one owner holds (its least recently used goes first), so no key pushes another's out.
    pub per_owner: usize,
    /// Most sessions of all owners together.
    pub capacity: usize,
}

/// What asking for a session for a turn found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionClaim {
    /// It is the caller's for the turn.
    Taken(SessionRecord),
    /// Another turn of it is under way.
    Busy,
    /// No such live session of the caller's.
    Missing,
}
