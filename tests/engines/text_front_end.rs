//! The Swahili text front end as scenario authors and lexicon editors meet it: table-driven readings of
//! written Swahili (`tests/fixtures/normalize.tsv`) and word transcriptions (`tests/fixtures/g2p.tsv`).

use sauti::tts::g2p::{self, PhraseEnd};
use sauti::tts::lexicon::Lexicon;
use sauti::tts::normalize::{self, split_sentences};

/// Rows of a two-column fixture, comments and blank lines skipped.
fn table(name: &str) -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (input, expected) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("no tab in {l:?}"));
            (input.to_string(), expected.to_string())
        })
        .collect()
}

#[test]
fn normaliser_reads_every_category_as_written_in_the_table() {
    let cases = table("normalize.tsv");
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(input, expected)| {
            let got = normalize::normalize(input);
            (got != *expected)
                .then(|| format!("{input:?}\n   expected {expected:?}\n   got      {got:?}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn g2p_transcribes_every_word_in_the_table() {
    let cases = table("g2p.tsv");
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let lexicon = Lexicon::embedded();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(word, expected)| {
            let got = g2p::word(word, lexicon)
                .map(|w| w.to_string())
                .unwrap_or_default();
            (got != *expected).then(|| format!("{word}: expected {expected}, got {got}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} words differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn phrases_carry_their_intonation() {
    let text = normalize::normalize("Habari ya asubuhi? Nzuri sana, asante. Karibu!");
    let utterance = g2p::transcribe(&text, Lexicon::embedded());
    let ends: Vec<PhraseEnd> = utterance.phrases.iter().map(|p| p.end).collect();
    assert_eq!(
        ends,
        [
            PhraseEnd::Question,
            PhraseEnd::Continue,
            PhraseEnd::Statement,
            PhraseEnd::Exclamation
        ]
    );
    assert_eq!(
        utterance.to_string(),
        "ha.ˈba.ri ja a.su.ˈbu.hi ↗‖ ˈⁿzu.ri ˈsa.na | a.ˈsa.ntɛ ‖ ka.ˈri.bu ‖"
    );
}

#[test]
fn a_custom_lexicon_changes_the_reading() {
    let lexicon =
        Lexicon::from_toml("[spell]\nNBC = \"en bi si benki\"\n[phonemes]\nbaa = \"b a\"\n")
            .expect("valid");
    assert_eq!(
        normalize::normalize_with("Tawi la NBC", &lexicon),
        "Tawi la en bi si benki"
    );
    assert_eq!(
        g2p::word("baa", &lexicon).map(|w| w.to_string()),
        Some("ba".to_string())
    );
}

#[test]
fn long_texts_split_into_sentences_before_normalising() {
    let text = "Karibu Dkt. Juma. Bei ni TSh 3,500.50 leo! Je, utalipa kwa M-Pesa? Asante";
    let sentences = split_sentences(text);
    assert_eq!(sentences.len(), 4, "{sentences:?}");
    assert_eq!(
        normalize::normalize(&sentences[1]),
        "Bei ni shilingi elfu tatu na mia tano na senti hamsini leo!"
    );
}
