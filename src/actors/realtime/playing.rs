//! A reply being played: what the client has been sent of it, and what the caller has heard by now (the client
//! plays audio in real time from the first piece).

use std::time::Instant;

use super::actor::State;
use super::Outbound;
use crate::tts::alignment;
use crate::tts::SpokenWord;

/// A reply whose audio has gone to the client, which plays it in real time.
pub(super) struct Playing {
    pub(super) turn: u64,
    /// The whole reply (with what was heard of it before, for a resumed one).
    pub(super) reply: String,
    /// What the caller had heard of the reply before this part of it (a reply resumed after a murmur).
    pub(super) before: String,
    pub(super) first_audio: Instant,
    /// Each piece's written text and where it starts and ends in the reply, in seconds, with its words.
    pub(super) pieces: Vec<(String, f64, f64, Vec<SpokenWord>)>,
    pub(super) seconds: f64,
    pub(super) last_event: u64,
}

impl Playing {
    /// Whether the client may still be playing it.
    pub(super) fn audible(&self, producing: bool) -> bool {
        producing || self.first_audio.elapsed().as_secs_f64() < self.seconds
    }

    /// The part of the reply played by now: whole pieces, and the characters of the piece under way whose time
    /// has come (where the voice timed its words).
    pub(super) fn heard(&self) -> String {
        let at = self.first_audio.elapsed().as_secs_f64();
        let mut heard = self.before.clone();
        if !heard.is_empty() {
            heard.push(' ');
        }
        for (text, start, end, words) in &self.pieces {
            if *end <= at {
                heard.push_str(text);
                heard.push(' ');
                continue;
            }
            if *start < at && !words.is_empty() {
                let times = alignment::written(text, words);
                let played = times.ends.iter().take_while(|&&end| end <= at).count();
                let mut said: String = times.characters[..played].concat();
                // A word cut off in the middle was not heard.
                let cut_mid_word = times
                    .characters
                    .get(played)
                    .is_some_and(|c| c.chars().all(char::is_alphanumeric));
                if cut_mid_word {
                    let kept = said.rfind(char::is_whitespace).unwrap_or(0);
                    said.truncate(kept);
                }
                heard.push_str(said.trim_end());
            }
            break;
        }
        heard.trim().to_string()
    }
}

impl State {
    /// A piece of the reply's speech: the first starts the reply playing (unless the caller has begun to speak
    /// again), each is sent and counted to know later what was heard.
    pub(super) fn piece(
        &mut self,
        turn: u64,
        audio: Vec<u8>,
        text: String,
        seconds: f64,
        words: Vec<SpokenWord>,
    ) {
        let Some(current) = self.current.as_ref() else {
            return;
        };
        let reply = current.reply.clone().unwrap_or_default();
        let before = current.before.clone();
        if self.playing.as_ref().is_none_or(|p| p.turn != turn) {
            // The caller is speaking again before the reply began: it is not spoken over them.
            if self.vad.in_speech() {
                if let Some(current) = self.current.take() {
                    current.task.abort();
                }
                self.forget_unheard("");
                self.send(Outbound::Correction {
                    original: reply,
                    corrected: String::new(),
                });
                return;
            }
            metrics::histogram!(crate::telemetry::metrics::REALTIME_VOICE_TO_VOICE)
                .record(current.ended_speaking.elapsed().as_secs_f64());
            self.playing = Some(Playing {
                turn,
                reply: match before.is_empty() {
                    true => reply,
                    false => format!("{before} {reply}"),
                },
                before,
                first_audio: Instant::now(),
                pieces: Vec::new(),
                seconds: 0.0,
                last_event: 0,
            });
        }
        self.events += 1;
        let event_id = self.events;
        if let Some(playing) = self.playing.as_mut() {
            let start = playing.seconds;
            playing.seconds += seconds;
            playing.last_event = event_id;
            match playing.pieces.last_mut() {
                // More audio of the sentence before (a voice that hands on a sentence in parts).
                Some(last) if text.is_empty() => last.2 = playing.seconds,
                _ if text.is_empty() => {}
                _ => playing.pieces.push((text, start, playing.seconds, words)),
            }
        }
        self.send(Outbound::Audio { event_id, audio });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn word(text: &str, start: f64, end: f64) -> SpokenWord {
        SpokenWord {
            text: text.into(),
            start,
            end,
        }
    }

    fn playing(started_ago: f64) -> Playing {
        Playing {
            turn: 1,
            reply: "Habari yako. Karibu benki leo.".into(),
            before: String::new(),
            first_audio: Instant::now() - Duration::from_secs_f64(started_ago),
            pieces: vec![
                (
                    "Habari yako.".into(),
                    0.0,
                    1.0,
                    vec![word("habari", 0.0, 0.4), word("yako", 0.5, 0.9)],
                ),
                (
                    "Karibu benki leo.".into(),
                    1.0,
                    2.5,
                    vec![
                        word("karibu", 1.0, 1.5),
                        word("benki", 1.6, 2.0),
                        word("leo", 2.1, 2.4),
                    ],
                ),
            ],
            seconds: 2.5,
            last_event: 2,
        }
    }

    #[test]
    fn what_was_heard_is_whole_words_played_by_now() {
        assert_eq!(playing(0.1).heard(), "");
        assert_eq!(playing(0.45).heard(), "Habari");
        assert_eq!(playing(1.2).heard(), "Habari yako.");
        // Half of "benki" has been played: it was not heard.
        assert_eq!(playing(1.8).heard(), "Habari yako. Karibu");
        assert_eq!(playing(3.0).heard(), "Habari yako. Karibu benki leo.");
        assert!(playing(1.0).audible(false));
        assert!(!playing(3.0).audible(false));
        assert!(playing(3.0).audible(true));
    }
}
