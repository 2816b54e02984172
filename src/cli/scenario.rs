//! `sauti scenario check|test|chat`: for scenario authors.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;

use sauti::dialogue::scenario;
use sauti::dialogue::testing::run_tests;

#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// Check scenario files: every problem as FILE:LINE: message; non-zero exit on any.
    ///
    /// Example: sauti scenario check scenarios/banking.toml
    Check {
        /// Files to check (default: every scenarios/*.toml).
        files: Vec<PathBuf>,
    },
    /// Run the test conversations of scenario files against the embedded engine (actions are recorded, not
    /// sent); pass/fail per case, non-zero exit on any failure.
    ///
    /// Example: sauti scenario test scenarios/health.toml
    Test {
        /// Files to test (default: every scenarios/*.toml).
        files: Vec<PathBuf>,
    },
    /// Run labelled evaluation sets (scenarios/eval/*.toml, format in scenarios/FORMAT.md) against the embedded
    /// engine: accuracy per intent, safety recall, false escalations, money cases and confusions. Non-zero exit
    /// below the thresholds (safety and money 100%, intents 90%, false escalations 5%).
    ///
    /// Example: sauti scenario eval scenarios/eval/health.toml
    Eval {
        /// Evaluation files (default: every scenarios/eval/*.toml).
        files: Vec<PathBuf>,
        /// Print every failed check of a case, not only the first.
        #[arg(long)]
        verbose: bool,
    },
}

/// The files given, or every `.toml` file of `dir` (which must exist).
pub fn files_or_default(files: Vec<PathBuf>, dir: &str) -> anyhow::Result<Vec<PathBuf>> {
    if !files.is_empty() {
        return Ok(files);
    }
    anyhow::ensure!(
        std::path::Path::new(dir).is_dir(),
        "no files given and no {dir}/ directory here"
    );
    Ok(sauti::dialogue::library::toml_files(std::path::Path::new(
        dir,
    )))
}

/// Run a scenario command; the exit code says whether everything passed.
pub fn run(command: ScenarioCommand) -> anyhow::Result<ExitCode> {
    match command {
        ScenarioCommand::Eval { files, verbose } => super::eval::run(files, verbose),
        ScenarioCommand::Check { files } => {
            let mut failed = false;
            for file in files_or_default(files, "scenarios")? {
                match scenario::load(&file) {
                    Ok(s) => println!(
                        "{}: ok ({} intents, {} flows, {} tests)",
                        file.display(),
                        s.intents.len(),
                        s.flows.len(),
                        s.tests.len()
                    ),
                    Err(error) => {
                        eprintln!("{error}");
                        failed = true;
                    }
                }
            }
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        ScenarioCommand::Test { files } => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting a runtime")?;
            let (mut passed, mut failed) = (0, 0);
            let mut cases = Vec::new();
            for file in files_or_default(files, "scenarios")? {
                let scenario = match scenario::load(&file) {
                    Ok(s) => s,
                    Err(error) => {
                        eprintln!("{error}");
                        failed += 1;
                        continue;
                    }
                };
                let results = runtime.block_on(run_tests(&scenario));
                cases.extend(results.iter().cloned());
                for case in results {
                    if case.passed() {
                        passed += 1;
                        println!("PASS {} :: {}", scenario.id, case.name);
                    } else {
                        failed += 1;
                        println!("FAIL {} :: {}", scenario.id, case.name);
                        for failure in &case.failures {
                            println!("     {failure}");
                        }
                    }
                }
            }
            println!("\n| assertion | passed |\n|---|---|");
            for (kind, (ok, made)) in sauti::dialogue::testing::tally(&cases) {
                println!(
                    "| {kind} | {ok}/{made} ({:.1}%) |",
                    100.0 * ok as f64 / made.max(1) as f64
                );
            }
            println!("{passed} passed, {failed} failed");
            Ok(if failed > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}
