//! `sauti tts`: synthesise locally, no server needed: a built-in voice, or a configured neural voice run
//! in-process through ONNX Runtime.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;

use sauti::audio;
use sauti::config::Settings;
use sauti::tts::catalog::load_configured;
use sauti::tts::voices::{BARAKA, ZURI};
use sauti::tts::{EmbeddedVoice, VoiceSettings};

use super::text::{load_lexicon, with_dictionaries};

/// Synthesise Swahili text to a 16 kHz mono WAV file.
#[derive(Debug, Args)]
pub struct TtsArgs {
    /// The Swahili text (numbers, money, dates and times are read out).
    #[arg(
        allow_hyphen_values = true,
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    text: Option<String>,
    /// Read the text from a file instead (a progress bar follows the sentences on a terminal).
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// Where to write the WAV file.
    #[arg(short, long)]
    output: PathBuf,
    /// Voice id: "zuri" (female, the TTS default), "baraka" (male, the agent default), or a neural voice of
    /// the configuration's [[tts.voices]] (e.g. "mms-swh" once `sauti models fetch mms-tts-swh` installed it).
    #[arg(long, default_value = ZURI)]
    voice: String,
    /// Tempo: 2.0 speaks in about half the time (0.25–4.0).
    #[arg(long, default_value_t = 1.0)]
    speaking_rate: f32,
    /// Liveliness of pitch and loudness (0.0–2.0).
    #[arg(long, default_value_t = 0.667)]
    noise_scale: f32,
    /// Variation of sound durations (0.0–2.0).
    #[arg(long, default_value_t = 0.8)]
    noise_scale_duration: f32,
    /// Seed of the prosodic variation; the same seed always gives the same audio.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A lexicon file to use instead of the built-in config/lexicon.toml.
    #[arg(long)]
    lexicon: Option<PathBuf>,
    /// A pronunciation dictionary laid over the lexicon (JSON rules, W3C PLS or lexicon TOML); repeatable.
    #[arg(long = "dictionary", value_name = "FILE")]
    dictionaries: Vec<PathBuf>,
    /// A configuration file (as `serve --config`) declaring neural voices and where models live.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(args: TtsArgs) -> anyhow::Result<()> {
    let lexicon = with_dictionaries(load_lexicon(args.lexicon.clone())?, &args.dictionaries)?;
    let voice = match args.voice.as_str() {
        ZURI => EmbeddedVoice::zuri(),
        BARAKA => EmbeddedVoice::baraka(),
        other => return neural(&args, other, &lexicon),
    }
    .with_lexicon(lexicon);
    let settings = VoiceSettings {
        speaking_rate: args.speaking_rate,
        noise_scale: args.noise_scale,
        noise_scale_duration: args.noise_scale_duration,
    };
    let text = text_of(&args)?;
    let bar = indicatif::ProgressBar::new(0);
    if std::io::stderr().is_terminal() && args.file.is_some() {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:40}] {pos}/{len} sentences {elapsed}",
            )?
            .progress_chars("=> "),
        );
        bar.set_message("synthesising");
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let samples = voice.synthesize_reporting(&text, &settings, args.seed, |done, all| {
        bar.set_length(all as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    std::fs::write(&args.output, audio::encode_wav_16k(&samples))
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!(
        "{}: {:.2} s of audio, voice {}",
        args.output.display(),
        samples.len() as f64 / f64::from(audio::SAMPLE_RATE),
        args.voice
    );
    Ok(())
}

fn text_of(args: &TtsArgs) -> anyhow::Result<String> {
    match (&args.text, &args.file) {
        (Some(text), _) => Ok(text.clone()),
        (None, Some(file)) => {
            std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
        }
        (None, None) => bail!("give the text, or --file FILE"),
    }
}

/// A configured neural voice, loaded and run in-process.
fn neural(
    args: &TtsArgs,
    voice_id: &str,
    lexicon: &sauti::tts::lexicon::Lexicon,
) -> anyhow::Result<()> {
    let config = Settings::load(std::path::Path::new("config"), args.config.as_deref())?;
    let synthesizer = match load_configured(&config, voice_id, lexicon) {
        None => {
            let neural: Vec<&str> = config.tts.voices.iter().map(|v| v.id.as_str()).collect();
            bail!(
                "unknown voice {voice_id:?}; voices are {ZURI:?}, {BARAKA:?}{}",
                neural
                    .iter()
                    .map(|id| format!(", {id:?}"))
                    .collect::<String>()
            )
        }
        Some(Err(reason)) => bail!("voice {voice_id:?} is inactive: {reason}"),
        Some(Ok(synthesizer)) => synthesizer,
    };
    let settings = VoiceSettings {
        speaking_rate: args.speaking_rate,
        noise_scale: args.noise_scale,
        noise_scale_duration: args.noise_scale_duration,
    };
    let samples = synthesizer.synthesize(&text_of(args)?, &settings)?;
    std::fs::write(&args.output, audio::encode_wav_16k(&samples))
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!(
        "{}: {:.2} s of audio, voice {voice_id} ({})",
        args.output.display(),
        samples.len() as f64 / f64::from(audio::SAMPLE_RATE),
        synthesizer.engine()
    );
    Ok(())
}
