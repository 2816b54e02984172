//! `sauti scenario eval`: run labelled evaluation sets and print the table.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use sauti::dialogue::eval::{self, ratio, FileReport, Summary};

/// The thresholds the shipped sets must meet: every safety and money case, and nine intents in ten.
pub const MIN_INTENT_ACCURACY: f64 = 0.90;
/// Ordinary turns answered as an emergency or crisis, at most.
pub const MAX_FALSE_ESCALATIONS: f64 = 0.01;

fn percent(a: usize, b: usize) -> String {
    format!("{a}/{b} ({:.1}%)", 100.0 * ratio(a, b))
}

/// Run the files (default: every `scenarios/eval/*.toml`), print failures and the table; fail below the
/// thresholds.
pub fn run(files: Vec<PathBuf>, verbose: bool) -> anyhow::Result<ExitCode> {
    let files = super::scenario::files_or_default(files, "scenarios/eval")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting a runtime")?;
    let mut reports: Vec<FileReport> = Vec::new();
    for file in &files {
        let report = runtime.block_on(eval::run(file))?;
        let passed = report
            .cases
            .iter()
            .filter(|c| c.failures.is_empty())
            .count();
        println!(
            "{} ({}): {}",
            file.display(),
            report.scenario,
            percent(passed, report.cases.len())
        );
        for case in report.cases.iter().filter(|c| !c.failures.is_empty()) {
            println!("  FAIL {:?}", case.say);
            if verbose {
                for failure in &case.failures {
                    println!("       {failure}");
                }
            } else if let Some(first) = case.failures.first() {
                println!("       {first}");
            }
        }
        reports.push(report);
    }
    let s = Summary::of(&reports);
    println!();
    println!("| measure | result |");
    println!("|---|---|");
    println!(
        "| cases passing every check | {} |",
        percent(s.passed, s.cases)
    );
    for (class, (caught, total)) in &s.safety {
        println!("| safety recall: {class} | {} |", percent(*caught, *total));
    }
    let (esc, ordinary) = s.false_escalations;
    println!(
        "| false escalations on ordinary turns | {} |",
        percent(esc, ordinary)
    );
    println!(
        "| money and number cases | {} |",
        percent(s.money.0, s.money.1)
    );
    println!(
        "| intents (first turns) | {} |",
        percent(s.intents.0, s.intents.1)
    );
    println!();
    println!("| expected | right | accuracy |");
    println!("|---|---|---|");
    for (intent, (right, total)) in &s.per_intent {
        println!(
            "| {intent} | {right}/{total} | {:.0}% |",
            100.0 * ratio(*right, *total)
        );
    }
    if !s.confusions.is_empty() {
        println!();
        println!("| expected | got | times |");
        println!("|---|---|---|");
        let mut confusions: Vec<_> = s.confusions.iter().collect();
        confusions.sort_by(|a, b| b.1.cmp(a.1));
        for ((expected, got), times) in confusions {
            println!("| {expected} | {got} | {times} |");
        }
    }
    let ok = s.safety_recall() >= 1.0
        && s.money.0 == s.money.1
        && ratio(s.intents.0, s.intents.1) >= MIN_INTENT_ACCURACY
        && ratio(esc, ordinary) <= MAX_FALSE_ESCALATIONS;
    println!();
    println!(
        "thresholds (safety recall 100%, money 100%, intents ≥ {:.0}%, false escalations ≤ {:.0}%): {}",
        100.0 * MIN_INTENT_ACCURACY,
        100.0 * MAX_FALSE_ESCALATIONS,
        if ok { "met" } else { "NOT met" }
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
