//! Model downloads.
