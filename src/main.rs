//! The `sauti` command line: every subcommand is a thin adapter over the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            // One line, the whole cause chain: what a user or a script reading stderr needs.
            eprintln!("sauti: {error:#}");
            ExitCode::FAILURE
        }
    }
}
