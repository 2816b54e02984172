//! Any scenario file: the parser accepts it or names a problem on a line that exists in the file.
#![no_main]

mod malloc_limit;

use libfuzzer_sys::fuzz_target;
use sauti::dialogue::scenario::parse;

fuzz_target!(|source: &str| {
    if let Err(error) = parse("fuzz.toml", source, Some("fuzz")) {
        let lines = source.lines().count().max(1) + 1;
        assert!(
            (1..=lines).contains(&error.line),
            "line {} of a {lines}-line file: {}",
            error.line,
            error.message
        );
        assert!(
            !error.message.is_empty(),
            "an empty message at line {}",
            error.line
        );
    }
});
