//! `sauti text normalize|phonemes`: the Swahili text front end, for scenario authors and lexicon editors.

use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use sauti::tts::g2p;
use sauti::tts::lexicon::Lexicon;
use sauti::tts::pronunciation;

#[derive(Debug, Subcommand)]
pub enum TextCommand {
    /// Print the text as the voice will read it (numbers, money, dates, times, phone numbers spelled out).
    ///
    /// Example: sauti text normalize "Salio lako ni TSh 12,500 tarehe 12/03/2025 saa 13:15."
    Normalize {
        /// The Swahili text.
        #[arg(allow_hyphen_values = true)]
        text: String,
        /// A lexicon file to use instead of the built-in config/lexicon.toml.
        #[arg(long)]
        lexicon: Option<PathBuf>,
        /// A pronunciation dictionary laid over the lexicon (JSON rules, W3C PLS or lexicon TOML); repeat it
        /// for several, later ones overriding earlier ones.
        #[arg(long = "dictionary", value_name = "FILE")]
        dictionaries: Vec<PathBuf>,
    },
    /// Print the phonemes (IPA), syllables (.), stress (ˈ) and phrase breaks (| ‖, ↗ for a question rise).
    ///
    /// Example: sauti text phonemes "Habari ya asubuhi? Nzuri sana."
    Phonemes {
        /// The Swahili text.
        #[arg(allow_hyphen_values = true)]
        text: String,
        /// A lexicon file to use instead of the built-in config/lexicon.toml.
        #[arg(long)]
        lexicon: Option<PathBuf>,
        /// A pronunciation dictionary laid over the lexicon (JSON rules, W3C PLS or lexicon TOML); repeat it
        /// for several, later ones overriding earlier ones.
        #[arg(long = "dictionary", value_name = "FILE")]
        dictionaries: Vec<PathBuf>,
    },
}

pub fn run(command: TextCommand) -> anyhow::Result<()> {
    match command {
        TextCommand::Normalize {
            text,
            lexicon,
            dictionaries,
        } => {
            let lexicon = with_dictionaries(load_lexicon(lexicon)?, &dictionaries)?;
            println!("{}", lexicon.normalize(&text));
        }
        TextCommand::Phonemes {
            text,
            lexicon,
            dictionaries,
        } => {
            let lexicon = with_dictionaries(load_lexicon(lexicon)?, &dictionaries)?;
            let normalized = lexicon.normalize(&text);
            println!("{}", g2p::transcribe(&normalized, &lexicon));
        }
    }
    Ok(())
}

/// `lexicon` with the rules of each dictionary file laid over it, in order.
pub fn with_dictionaries(mut lexicon: Lexicon, files: &[PathBuf]) -> anyhow::Result<Lexicon> {
    for file in files {
        let rules = pronunciation::file::load(file)?;
        pronunciation::apply(&mut lexicon, &rules).with_context(|| file.display().to_string())?;
    }
    Ok(lexicon)
}

/// The built-in lexicon, or a file given on the command line.
pub fn load_lexicon(path: Option<PathBuf>) -> anyhow::Result<Lexicon> {
    match path {
        None => Ok(Lexicon::embedded().clone()),
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            Lexicon::from_toml(&text).with_context(|| path.display().to_string())
        }
    }
}
