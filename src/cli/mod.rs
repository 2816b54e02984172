//! Argument parsing (clap) and dispatch to the subcommands.

mod audio;
mod text;
mod tts;

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
}

/// Run the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Audio(command) => audio::run(command),
        Command::Text(command) => text::run(command),
        Command::Tts(args) => tts::run(args),
    }
}
