//! Text that arrives in parts (an LLM's words as it writes them), held until a piece is worth speaking.
//!
//! A piece ends at a clause boundary: `.`, `!`, `?`, `…`, `;`, `:`, `,` or a dash, followed by white space or
//! ending the text so far right after a word (after a digit it may be "3." of "3.5", and waits for what
//! follows).
//! The first piece goes at the first boundary, so speech starts as soon as something speakable has arrived;
//! after it, piece *k* waits until the text held reaches the chunk schedule's *k*-th length (the last length
//! repeats) and then goes up to the last boundary held. Text with no boundary at all is cut at its last space
//! once it reaches [`HARD_LIMIT`] characters, so nothing is held without bound. In auto mode the schedule is
//! not used: every boundary ends a piece. A flush, or the end of the text, speaks what is held.

/// ElevenLabs' default chunk schedule, in characters.
pub const DEFAULT_SCHEDULE: [usize; 4] = [120, 160, 250, 290];
/// Each length of a schedule is within this range (ElevenLabs' own bounds).
pub const SCHEDULE_RANGE: (usize, usize) = (50, 500);
/// The most characters held without a boundary before they are cut at a space (or where they are).
pub const HARD_LIMIT: usize = 600;

/// The text held for one stream of speech.
#[derive(Debug, Clone)]
pub struct TextBuffer {
    held: String,
    /// Characters in `held`.
    held_chars: usize,
    schedule: Vec<usize>,
    auto: bool,
    /// Pieces cut so far.
    cut: usize,
    /// The text so far ends with a clause mark right after a letter.
    ended_clause: bool,
}

impl TextBuffer {
    /// A buffer cutting by `schedule` (each length within [`SCHEDULE_RANGE`], checked by the caller), or at
    /// every boundary in `auto` mode.
    pub fn new(schedule: Vec<usize>, auto: bool) -> Self {
        let schedule = match schedule.is_empty() {
            true => DEFAULT_SCHEDULE.to_vec(),
            false => schedule,
        };
        Self {
            held: String::new(),
            held_chars: 0,
            schedule,
            auto,
            cut: 0,
            ended_clause: false,
        }
    }

    /// Characters held, not yet spoken.
    pub fn held_chars(&self) -> usize {
        self.held_chars
    }

    /// Take `text` in: the pieces it completes, in order. Text that starts a word right after a clause that
    /// ended the text before ("…yako!" then "Salio…", as clients that send whole sentences do) starts a new
    /// word.
    pub fn push(&mut self, text: &str) -> Vec<String> {
        if self.ended_clause && text.starts_with(char::is_alphanumeric) {
            self.held.push(' ');
            self.held_chars += 1;
        }
        self.held.push_str(text);
        self.held_chars += text.chars().count();
        let mut last = text.chars().rev();
        if let Some(end) = last.next() {
            self.ended_clause = is_clause_mark(end) && last.next().is_some_and(char::is_alphabetic);
        }
        let mut pieces = Vec::new();
        while let Some(end) = self.next_cut() {
            let rest = self.held.split_off(end);
            let piece = std::mem::replace(&mut self.held, rest);
            self.held_chars = self.held.chars().count();
            self.cut += 1;
            pieces.push(piece);
        }
        pieces
    }

    /// Everything held, as the last piece of what came so far (`None` when nothing is held).
    pub fn flush(&mut self) -> Option<String> {
        if self.held.is_empty() {
            return None;
        }
        self.held_chars = 0;
        self.cut += 1;
        Some(std::mem::take(&mut self.held))
    }

    /// Where the next piece ends in `held` (a byte offset), if one is due.
    fn next_cut(&self) -> Option<usize> {
        let boundaries = boundaries(&self.held);
        let due = self
            .schedule
            .get(self.cut)
            .or(self.schedule.last())
            .copied()
            .unwrap_or(DEFAULT_SCHEDULE[0]);
        if let Some(&first) = boundaries.first() {
            if self.cut == 0 || self.auto {
                return Some(first);
            }
            if self.held_chars >= due {
                return boundaries.last().copied();
            }
        }
        if self.held_chars >= HARD_LIMIT {
            // No boundary in far too much text: cut at its last space, or where it is.
            let limit = self
                .held
                .char_indices()
                .nth(HARD_LIMIT)
                .map_or(self.held.len(), |(at, _)| at);
            let space = self.held[..limit]
                .char_indices()
                .rev()
                .find(|&(at, c)| at > 0 && c.is_whitespace());
            return Some(space.map_or(limit, |(at, c)| at + c.len_utf8()));
        }
        None
    }
}

/// Byte offsets just after each clause boundary of `text` (the punctuation and the white space after it),
/// where the text before has something to say.
fn boundaries(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut speakable = false;
    while let Some((i, c)) = chars.next() {
        speakable |= c.is_alphanumeric();
        if !is_clause_mark(c) || !speakable {
            continue;
        }
        // Closing quotes and brackets belong to the clause they close.
        while let Some(&(_, next)) = chars.peek() {
            if matches!(next, '"' | '\'' | ')' | ']' | '”' | '’' | '»') || is_clause_mark(next)
            {
                chars.next();
            } else {
                break;
            }
        }
        let Some(&(at, next)) = chars.peek() else {
            // At the very end: a clause that ends after a word is over; after a digit it may go on ("3." of
            // "3.5"), and is cut when white space follows.
            let before = text[..i].chars().next_back();
            if before.is_some_and(char::is_alphabetic) {
                ends.push(text.len());
            }
            break;
        };
        if !next.is_whitespace() {
            continue;
        }
        let mut end = at;
        while let Some(&(at, next)) = chars.peek() {
            if !next.is_whitespace() {
                break;
            }
            end = at + next.len_utf8();
            chars.next();
        }
        ends.push(end);
        speakable = false;
    }
    ends
}

fn is_clause_mark(c: char) -> bool {
    matches!(
        c,
        '.' | '!' | '?' | '…' | ';' | ':' | ',' | '—' | '–' | '¿' | '¡'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(buffer: &mut TextBuffer, text: &str) -> Vec<String> {
        let mut pieces = Vec::new();
        for word in text.split_inclusive(' ') {
            pieces.extend(buffer.push(word));
        }
        pieces
    }

    #[test]
    fn the_first_clause_goes_as_soon_as_the_space_after_it_arrives() {
        let mut buffer = TextBuffer::new(Vec::new(), false);
        assert!(buffer.push("Habari").is_empty());
        assert_eq!(buffer.push(" yako,"), vec!["Habari yako,"]);
        assert!(buffer.push(" rafiki").is_empty());
        assert_eq!(buffer.flush().as_deref(), Some(" rafiki"));
        assert_eq!(buffer.flush(), None);
    }

    #[test]
    fn later_pieces_wait_for_the_schedule_and_end_at_the_last_boundary() {
        let mut buffer = TextBuffer::new(vec![50, 60], false);
        let text = "Karibu benki. Salio lako ni shilingi elfu kumi. Ungependa kufanya nini leo? \
                    Naweza kukusaidia kutuma pesa, kulipa bili au kuangalia historia ya akaunti yako. ";
        let pieces = words(&mut buffer, text);
        assert_eq!(pieces[0], "Karibu benki. ");
        assert_eq!(
            pieces[1],
            "Salio lako ni shilingi elfu kumi. Ungependa kufanya nini leo? "
        );
        assert!(pieces
            .iter()
            .all(|p| p.trim_end().ends_with(is_clause_mark)));
        let all: String = pieces.concat() + &buffer.flush().unwrap_or_default();
        assert_eq!(all, text, "nothing is lost or reordered");
    }

    #[test]
    fn auto_mode_cuts_at_every_boundary() {
        let mut buffer = TextBuffer::new(Vec::new(), true);
        let pieces = words(&mut buffer, "Ndiyo. Sawa, asante. Kwaheri ");
        assert_eq!(pieces, vec!["Ndiyo. ", "Sawa, ", "asante. "]);
        assert_eq!(buffer.flush().as_deref(), Some("Kwaheri "));
    }

    #[test]
    fn numbers_and_lone_punctuation_do_not_end_a_piece() {
        let mut buffer = TextBuffer::new(Vec::new(), true);
        assert!(buffer.push("Bei ni 3.").is_empty(), "3. may be 3.5");
        assert!(buffer.push("5").is_empty());
        assert_eq!(buffer.push(" ... sasa"), vec!["Bei ni 3.5 ... "]);
        let mut buffer = TextBuffer::new(Vec::new(), true);
        assert!(buffer.push("... , ").is_empty(), "nothing speakable yet");
        assert_eq!(buffer.push("Sawa.\" Ndiyo"), vec!["... , Sawa.\" "]);
        assert_eq!(buffer.flush().as_deref(), Some("Ndiyo"));
    }

    #[test]
    fn whole_sentences_sent_without_spaces_stay_apart() {
        let mut buffer = TextBuffer::new(vec![50], false);
        let mut pieces = buffer.push("Habari yako!");
        pieces.extend(buffer.push("Salio lako ni shilingi elfu kumi."));
        pieces.extend(buffer.push("Je, ungependa kutuma pesa?"));
        pieces.extend(buffer.flush());
        assert_eq!(pieces[0], "Habari yako!");
        assert_eq!(
            pieces[1..].concat(),
            " Salio lako ni shilingi elfu kumi. Je, ungependa kutuma pesa?"
        );
    }

    #[test]
    fn text_without_boundaries_is_cut_at_a_space_before_the_hard_limit() {
        let mut buffer = TextBuffer::new(Vec::new(), false);
        let mut pieces = Vec::new();
        for _ in 0..200 {
            pieces.extend(buffer.push("neno "));
        }
        assert!(!pieces.is_empty());
        assert!(pieces
            .iter()
            .all(|p| p.chars().count() <= HARD_LIMIT && p.ends_with(' ')));
        assert!(buffer.held_chars() < HARD_LIMIT);
        let mut buffer = TextBuffer::new(Vec::new(), false);
        let wide = format!("neno{}", "\u{3000}neno".repeat(HARD_LIMIT / 4));
        assert!(buffer.push(&wide).iter().all(|p| p.ends_with('\u{3000}')));
        let mut buffer = TextBuffer::new(Vec::new(), false);
        let pieces = buffer.push(&"a".repeat(HARD_LIMIT * 2 + 5));
        assert_eq!(pieces.len(), 2);
        assert_eq!(buffer.held_chars(), 5);
    }
}
