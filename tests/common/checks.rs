//! Checks black-box tests make: waiting for a state the server reaches by itself, and looking for a secret's
//! digits in what the server wrote.

use std::time::{Duration, Instant};

/// Poll `condition` until it holds; panics with `what` if it still does not at `deadline`. For waiting on a state
/// the server reaches by itself (a request in flight, a lease lapsed, a connection closed) instead of sleeping.
pub fn wait_until(deadline: Instant, what: &str, mut condition: impl FnMut() -> bool) {
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `haystack` holds `digits` as a number of their own: not inside a longer run of letters, digits or a
/// decimal, as ids, timestamps and measurements hold any four digits by chance.
pub fn holds_number(haystack: &[u8], digits: &str) -> bool {
    let part = |b: &u8| b.is_ascii_alphanumeric() || *b == b'.';
    let needle = digits.as_bytes();
    haystack
        .windows(needle.len())
        .enumerate()
        .any(|(at, window)| {
            window == needle
                && (at == 0 || !part(&haystack[at - 1]))
                && haystack.get(at + needle.len()).is_none_or(|b| !part(b))
        })
}

/// The messages of a conversation as the conversations API (and a post-call webhook) gives it, in order.
pub fn messages(conversation: &serde_json::Value) -> Vec<&str> {
    conversation["transcript"]
        .as_array()
        .expect("a transcript")
        .iter()
        .map(|turn| turn["message"].as_str().expect("a message"))
        .collect()
}
