//! Property tests over the text paths clients and scenario authors feed: the Swahili normaliser, the G2P and the
//! scenario-file parser never panic, whatever they are given, and stay within sane output bounds.

use proptest::prelude::*;
use sauti::dialogue::scenario::parse;
use sauti::tts::g2p::transcribe;
use sauti::tts::lexicon::Lexicon;
use sauti::tts::normalize::{normalize, split_pieces, PIECE_CHARS};

/// Text like what clients send: Swahili words, numbers, money, dates, punctuation, symbols and stray Unicode.
fn swahili_like() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("habari".to_string()),
        Just("TSh".to_string()),
        Just("12,500".to_string()),
        Just("12/03/2025".to_string()),
        Just("08:30".to_string()),
        Just("%".to_string()),
        Just("-".to_string()),
        Just("1/2".to_string()),
        Just("NMB".to_string()),
        "[0-9]{1,25}",
        "[0-9.,/:%-]{1,12}",
        "\\PC{1,8}",
    ];
    proptest::collection::vec(pieces, 0..24).prop_map(|p| p.join(" "))
}

/// A refused scenario file gets a message, on a line the file has.
fn assert_named_problem(source: &str, id: &str) {
    if let Err(error) = parse("fuzz.toml", source, Some(id)) {
        assert!(
            !error.message.trim().is_empty(),
            "no message at line {}",
            error.line
        );
        assert!(
            error.line >= 1 && error.line <= source.lines().count() + 1,
            "line {}",
            error.line
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_normaliser_never_panics_and_spells_out_digits(text in swahili_like()) {
        let words = normalize(&text);
        prop_assert!(words.chars().count() <= 60 * text.chars().count() + 16, "{text:?} -> {words:?}");
        prop_assert!(!words.chars().any(|c| c.is_ascii_digit()), "{text:?} -> {words:?}");
    }

    #[test]
    fn every_text_is_synthesised_in_bounded_pieces_that_keep_its_words(
        words in proptest::collection::vec("[a-z0-9.,;:!?]{1,30}|\\PC{1,12}|[a-z]{400,700}", 0..60),
        separator in prop_oneof![Just(" "), Just("  "), Just("\n"), Just(" . ")],
    ) {
        let text = words.join(separator);
        let pieces = split_pieces(&text, PIECE_CHARS);
        for piece in &pieces {
            prop_assert!(piece.chars().count() <= PIECE_CHARS, "{} characters", piece.chars().count());
            prop_assert!(!piece.trim().is_empty());
        }
        // Nothing readable is lost or invented: the same characters, spacing aside.
        let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        prop_assert_eq!(squeeze(&pieces.concat()), squeeze(&text));
    }

    #[test]
    fn the_normaliser_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = normalize(&text);
    }

    #[test]
    fn g2p_never_panics_on_normalised_or_raw_text(text in swahili_like(), raw in "\\PC{0,80}") {
        let lexicon = Lexicon::embedded();
        let _ = transcribe(&normalize(&text), lexicon);
        let _ = transcribe(&raw, lexicon);
    }

    #[test]
    fn the_scenario_parser_never_panics_and_names_a_problem_on_a_line(source in "\\PC{0,400}") {
        assert_named_problem(&source, "fuzz");
    }

    #[test]
    fn mutated_scenario_files_are_refused_or_parsed_never_a_panic(
        cut in 0usize..22_000,
        insert in proptest::collection::vec(any::<char>(), 0..12).prop_map(String::from_iter),
    ) {
        let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/banking.toml")).unwrap();
        let mut at = cut.min(source.len());
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        let mutated = format!("{}{}{}", &source[..at], insert, &source[at..]);
        assert_named_problem(&mutated, "banking");
    }
}
