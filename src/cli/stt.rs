//! `sauti stt`: transcribe an audio file in-process with the configured Whisper model, no server needed.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;

use sauti::asr::{DEFAULT_LANGUAGE, LANGUAGES};
use sauti::audio::{self, DecodeLimits};
use sauti::config::Settings;

/// Transcribe speech in an audio file.
#[derive(Debug, Args)]
pub struct SttArgs {
    /// The audio file: WAV, MP3, FLAC, Ogg (Vorbis or Opus) or WebM, any rate and channel count.
    file: PathBuf,
    /// Language spoken (ISO 639-1): sw, en, fr, de, es, pt, ar, zh, ja, ko or ru.
    #[arg(long, default_value = DEFAULT_LANGUAGE)]
    language: String,
    /// A Whisper model folder instead of the configured asr.model (under models.dir).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Also print each decoded window with its start and end time.
    #[arg(long)]
    segments: bool,
    /// A configuration file (as `serve --config`): models.dir, models.onnxruntime, asr.* …
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(args: SttArgs) -> anyhow::Result<()> {
    let language = args.language.to_ascii_lowercase();
    if !LANGUAGES.contains(&language.as_str()) {
        bail!(
            "unsupported language {language:?}; use one of {}",
            LANGUAGES.join(", ")
        );
    }
    let mut settings = Settings::load(std::path::Path::new("config"), args.config.as_deref())?;
    if let Some(model) = args.model {
        settings.asr.model = std::path::absolute(&model).unwrap_or(model);
    }
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let audio = audio::load_16k(&bytes, &DecodeLimits::default())
        .with_context(|| format!("{} cannot be decoded", args.file.display()))?;
    let recognizer = sauti::asr::load(&settings)
        .map_err(|why| anyhow::anyhow!("speech recognition is not available: {why}"))?;
    let started = std::time::Instant::now();
    let transcript = recognizer.transcribe(&audio.samples, &language)?;
    if args.segments {
        for segment in &transcript.segments {
            println!(
                "[{:7.2} – {:7.2}] {}",
                segment.start, segment.end, segment.text
            );
        }
    } else {
        println!("{}", transcript.text);
    }
    eprintln!(
        "{}: {:.2} s of audio, {language}, transcribed in {:.2} s",
        args.file.display(),
        audio.duration_seconds(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
