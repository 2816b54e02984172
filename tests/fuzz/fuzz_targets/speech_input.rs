//! Any messages a client sends on an input-streaming socket: each is read as ElevenLabs' message or refused with
//! a reason (never a panic), its chunk schedule is in range or refused, and its text, however it is split and
//! whatever it holds, goes through the buffer of a context: nothing is lost or reordered, no piece is empty, and
//! no more than the hard limit is ever held without a boundary.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::http::compat::elevenlabs::socket::wire::ClientMessage;
use sauti::ops::speech_input::buffer::{TextBuffer, HARD_LIMIT, SCHEDULE_RANGE};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut schedule = Vec::new();
    for line in text.split('\n') {
        match ClientMessage::parse(line) {
            Ok(message) => {
                let _ = message.key();
                if let Ok(Some(lengths)) = message.schedule() {
                    let (lo, hi) = SCHEDULE_RANGE;
                    assert!(lengths.iter().all(|&l| (lo..=hi).contains(&l)));
                    schedule = lengths;
                }
            }
            Err(reason) => assert!(!reason.is_empty()),
        }
    }
    let mut buffer = TextBuffer::new(schedule, head & 1 == 1);
    let mut spoken = String::new();
    let mut sent = String::new();
    // The text in parts of the sizes the first byte picks.
    let size = usize::from(head >> 1).max(1);
    let chars: Vec<char> = text.chars().collect();
    for part in chars.chunks(size) {
        let part: String = part.iter().collect();
        sent.push_str(&part);
        for piece in buffer.push(&part) {
            assert!(!piece.is_empty());
            spoken.push_str(&piece);
        }
        assert!(buffer.held_chars() < HARD_LIMIT + size + 1);
    }
    spoken.extend(buffer.flush());
    // Spaces may be added between a sentence and a word sent right after it; nothing else changes.
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    assert_eq!(squeeze(&spoken), squeeze(&sent));
});
