//! Any text, raw or normalised: the G2P gives words of non-empty syllables with the stress on one of them.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::tts::g2p::{transcribe, Utterance};
use sauti::tts::lexicon::Lexicon;
use sauti::tts::normalize::normalize;

fn check(text: &str, utterance: &Utterance) {
    for word in utterance.phrases.iter().flat_map(|p| &p.words) {
        assert!(
            !word.syllables.is_empty(),
            "{text:?}: {:?} has no syllables",
            word.text
        );
        assert!(
            word.stressed < word.syllables.len(),
            "{text:?}: stress {} of {} syllables in {:?}",
            word.stressed,
            word.syllables.len(),
            word.text
        );
        assert!(
            word.syllables.iter().all(|s| !s.phonemes.is_empty()),
            "{text:?}: an empty syllable in {:?}",
            word.text
        );
    }
}

fuzz_target!(|text: &str| {
    let lexicon = Lexicon::embedded();
    check(text, &transcribe(text, lexicon));
    let normalised = normalize(text);
    check(&normalised, &transcribe(&normalised, lexicon));
});
