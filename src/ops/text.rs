//! The text rules, one set for every protocol: what may be spoken and what a caller may say, and how long.

use crate::problem::ApiError;

/// Longest text of one synthesis request (spec §8), on every synthesis path.
pub const TTS_MAX_CHARS: usize = 5_000;
/// Longer texts are synthesised as a job (spec §4.1).
pub const TTS_SYNC_MAX_CHARS: usize = 2_000;
/// Longest `input` of OpenAI's speech request (OpenAI's own limit, which its clients check too).
pub const OPENAI_MAX_INPUT_CHARS: usize = 4_096;

/// What a text is for, which decides what it must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// To be spoken by a voice: it needs a letter or a digit (what no voice can read is refused now rather
    /// than failing later, after a job was queued).
    Speech,
    /// What a caller says to the agent: anything but blank.
    Utterance,
}

/// The text a request carries in its member `field`, checked for `purpose` and against `max` characters.
pub struct Text<'a> {
    /// The member's name, as the request's protocol spells it (`text`, `input`).
    pub field: &'a str,
    /// The text.
    pub text: &'a str,
    /// Its most characters.
    pub max: usize,
    /// What it is for.
    pub purpose: Purpose,
}

impl Text<'_> {
    /// Its length in characters, or 422 saying which rule it breaks.
    pub fn check(&self) -> Result<usize, ApiError> {
        let field = self.field;
        if self.text.trim().is_empty() {
            return Err(ApiError::unprocessable(format!(
                "`{field}` must not be empty"
            )));
        }
        if self.purpose == Purpose::Speech && !self.text.chars().any(|c| c.is_ascii_alphanumeric())
        {
            return Err(ApiError::unprocessable(format!(
                "`{field}` contains nothing that can be spoken: it needs letters or digits"
            )));
        }
        let chars = self.text.chars().count();
        if chars > self.max {
            return Err(ApiError::unprocessable(format!(
                "`{field}` exceeds the maximum length of {} characters",
                self.max
            )));
        }
        Ok(chars)
    }
}

/// Text to speak in `field`: its length, or 422.
pub fn speakable(field: &str, text: &str, max: usize) -> Result<usize, ApiError> {
    Text {
        field,
        text,
        max,
        purpose: Purpose::Speech,
    }
    .check()
}

/// What a caller says in `field`: its length, or 422.
pub fn utterance(field: &str, text: &str, max: usize) -> Result<usize, ApiError> {
    Text {
        field,
        text,
        max,
        purpose: Purpose::Utterance,
    }
    .check()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speech_needs_something_to_read_and_an_utterance_only_something() {
        assert!(speakable("text", "?!", 10).is_err());
        assert_eq!(utterance("text", "?!", 10).unwrap(), 2);
        assert!(utterance("text", "  \n", 10).is_err());
        assert_eq!(speakable("input", "Habari 2", 10).unwrap(), 8);
        let long = speakable("input", "abcdefghijk", 10).unwrap_err();
        assert!(long
            .detail
            .contains("`input` exceeds the maximum length of 10"));
    }
}
