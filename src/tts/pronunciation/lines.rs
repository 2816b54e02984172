//! Line numbers of positions in a text read in order, counted in one pass (for naming where a problem is).

/// The 1-based line of byte offsets read in order: each call counts only the newlines since the last one, so a
/// whole file costs one pass however many events it holds.
pub(super) struct Lines<'a> {
    text: &'a [u8],
    /// Bytes counted so far, and the line the last of them is on.
    counted: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            counted: 0,
            line: 1,
        }
    }

    /// The line of `offset`; an offset before the last one asked is counted from the start again (a parse
    /// error may point back into the event it stopped at).
    pub(super) fn at(&mut self, offset: u64) -> usize {
        let end = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        if end < self.counted {
            (self.counted, self.line) = (0, 1);
        }
        self.line += self.text[self.counted..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.counted = end;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_once_and_from_the_start_when_asked_back() {
        let mut lines = Lines::new("a\nb\n\nc");
        assert_eq!(
            (lines.at(0), lines.at(2), lines.at(5), lines.at(6)),
            (1, 2, 4, 4)
        );
        // Asked again for an earlier offset, it counts from the start.
        assert_eq!(lines.at(1), 1);
        assert_eq!(lines.at(u64::MAX), 4);
    }
}
