//! `sauti models list|fetch`: the model catalog and its installer.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use sauti::models::catalog::Catalog;
use sauti::models::fetch::{fetch, installed, FetchOptions};

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
            println!(
                "installed {} into {} (licence {})",
                model.name,
                places.dir.join(&model.dir).display(),
                model.licence
            );
            for file in &done.files {
                println!(
                    "  {:<40} {:>12} bytes  sha256 {}",
                    file.path, file.size, file.sha256
                );
            }
            if let Some(next) = &model.after_fetch {
                println!("next: {next}");
            }
            Ok(())
        }
    }
}
