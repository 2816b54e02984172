//! `sauti stt`: transcribe an audio file in-process with the configured recognition models, no server needed; and
//! `sauti stt eval`: measure them on a manifest of recordings with reference transcripts.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

use sauti::asr::{DEFAULT_LANGUAGE, LANGUAGES};
use sauti::audio::{self, DecodeLimits};
use sauti::config::Settings;

/// Transcribe speech in an audio file, or measure recognition on a manifest (`sauti stt eval`).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SttArgs {
    #[command(subcommand)]
    eval: Option<SttCommand>,
    /// The audio file: WAV, MP3, FLAC, Ogg (Vorbis or Opus) or WebM, any rate and channel count.
    #[arg(required = true)]
    file: Option<PathBuf>,
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

/// `sauti stt eval`.
#[derive(Debug, Subcommand)]
pub enum SttCommand {
    /// Word and character error rates and the real-time factor of recognition on recordings with reference
    /// transcripts, per file and overall. References and transcripts are compared after one normalisation: lower
    /// case, numbers and symbols read out by sauti's text normaliser, punctuation dropped.
    ///
    /// MANIFEST: a Common Voice `test.tsv` (audio in clips/ beside it), a FLEURS `test.tsv` (audio in
    /// audio/test/ beside it) or a tab-separated file with the header `audio<TAB>text`.
    ///
    /// Example: sauti stt eval cv-corpus/sw/test.tsv --language sw
    Eval(super::stt_eval::EvalArgs),
    /// Which engine and model recognise each language, and whether that model is installed: `[[asr.ctc]]`
    /// models for their languages while installed, Whisper for the rest.
    ///
    /// Example: sauti stt routes --config production.toml
    Routes {
        /// A configuration file (as `serve --config`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

pub fn run(args: SttArgs) -> anyhow::Result<()> {
    match args.eval {
        Some(SttCommand::Eval(eval)) => return super::stt_eval::run(eval),
        Some(SttCommand::Routes { config }) => return routes(config.as_deref()),
        None => {}
    }
    let file = args.file.context("name an audio file")?;
    let language = checked_language(&args.language)?;
    let settings = settings_with(args.config.as_deref(), args.model)?;
    let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let audio = audio::load_16k(&bytes, &DecodeLimits::default())
        .with_context(|| format!("{} cannot be decoded", file.display()))?;
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
        file.display(),
        audio.duration_seconds(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The language code in lower case, when it is one of the API's.
pub fn checked_language(given: &str) -> anyhow::Result<String> {
    let language = given.to_ascii_lowercase();
    if !LANGUAGES.contains(&language.as_str()) {
        bail!(
            "unsupported language {language:?}; use one of {}",
            LANGUAGES.join(", ")
        );
    }
    Ok(language)
}

/// The settings of `config`, with `model` as the Whisper model when given.
pub fn settings_with(
    config: Option<&std::path::Path>,
    model: Option<PathBuf>,
) -> anyhow::Result<Settings> {
    let mut settings = Settings::load(std::path::Path::new("config"), config)?;
    if let Some(model) = model {
        settings.asr.model = std::path::absolute(&model).unwrap_or(model);
    }
    Ok(settings)
}

/// `sauti stt routes`.
fn routes(config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let settings = settings_with(config, None)?;
    let routed = sauti::asr::routing::Routed::load(&settings);
    println!("language  engine   installed  model");
    for route in routed.routes(&LANGUAGES, &settings) {
        let installed = if route.available { "yes" } else { "no" };
        println!(
            "{:<9} {:<8} {installed:<10} {}",
            route.language, route.engine, route.model
        );
    }
    Ok(())
}
