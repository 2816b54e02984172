//! `sauti audio info|convert`: the service's audio layer, on files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;

use sauti::audio::{self, DecodeLimits};

#[derive(Debug, Subcommand)]
pub enum AudioCommand {
    /// Print what a file is and how it sounds, as JSON.
    ///
    /// Example: sauti audio info voice-note.ogg
    ///
    /// Prints {format, codec, sample_rate, channels, duration_seconds, speech_seconds, peak_dbfs, rms_dbfs}.
    Info {
        /// The audio file (WAV, MP3, FLAC, Ogg Vorbis/Opus, WebM/Matroska Opus/Vorbis); the format is
        /// detected from its bytes.
        file: PathBuf,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Convert any supported file to 16 kHz mono 16-bit WAV, exactly as the service sees uploads.
    ///
    /// Example: sauti audio convert recording.webm -o recording.wav
    Convert {
        /// The input audio file.
        input: PathBuf,
        /// Where to write the WAV file.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Stop decoding and fail when the audio is longer than this many seconds.
    #[arg(long, default_value_t = 900.0, value_name = "SECONDS")]
    max_duration: f64,
}

impl LimitArgs {
    fn limits(&self) -> anyhow::Result<DecodeLimits> {
        let max_duration = Duration::try_from_secs_f64(self.max_duration)
            .ok()
            .filter(|d| !d.is_zero())
            .context("--max-duration must be a positive number of seconds")?;
        Ok(DecodeLimits { max_duration })
    }
}

/// The JSON printed by `sauti audio info`.
#[derive(Debug, Serialize)]
struct Info {
    format: &'static str,
    codec: &'static str,
    sample_rate: u32,
    channels: u16,
    duration_seconds: f64,
    speech_seconds: f64,
    peak_dbfs: f64,
    rms_dbfs: f64,
}

pub fn run(command: AudioCommand) -> anyhow::Result<()> {
    match command {
        AudioCommand::Info { file, limits } => {
            let decoded = audio::decode(&read(&file)?, &limits.limits()?)
                .with_context(|| file.display().to_string())?;
            let stats = audio::analyse(&decoded.samples, decoded.sample_rate);
            let info = Info {
                format: decoded.source.format,
                codec: decoded.source.codec,
                sample_rate: decoded.source.sample_rate,
                channels: decoded.source.channels,
                duration_seconds: round3(stats.duration_seconds),
                speech_seconds: round3(stats.speech_seconds),
                peak_dbfs: round3(stats.peak_dbfs),
                rms_dbfs: round3(stats.rms_dbfs),
            };
            println!("{}", serde_json::to_string_pretty(&info)?);
            Ok(())
        }
        AudioCommand::Convert {
            input,
            output,
            limits,
        } => {
            let audio = audio::load_16k(&read(&input)?, &limits.limits()?)
                .with_context(|| input.display().to_string())?;
            std::fs::write(&output, audio::encode_wav_16k(&audio.samples))
                .with_context(|| format!("cannot write {}", output.display()))?;
            Ok(())
        }
    }
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
