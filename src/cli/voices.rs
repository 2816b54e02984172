//! `sauti voices`: list voices, or measure how alike two recordings' speakers sound.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};

use super::client;
use sauti::clone::{profile, speaker};

/// `sauti voices [similarity REF OUT]`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Voices {
    #[command(subcommand)]
    command: Option<VoicesCommand>,
    #[command(flatten)]
    list: client::VoicesArgs,
}

#[derive(Debug, Subcommand)]
enum VoicesCommand {
    /// How alike the speakers of two recordings sound: the cosine similarity of their speaker embeddings
    /// (the speech of each, by the configured speaker encoder, `clone.speaker_encoder`), from −1 to 1; the
    /// same measure a new cloned voice reports against its reference.
    ///
    /// Example: sauti voices similarity reference.wav cloned.wav
    Similarity {
        /// The first recording (any format the service decodes).
        reference: PathBuf,
        /// The second recording.
        other: PathBuf,
        /// Print JSON (`{"similarity": …}`).
        #[arg(long)]
        json: bool,
    },
}

/// Run `sauti voices`.
pub fn run(args: Voices) -> anyhow::Result<()> {
    match args.command {
        None => client::voices(args.list),
        Some(VoicesCommand::Similarity {
            reference,
            other,
            json,
        }) => similarity(&reference, &other, json),
    }
}

fn similarity(reference: &PathBuf, other: &PathBuf, json: bool) -> anyhow::Result<()> {
    let settings = sauti::config::Settings::load(std::path::Path::new("config"), None)?;
    let configured = &settings.clone.speaker_encoder;
    if configured.as_os_str().is_empty() {
        bail!("no speaker encoder is configured (clone.speaker_encoder)");
    }
    let path = settings.models.dir.join(configured);
    let encoder = speaker::SpeakerEncoder::load(&path, &settings.models).with_context(|| {
        format!(
            "the speaker encoder is not installed: sauti models fetch speaker-resnet34 ({})",
            path.display()
        )
    })?;
    let embed = |file: &PathBuf| -> anyhow::Result<Vec<f32>> {
        let bytes =
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        let audio = sauti::audio::load_16k(&bytes, &Default::default())
            .with_context(|| format!("{} is not audio the service can decode", file.display()))?;
        let speech = profile::speech_only(&audio.samples);
        if speech.len() < 16_000 / 2 {
            bail!(
                "{} holds too little speech (under half a second)",
                file.display()
            );
        }
        encoder
            .embed(&speech)
            .map_err(|why| anyhow::anyhow!("{}: {why}", file.display()))
    };
    let score = speaker::cosine(&embed(reference)?, &embed(other)?);
    match json {
        true => println!(
            "{}",
            serde_json::json!({ "similarity": (score * 1000.0).round() / 1000.0 })
        ),
        false => println!("similarity {score:.3}"),
    }
    Ok(())
}
