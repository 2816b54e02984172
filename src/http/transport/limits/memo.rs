//! What one connection's requests leave for its next ones.

use axum::http::HeaderValue;

use crate::http::transport::auth::KeyMemo;

/// What one connection's requests leave for its next ones: the key it presented last, and the rate-limit
/// values it was sent last. Belongs to one connection; never shared between them.
#[derive(Default)]
pub struct ConnectionMemo {
    /// The last valid key and whose it is.
    pub key: KeyMemo,
    /// The last `x-ratelimit-remaining` and `x-ratelimit-reset` values with their numbers: a client well under
    /// a generous limit is sent the same ones again and again, and they are not formatted anew each time.
    shown: std::cell::RefCell<[Option<(u64, HeaderValue)>; 2]>,
    /// The tally the previous request was counted on here, with its limit and key.
    pub(super) tally: std::cell::RefCell<Option<super::bucket::KeptTally>>,
}

/// Where the remaining count is remembered.
pub(super) const REMAINING_SLOT: usize = 0;
/// Where the reset time is remembered.
pub(super) const RESET_SLOT: usize = 1;

impl ConnectionMemo {
    /// The header value of `number`, the one sent last in `slot` when it is the same number.
    pub(super) fn value(&self, slot: usize, number: u64) -> HeaderValue {
        let mut shown = self.shown.borrow_mut();
        match &shown[slot] {
            Some((last, value)) if *last == number => value.clone(),
            _ => {
                let value = HeaderValue::from(number);
                shown[slot] = Some((number, value.clone()));
                value
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_reused_only_for_the_same_number_in_the_same_slot() {
        let memo = ConnectionMemo::default();
        assert_eq!(memo.value(REMAINING_SLOT, 29), "29");
        assert_eq!(memo.value(REMAINING_SLOT, 29), "29");
        assert_eq!(memo.value(RESET_SLOT, 29), "29");
        assert_eq!(memo.value(REMAINING_SLOT, 28), "28");
        assert_eq!(memo.value(RESET_SLOT, 1_795_693_484), "1795693484");
        assert_eq!(memo.value(REMAINING_SLOT, 29), "29");
        assert_eq!(memo.value(RESET_SLOT, 1_795_693_485), "1795693485");
        assert_eq!(memo.value(REMAINING_SLOT, 0), "0");
    }
}
