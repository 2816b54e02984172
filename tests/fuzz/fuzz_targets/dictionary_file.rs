//! Any dictionary file (its first byte picks the name it is uploaded under: `.pls`, `.json`, `.toml` or none,
//! told apart by content): refused with a message (a PLS problem on a line the file has), or read into at most
//! 1,000 rules (none only from an empty JSON or TOML file, which a dictionary refuses) that pass the rule
//! checks, whose readings keep within their bound, that lay over the lexicon, that a PLS file written from them
//! reads back as, and that a text is measured with the same within a limit as without one.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::tts::lexicon::Lexicon;
use sauti::tts::pronunciation::{self, expand, file, pls, Rule, MAX_RULES};

const NAMES: [&str; 4] = ["upload.pls", "rules.json", "lexicon.toml", "upload"];

fn reading(rule: &Rule) -> &str {
    match rule {
        Rule::Alias { alias, .. } => alias,
        Rule::Phoneme { phoneme, .. } => phoneme,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let name = NAMES[usize::from(first) % NAMES.len()];
    let rules = match file::read_rules(name, text) {
        Ok(rules) => rules,
        Err(error) => {
            let message = error.to_string();
            assert!(!message.is_empty(), "an empty message");
            let named = message
                .strip_prefix("line ")
                .and_then(|m| m.split(':').next())
                .and_then(|n| n.parse::<usize>().ok());
            if let (Some(line), true) = (named, name.ends_with(".pls")) {
                let lines = text.lines().count().max(1) + 1;
                assert!((1..=lines).contains(&line), "line {line} of {lines}: {message}");
            }
            return;
        }
    };
    assert!(rules.len() <= MAX_RULES, "{} rules", rules.len());
    if rules.is_empty() {
        // An empty lexicon file reads as no rules; a dictionary made from it is refused as empty.
        assert!(pronunciation::check(&rules).is_err());
        return;
    }
    for rule in &rules {
        let (key, said) = (rule.string_to_replace(), reading(rule));
        assert!(
            said.trim().chars().count() <= pronunciation::max_reading_chars(key),
            "{key:?} reads as {said:?}"
        );
    }
    let lexicon = pronunciation::layered(Lexicon::embedded(), &rules)
        .unwrap_or_else(|e| panic!("rules read from a file do not lay over the lexicon: {e}"));
    let again = pls::parse(&pls::write(&rules))
        .unwrap_or_else(|e| panic!("the PLS file written from the rules does not read: {e}"));
    assert_eq!(again.len(), rules.len());

    // The rules' own strings, as a text: measured within a limit as without one.
    let spoken: Vec<&str> = rules.iter().take(50).map(Rule::string_to_replace).collect();
    let spoken = spoken.join(" na ");
    let whole = expand::read_length(&lexicon, &spoken, usize::MAX).expect("no limit");
    for limit in [0, whole / 2, whole, whole + 1] {
        match expand::read_length(&lexicon, &spoken, limit) {
            Ok(length) => assert!(length == whole && length <= limit),
            Err(error) => assert!(whole > limit && error.max == limit),
        }
    }
});
