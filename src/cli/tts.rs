//! `sauti tts`: synthesise locally with a built-in voice, no server needed.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;

use sauti::audio;
use sauti::tts::voices::{BARAKA, ZURI};
use sauti::tts::{EmbeddedVoice, VoiceSettings};

use super::text::load_lexicon;

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
    /// Voice id: "zuri" (female, the TTS default) or "baraka" (male, the agent default).
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
}

pub fn run(args: TtsArgs) -> anyhow::Result<()> {
    let voice = match args.voice.as_str() {
        ZURI => EmbeddedVoice::zuri(),
        BARAKA => EmbeddedVoice::baraka(),
        other => bail!("unknown voice {other:?}; built-in voices are {ZURI:?} and {BARAKA:?}"),
    }
    .with_lexicon(load_lexicon(args.lexicon)?);
    let settings = VoiceSettings {
        speaking_rate: args.speaking_rate,
        noise_scale: args.noise_scale,
        noise_scale_duration: args.noise_scale_duration,
    };
    let text = match (&args.text, &args.file) {
        (Some(text), _) => text.clone(),
        (None, Some(file)) => std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?,
        (None, None) => bail!("give the text, or --file FILE"),
    };
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
