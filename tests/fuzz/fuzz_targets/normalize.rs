//! Any text a client may send for synthesis: the normaliser spells every digit out in words and keeps the
//! output within a fixed multiple of the input.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::tts::normalize::normalize;

fuzz_target!(|text: &str| {
    let words = normalize(text);
    assert!(
        words.chars().count() <= 60 * text.chars().count() + 16,
        "{text:?} grew to {} characters",
        words.chars().count()
    );
    assert!(
        !words.chars().any(|c| c.is_ascii_digit()),
        "{text:?} -> {words:?} kept digits"
    );
});
