//! How long a text reads once pronunciation rules are applied, bounded: the one check every synthesis that
//! reads with a request's dictionaries passes before any audio is made. A text is limited by what it reads as,
//! not by what was sent: an alias or a transcription counts as the text it is read as, so a dictionary cannot
//! turn a short text into hours of audio.

use super::{apply, Rule, RuleError};
use crate::tts::lexicon::Lexicon;
use crate::tts::normalize::{split_pieces, PIECE_CHARS};

/// A text that reads longer than its limit once the rules are applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`text` exceeds the maximum length of {max} characters once the pronunciation dictionaries' rules are \
     applied (an alias or a phoneme rule counts as the text it is read as)"
)]
pub struct ReadsTooLong {
    /// The limit, in characters.
    pub max: usize,
}

/// The length in characters of `text` read with `lexicon` (see [`Lexicon::respelled_chars`]), if it is at most
/// `max`. The text is measured piece by piece, as it is synthesised, and the measuring stops at the first
/// piece that takes it over the limit: nothing longer than one piece's reading is ever built.
pub fn read_length(lexicon: &Lexicon, text: &str, max: usize) -> Result<usize, ReadsTooLong> {
    let mut total = 0usize;
    for piece in split_pieces(text, PIECE_CHARS) {
        total = total.saturating_add(lexicon.respelled_chars(&piece));
        if total > max {
            return Err(ReadsTooLong { max });
        }
    }
    Ok(total)
}

/// Why rules could not be laid over a lexicon for a text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadingError {
    /// A rule is not valid (a rule kept before the current bounds, say).
    #[error(transparent)]
    Rules(#[from] RuleError),
    /// The text reads too long with the rules.
    #[error(transparent)]
    TooLong(#[from] ReadsTooLong),
}

/// `base` with `rules` laid over it, for reading `text`, which must read as at most `max` characters with them.
pub fn layered_within(
    base: &Lexicon,
    rules: &[Rule],
    text: &str,
    max: usize,
) -> Result<Lexicon, ReadingError> {
    let mut lexicon = base.clone();
    apply(&mut lexicon, rules)?;
    read_length(&lexicon, text, max)?;
    Ok(lexicon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_phoneme_rules_count_as_what_they_read() {
        let lexicon = super::super::layered(
            Lexicon::embedded(),
            &[
                Rule::alias("a", &"b".repeat(64)),
                Rule::alias("Benki Kuu", "beki"),
                Rule::phoneme("x", "ʃaʃaʃaʃa"),
            ],
        )
        .unwrap();
        // Each "a" reads as 64 characters; the spaces between stay.
        assert_eq!(read_length(&lexicon, "a a", 1_000), Ok(64 + 1 + 64));
        assert_eq!(read_length(&lexicon, "Nenda BENKI kuu", 100), Ok(10));
        // A word given phonemes counts as their spelling ("shashashasha"), not as the one letter written.
        assert!(read_length(&lexicon, "x", 100).unwrap() >= 8);
        // Without rules a text reads as itself.
        assert_eq!(read_length(Lexicon::embedded(), "habari yako", 11), Ok(11));
    }

    #[test]
    fn measuring_stops_at_the_limit() {
        let lexicon =
            super::super::layered(Lexicon::embedded(), &[Rule::alias("a", &"b".repeat(64))])
                .unwrap();
        // 1,999 characters of "a a a …" read as over 60,000: refused against 5,000.
        let text = vec!["a"; 1_000].join(" ");
        assert_eq!(text.chars().count(), 1_999);
        assert_eq!(
            read_length(&lexicon, &text, 5_000),
            Err(ReadsTooLong { max: 5_000 })
        );
        let error = layered_within(
            Lexicon::embedded(),
            &[Rule::alias("a", &"b".repeat(64))],
            &text,
            5_000,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("5000 characters") && error.contains("rules"),
            "{error}"
        );
        // The same text reads within a limit it fits.
        assert!(read_length(&lexicon, &text, 70_000).is_ok());
    }
}
