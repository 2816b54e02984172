//! `sauti serve` and `sauti keys`: run the service and manage its API keys.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use sauti::config::Settings;
use sauti::server::{self, new_key};
use sauti::storage::postgres::is_postgres_url;
use sauti::storage::usage::KeyLimits;
use sauti::storage::{check_key_name, Database, Storage, DATABASE_FILE};
use sauti::telemetry;

/// Where configuration comes from.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// A TOML file applied after config/default.toml, config/{RUN_MODE}.toml and config/local.toml and before
    /// SAUTI__SECTION__KEY environment variables.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

impl ConfigArgs {
    fn load(&self) -> anyhow::Result<Settings> {
        Ok(Settings::load(Path::new("config"), self.config.as_deref())?)
    }
}

/// Run the HTTP service.
pub fn serve(args: ConfigArgs) -> anyhow::Result<()> {
    let settings = args.load()?;
    telemetry::init(&settings.log);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let io_threads = settings.server.io_threads_for(cores);
    tracing::info!(cores, io_threads, "starting the async runtime");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(io_threads)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let served = runtime.block_on(server::serve(settings, |started| {
        if let Some(key) = &started.created_key {
            println!("development API key (shown once; only its hash is stored): {key}");
        }
        println!("sauti listening on http://{}", started.address);
    }));
    // Work still running on blocking threads (a decode, say) is not waited for: the grace period is over.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served?;
    Ok(())
}

/// `sauti keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create an API key and print it once (only its hash is stored). Creates the data directory's database
    /// when there is none yet; a running server accepts the key within about a second.
    ///
    /// Example: sauti keys create --name "bank pilot"
    Create {
        /// A label for the key: 1 to 64 characters, one line, no control characters (surrounding spaces are
        /// trimmed).
        #[arg(long, default_value = "unnamed")]
        name: String,
        #[command(flatten)]
        limits: LimitArgs,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Set a key's monthly limits (`none` takes one away). A running server applies them to its next request.
    ///
    /// Example: sauti keys update key_3f2a9c0d1b2e4f60 --character-limit 100000 --audio-seconds-limit none
    Update {
        /// The key id shown by `sauti keys list`.
        id: String,
        #[command(flatten)]
        limits: LimitArgs,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// What each key (or the one named) used this month, against its limits.
    ///
    /// Example: sauti keys usage key_3f2a9c0d1b2e4f60
    Usage {
        /// A key id; omitted: every key.
        id: Option<String>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// List keys (ids, names, dates; never the keys themselves). Fails when the data directory has no database.
    ///
    /// Example: sauti keys list
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Revoke a key by id; a running server stops accepting it within about a second. Fails when the data
    /// directory has no database.
    ///
    /// Example: sauti keys revoke key_3f2a9c0d1b2e4f60
    Revoke {
        /// The key id shown by `sauti keys list`.
        id: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
}

/// A key's monthly limits as given on the command line: a number, or `none` for no limit.
#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Characters the key may have synthesised per calendar month (UTC), or `none`.
    #[arg(long, value_parser = limit::<i64>)]
    character_limit: Option<Limit<i64>>,
    /// Seconds of audio the key may have recognised per calendar month (UTC), or `none`.
    #[arg(long, value_parser = limit::<f64>)]
    audio_seconds_limit: Option<Limit<f64>>,
}

/// A limit, or none.
#[derive(Debug, Clone, Copy)]
pub struct Limit<T>(Option<T>);

fn limit<T: std::str::FromStr + PartialOrd + Default>(text: &str) -> Result<Limit<T>, String> {
    if matches!(text, "none" | "unlimited") {
        return Ok(Limit(None));
    }
    match text.parse::<T>() {
        Ok(value) if value >= T::default() => Ok(Limit(Some(value))),
        _ => Err("a limit is a number of at least 0, or `none`".into()),
    }
}

impl LimitArgs {
    fn given(&self) -> bool {
        self.character_limit.is_some() || self.audio_seconds_limit.is_some()
    }

    /// `current` with the limits given laid over it.
    fn over(&self, current: KeyLimits) -> KeyLimits {
        KeyLimits {
            characters: self.character_limit.map_or(current.characters, |l| l.0),
            audio_seconds: self
                .audio_seconds_limit
                .map_or(current.audio_seconds, |l| l.0),
        }
    }
}

/// Run a keys command against the configured store.
pub fn keys(command: KeysCommand) -> anyhow::Result<()> {
    let config = match &command {
        KeysCommand::Create { config, .. }
        | KeysCommand::List { config }
        | KeysCommand::Update { config, .. }
        | KeysCommand::Usage { config, .. }
        | KeysCommand::Revoke { config, .. } => config,
    };
    let settings = config.load()?;
    if let KeysCommand::Create { name, .. } = &command {
        // Checked before anything is written, so a refused name leaves no trace.
        check_key_name(name).map_err(|why| anyhow::anyhow!("invalid --name: {why}"))?;
    }
    // Making a key is how a fresh data directory is set up, so only this command creates a SQLite database.
    let create = matches!(command, KeysCommand::Create { .. });
    block_on(async move {
        let db = open_store(&settings, create).await?;
        match command {
            KeysCommand::Create { name, limits, .. } => {
                let name = check_key_name(&name).map_err(|why| anyhow::anyhow!(why))?;
                let key = new_key();
                let record = db.insert_key(&name, &key).await?;
                if limits.given() {
                    db.set_key_limits(&record.id, &limits.over(KeyLimits::default()))
                        .await?;
                }
                println!("{key}");
                eprintln!(
                    "created {} ({}); the key is shown only now",
                    record.id, record.name
                );
            }
            KeysCommand::List { .. } => {
                for r in db.keys().await? {
                    let state = r
                        .revoked_at
                        .map_or("active".to_string(), |t| format!("revoked {t}"));
                    println!("{}\t{}\tcreated {}\t{state}", r.id, r.name, r.created_at);
                }
            }
            KeysCommand::Update { id, limits, .. } => {
                let current = db.key_limits(&id).await?;
                if !db.set_key_limits(&id, &limits.over(current)).await? {
                    anyhow::bail!("no key with id {id}");
                }
                eprintln!("updated {id}");
            }
            KeysCommand::Usage { id, .. } => {
                super::usage::print(db.as_ref(), id.as_deref()).await?;
            }
            KeysCommand::Revoke { id, .. } => {
                if !db.revoke_key(&id).await? {
                    anyhow::bail!("no active key with id {id}");
                }
                eprintln!("revoked {id}");
            }
        }
        db.close().await;
        Ok(())
    })
}

/// `sauti migrate`: bring the configured store's schema to this version, then stop.
pub fn migrate(args: ConfigArgs) -> anyhow::Result<()> {
    let settings = args.load()?;
    block_on(async move {
        let db = open_store(&settings, true).await?;
        db.close().await;
        eprintln!(
            "{} schema at version {}",
            db.engine(),
            sauti::storage::SCHEMA_VERSION
        );
        Ok(())
    })
}

fn block_on<T>(work: impl std::future::Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(work)
}

/// The configured store (migrated). A SQLite database that does not exist is made only when `create`; otherwise
/// the error says where it was looked for.
async fn open_store(settings: &Settings, create: bool) -> anyhow::Result<Storage> {
    let data_dir = &settings.storage.data_dir;
    if !create && !is_postgres_url(&settings.storage.url) {
        let file = data_dir.join(DATABASE_FILE);
        if !file.is_file() {
            let shown = std::path::absolute(&file).unwrap_or(file);
            anyhow::bail!(
                "no database at {}: run this where the service's data directory is, or set storage.data_dir \
                 (SAUTI__STORAGE__DATA_DIR); `sauti keys create` makes a new one",
                shown.display()
            );
        }
        return Ok(std::sync::Arc::new(Database::open_existing(data_dir)?));
    }
    Ok(sauti::storage::open(&settings.storage).await?)
}
