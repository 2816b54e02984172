//! Argument parsing (clap) and dispatch to the subcommands.

mod agent;
mod audio;
mod client;
mod eval;
mod models;
mod scenario;
mod serve;
mod stt;
mod stt_eval;
mod text;
mod tts;
mod usage;
mod voices;

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
    /// Bring the configured store's schema (SQLite or PostgreSQL) to this version and stop; the service also
    /// does this when it starts.
    Migrate(serve::ConfigArgs),
    /// Inspect and convert audio files the way the service decodes uploads.
    #[command(subcommand)]
    Audio(audio::AudioCommand),
    /// See how Swahili text will be read: normalised words and phonemes.
    #[command(subcommand)]
    Text(text::TextCommand),
    /// Synthesise Swahili speech to a WAV file, in-process: a built-in voice (no model files) or a configured
    /// neural voice.
    ///
    /// Example: sauti tts "Habari ya asubuhi" -o habari.wav --voice baraka --speaking-rate 1.2
    Tts(tts::TtsArgs),
    /// Check scenario files and run their test conversations.
    #[command(subcommand)]
    Scenario(scenario::ScenarioCommand),
    /// Talk to a scenario in the terminal with the embedded engine, each reply timed.
    ///
    /// Example: sauti converse --scenario banking --save-audio turns/
    Converse(agent::ConverseArgs),
    /// List voices: the built-in ones, or a server's with --remote; `sauti voices similarity REF OUT` measures
    /// how alike two recordings' speakers sound.
    ///
    /// Example: sauti voices --remote --server http://127.0.0.1:8080 --api-key sk_sauti_…
    Voices(voices::Voices),
    /// Follow synthesis jobs on a server.
    #[command(subcommand)]
    Jobs(client::JobsCommand),
    /// The model catalog: list fetchable models, download and install them.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Transcribe an audio file in-process with the configured recognition models; `sauti stt eval MANIFEST`
    /// measures them on recordings with reference transcripts (word and character error rates, real-time factor).
    ///
    /// Example: sauti models fetch whisper-base && sauti stt question.webm --language sw
    Stt(stt::SttArgs),
}

/// Run the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::serve(args),
        Command::Keys(command) => serve::keys(command),
        Command::Migrate(args) => serve::migrate(args),
        Command::Audio(command) => audio::run(command),
        Command::Text(command) => text::run(command),
        Command::Tts(args) => tts::run(args),
        Command::Scenario(command) => return scenario::run(command),
        Command::Converse(args) => agent::run(args),
        Command::Voices(args) => voices::run(args),
        Command::Jobs(command) => client::jobs(command),
        Command::Models(command) => models::run(command),
        Command::Stt(args) => stt::run(args),
    }
    .map(|()| ExitCode::SUCCESS)
}
