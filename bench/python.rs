//! Shared by the benchmarks that drive Python references (`vits`, `asr`): the repository root and running a
//! program there for its standard output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root (references and tools are run from there).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `program` with `args` in the repository root; its standard output (stderr passes through). Panics on
/// failure: a benchmark without its reference has nothing to compare.
pub fn run(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed",
        program.display()
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}
