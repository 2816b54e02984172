//! `sauti models list|fetch|import`: the model catalog and its installers.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use sauti::models::catalog::Catalog;
use sauti::models::catalog::CatalogModel;
use sauti::models::fetch::{fetch, installed, FetchOptions, Installed};
use sauti::models::import::{check_folder, entry_for, import, Imported};

/// Where the catalog and the models folder are.
#[derive(Debug, Args)]
pub struct Places {
    /// The models folder (models.dir).
    #[arg(long, default_value = "models")]
    dir: PathBuf,
    /// A catalog file instead of the one shipped with sauti.
    #[arg(long)]
    catalog: Option<PathBuf>,
}

/// `sauti models …`
#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// List the fetchable models, their licences and whether they are installed.
    ///
    /// Example: sauti models list
    List(Places),
    /// Download, verify (sha256) and install a model; an interrupted download resumes when run again.
    ///
    /// Example: sauti models fetch piper-sw-lanfrica --dir models
    Fetch {
        /// The catalog name (see `sauti models list`).
        name: String,
        #[command(flatten)]
        places: Places,
    },
    /// Install a model from a folder obtained elsewhere, or from a Python wheel that carries it (no internet
    /// needed): every file the catalog entry lists is checked (size and sha256 where the catalog gives them)
    /// and the model is installed whole or not at all, where `fetch` would have put it.
    ///
    /// Examples: sauti models import /media/usb/whisper-base --dir models;
    /// sauti models import pipecat_ai-1.14.0-py3-none-any.whl --name smart-turn-v3
    Import {
        /// The model folder, laid out as installed (e.g. `onnx/encoder_model.onnx`), or a zip archive (a wheel)
        /// holding the files; unpack other archives first.
        path: PathBuf,
        /// The catalog entry it is; default: the entry named like the folder.
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        places: Places,
    },
}

fn catalog(places: &Places) -> anyhow::Result<Catalog> {
    Ok(match &places.catalog {
        Some(path) => Catalog::read(path)?,
        None => Catalog::embedded(),
    })
}

/// Run a `models` command.
pub fn run(command: ModelsCommand) -> anyhow::Result<()> {
    match command {
        ModelsCommand::List(places) => {
            let catalog = catalog(&places)?;
            println!(
                "{:<20} {:<8} {:<13} {:<10} description",
                "name", "kind", "licence", "installed"
            );
            for model in &catalog.models {
                let state = if installed(model, &places.dir).is_some() {
                    "yes"
                } else {
                    "no"
                };
                println!(
                    "{:<20} {:<8} {:<13} {:<10} {}",
                    model.name, model.kind, model.licence, state, model.description
                );
            }
            Ok(())
        }
        ModelsCommand::Fetch { name, places } => {
            let catalog = catalog(&places)?;
            let model = catalog.get(&name).with_context(|| {
                let names: Vec<&str> = catalog.models.iter().map(|m| m.name.as_str()).collect();
                format!(
                    "no model {name:?} in the catalog; known: {}",
                    names.join(", ")
                )
            })?;
            let options = FetchOptions {
                dir: places.dir.clone(),
                progress: std::io::stderr().is_terminal(),
                retries: 5,
            };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let done = runtime.block_on(fetch(model, &options))?;
            report("installed", model, &places, &done);
            Ok(())
        }
        ModelsCommand::Import { path, name, places } => {
            check_folder(&path)?;
            let catalog = catalog(&places)?;
            let model = entry_for(&catalog, &path, name.as_deref()).map_err(anyhow::Error::msg)?;
            match import(model, &path, &places.dir)? {
                Imported::Installed(done) => report("imported", model, &places, &done),
                Imported::AlreadyInstalled(done) => {
                    report("already installed", model, &places, &done)
                }
            }
            Ok(())
        }
    }
}

/// What was installed, file by file, and what to run next.
fn report(verb: &str, model: &CatalogModel, places: &Places, done: &Installed) {
    println!(
        "{verb} {} into {} (licence {})",
        model.name,
        places.dir.join(&model.dir).display(),
        model.licence
    );
    for file in &done.files {
        let unchecked = model
            .files
            .iter()
            .any(|f| f.path == file.path && f.sha256.is_none());
        let note = if unchecked {
            "  (the catalog has no sha256 for it)"
        } else {
            ""
        };
        println!(
            "  {:<40} {:>12} bytes  sha256 {}{note}",
            file.path, file.size, file.sha256
        );
    }
    if let Some(next) = &model.after_fetch {
        println!("next: {next}");
    }
}
