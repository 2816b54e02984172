//! Versioned schema changes, applied in order at start-up (and by `sauti migrate`). Each engine keeps the
//! version it is at — SQLite in `PRAGMA user_version`, PostgreSQL in `sauti_schema` — and a database from a
//! newer sauti is refused rather than guessed at. A migration, once released, is never edited: a later change
//! is a new entry at the end.
//!
//! The steps themselves are each engine's: [`super::sqlite`]'s and [`super::postgres`]'s `migrations`.

/// The schema version this sauti writes. Both engines are kept at this number: each has exactly this many
/// migrations (checked when it compiles), and adding one to either engine means adding one to the other and
/// raising this.
pub const LATEST: i64 = 5;

#[cfg(test)]
mod tests {
    #[test]
    fn both_engines_are_kept_at_the_same_version() {
        use crate::storage::{postgres, sqlite};
        assert_eq!(
            postgres::migrations::STEPS.len(),
            sqlite::migrations::STEPS.len()
        );
        assert_eq!(sqlite::migrations::STEPS.len() as i64, super::LATEST);
    }
}
