//! Any scenario file, and any safety rules file: the parser accepts it or names a problem on a line that exists
//! in the file.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::dialogue::safety::SafetyRules;
use sauti::dialogue::scenario::parse;

fn check_line(source: &str, line: usize, message: &str) {
    let lines = source.lines().count().max(1) + 1;
    assert!(
        (1..=lines).contains(&line),
        "line {line} of a {lines}-line file: {message}"
    );
    assert!(!message.is_empty(), "an empty message at line {line}");
}

fuzz_target!(|source: &str| {
    if let Err(error) = parse("fuzz.toml", source, Some("fuzz")) {
        check_line(source, error.line, &error.message);
    }
    if let Err(error) = SafetyRules::parse("fuzz-safety.toml", source) {
        check_line(source, error.line, &error.message);
    }
});
