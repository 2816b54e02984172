//! Any caller turn: the reading of Sheng and English words, the safety screen, the secret masker, the repair
//! checks and the number parser accept it; the reading keeps every digit in order; a masked turn keeps no digit;
//! offered spans fall on character boundaries.
#![no_main]

mod malloc_limit;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sauti::dialogue::{numbers, repair};
use sauti::dialogue::safety;
use sauti::dialogue::scenario::{parse, Scenario};

fn scenario() -> &'static Scenario {
    static SCENARIO: OnceLock<Scenario> = OnceLock::new();
    SCENARIO.get_or_init(|| {
        parse(
            "health.toml",
            include_str!("../../../scenarios/health.toml"),
            Some("health"),
        )
        .expect("the shipped health scenario parses")
    })
}

fuzz_target!(|text: &str| {
    let read = scenario().reading.current().read(text);
    let rules = scenario().safety.current();
    let secrets = &rules.secrets;
    let digits = |t: &str| t.chars().filter(char::is_ascii_digit).collect::<String>();
    assert_eq!(digits(&read), digits(text), "{text:?} read as {read:?}");
    let _ = safety::screen(scenario(), &read);
    let _ = secrets.offers(&read);
    let _ = (repair::asks_to_repeat(text), repair::calls_off(text));
    let _ = safety::screen(scenario(), text);
    let _ = (secrets.asks_for(text), rules.medical_advice(text));
    let _ = numbers::amount(text);
    let _ = numbers::digit_strings(text);
    for span in secrets.offered(text) {
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
    }
    let masked = secrets.mask(text);
    assert!(
        !masked.chars().any(|c| c.is_ascii_digit()),
        "{text:?} -> {masked:?}"
    );
});
