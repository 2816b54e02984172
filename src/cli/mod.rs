//! Argument parsing (clap) and dispatch to the subcommands.

mod audio;
mod scenario;
mod serve;
mod text;
mod tts;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// sauti — Swahili speech: text-to-speech, recognition, voice cloning and a voice agent.
#[derive(Debug, Parser)]
#[command(name = "sauti", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP service (embedded voices; no model files needed).
    ///
    /// Example: SAUTI__SERVER__BIND=127.0.0.1:8080 sauti serve
    Serve(serve::ConfigArgs),
    /// Create, list and revoke API keys (stored hashed in the data directory's database).
    #[command(subcommand)]
    Keys(serve::KeysCommand),
    /// Inspect and convert audio files the way the service decodes uploads.
    #[command(subcommand)]
    Audio(audio::AudioCommand),
    /// See how Swahili text will be read: normalised words and phonemes.
    #[command(subcommand)]
    Text(text::TextCommand),
    /// Synthesise Swahili speech to a WAV file with a built-in voice (no server, no model files).
    ///
    /// Example: sauti tts "Habari ya asubuhi" -o habari.wav --voice baraka --speaking-rate 1.2
    Tts(tts::TtsArgs),
    /// Check scenario files and run their test conversations.
    #[command(subcommand)]
    Scenario(scenario::ScenarioCommand),
}

/// Run the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::serve(args),
        Command::Keys(command) => serve::keys(command),
        Command::Audio(command) => audio::run(command),
        Command::Text(command) => text::run(command),
        Command::Tts(args) => tts::run(args),
        Command::Scenario(command) => return scenario::run(command),
    }
    .map(|()| ExitCode::SUCCESS)
}
