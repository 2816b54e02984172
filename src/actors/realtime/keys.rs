//! Keys a caller presses (DTMF), gathered into one keyed entry: `#` ends it, and so does a pause of three seconds
//! after the last key ("Bonyeza 1 kwa salio" needs no `#`).

use std::time::{Duration, Instant};

use crate::dialogue::keypad::MAX_KEYS;

/// The pause after the last key that ends an entry without `#`.
const PAUSE: Duration = Duration::from_secs(3);

/// The keys of the entry under way.
#[derive(Default)]
pub(super) struct Keyed {
    keys: String,
    last: Option<Instant>,
}

impl Keyed {
    /// Whether an entry is under way.
    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Take pressed keys; the entry they finish, if `#` was among them. Keys past the longest entry, and
    /// anything that is not a key, are dropped.
    pub(super) fn push(&mut self, pressed: &str) -> Option<String> {
        let mut finished = None;
        for key in pressed.chars() {
            match key {
                '#' if !self.keys.is_empty() => finished = Some(std::mem::take(&mut self.keys)),
                '0'..='9' | '*' if self.keys.len() < MAX_KEYS => self.keys.push(key),
                _ => {}
            }
        }
        self.last = Some(Instant::now());
        finished
    }

    /// The entry, once the caller has paused long enough after its last key.
    pub(super) fn due(&mut self) -> Option<String> {
        let paused = self.last.is_some_and(|at| at.elapsed() >= PAUSE);
        (paused && !self.keys.is_empty()).then(|| std::mem::take(&mut self.keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_ends_with_hash_or_a_pause() {
        let mut keyed = Keyed::default();
        assert_eq!(keyed.push("4"), None);
        assert_eq!(keyed.push("8a2"), None);
        assert_eq!(keyed.push("1#"), Some("4821".into()));
        assert!(keyed.is_empty());
        assert_eq!(keyed.push("#"), None, "a lone # is nothing");
        keyed.push("1");
        assert_eq!(keyed.due(), None);
        keyed.last = Some(Instant::now() - PAUSE);
        assert_eq!(keyed.due(), Some("1".into()));
        keyed.push(&"9".repeat(100));
        assert_eq!(keyed.push("#").map(|k| k.len()), Some(MAX_KEYS));
    }
}
