//! `sauti serve`: storage, keys, the actor graph and the HTTP server, with graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::actors::dialogue::DialogueArgs;

mod loops;
use loops::start_background;

use crate::actors::supervisor::Graph;
use crate::config::{ConfigError, Settings};
use crate::http::transport::auth::KeyRing;
use crate::http::transport::limits::RateLimits;
use crate::http::{front, AppState, Shared};
use crate::storage::StorageError;
use crate::tts::catalog::VoiceRegistry;

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Configuration refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Database or files.
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    /// A scenario file does not pass its checks.
    #[error("scenario {0}")]
    Scenario(#[from] crate::dialogue::ScenarioError),
    /// The actor graph would not start.
    #[error("cannot start the actor graph: {0}")]
    Actors(String),
    /// The listening socket.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The configured address.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("server error: {0}")]
    Serve(std::io::Error),
    /// An actor crashed more often than the restart budget allows.
    #[error(
        "the actor graph stopped: an actor failed more often than supervisor.max_restarts allows"
    )]
    GraphStopped,
}

/// What a caller learns once the server listens.
#[derive(Debug, Clone)]
pub struct Started {
    /// The bound address (useful with port 0).
    pub address: SocketAddr,
    /// A development key created on this start, to be shown once.
    pub created_key: Option<String>,
}

/// Run the service until SIGINT/SIGTERM (or the actor graph gives up). `on_start` runs once it listens.
pub async fn serve(
    mut settings: Settings,
    on_start: impl FnOnce(&Started),
) -> Result<(), ServeError> {
    crate::telemetry::metrics::install();
    let shutdown_requested = shutdown_signal().map_err(ServeError::Serve)?;
    // Bound first: without a configured public URL, problem `type` URLs name the address actually bound.
    let listener = TcpListener::bind(&settings.server.bind)
        .await
        .map_err(|source| ServeError::Bind {
            address: settings.server.bind.clone(),
            source,
        })?;
    let address = listener.local_addr().map_err(ServeError::Serve)?;
    if settings.server.public_base_url.is_empty() {
        settings.server.public_base_url = format!("http://{address}");
    }
    let settings = Arc::new(settings);
    let db = crate::storage::open(&settings.storage).await?;
    let artifacts = crate::storage::blobs::open(&settings.storage)?;
    if db.shared() && artifacts.engine() == "local" {
        tracing::warn!(
            data_dir = %settings.storage.data_dir.display(),
            "storage.url is shared but job audio is kept on this machine: replicas sharing the database must \
             share storage.blobs_url (an object store) or this folder, or a job run by one cannot be downloaded \
             from another"
        );
    }
    if !db.shared() && !settings.limits.redis_url.is_empty() {
        tracing::warn!(
            "limits.redis_url is shared but storage.url is this machine's own: a key's id, which its limits and \
             realtime seats are counted under, is keyed by the store's secret, so replicas sharing Redis must \
             share storage.url too, or each counts its keys apart"
        );
    }
    let secret = db.key_secret().await?;
    let adopted =
        crate::storage::adopt_earlier_key_ids(db.as_ref(), &secret, &settings.auth.api_keys)
            .await?;
    if adopted > 0 {
        tracing::info!(
            adopted,
            "data kept under earlier key ids handed to the keys' current ids"
        );
    }
    let created_key = ensure_a_key(&settings, db.as_ref()).await?;
    let keys = KeyRing::new(&settings.auth.api_keys, &secret);
    keys.refresh(db.as_ref()).await?;

    let lexicon = server_lexicon(&settings)?;
    let voices = Arc::new(VoiceRegistry::from_settings(&settings, &lexicon));
    for (key, voice) in [
        ("tts.default_voice", &settings.tts.default_voice),
        ("tts.agent_voice", &settings.tts.agent_voice),
    ] {
        if voices.get(voice).is_none() {
            return Err(ConfigError::Invalid {
                key,
                problem: format!("names an unknown voice {voice:?}"),
            }
            .into());
        }
    }
    restore_cloned_voices(db.as_ref(), &voices).await?;
    let webhooks = crate::webhooks::Webhooks::new(db.clone(), settings.webhooks.clone());
    let records = crate::records::Records::new(
        db.clone(),
        Arc::clone(&artifacts),
        settings.records.clone(),
        webhooks,
    );
    let dialogue = DialogueArgs::from_settings(&settings.dialogue, &db, records.clone())?;
    let recognizer = {
        let settings = Arc::clone(&settings);
        tokio::task::spawn_blocking(move || crate::asr::load(&settings))
            .await
            .unwrap_or_else(|_| Err("loading the speech recognition model failed".into()))
    };
    let recognition = Arc::new(crate::asr::served(&recognizer));
    let (graph, supervisor) = Graph::start(
        &settings,
        Arc::clone(&voices),
        recognizer,
        dialogue,
        db.clone(),
        artifacts,
    )
    .await
    .map_err(|e| ServeError::Actors(e.to_string()))?;

    let limits =
        RateLimits::from_settings(&settings.limits).map_err(|problem| ConfigError::Invalid {
            key: "limits.redis_url",
            problem,
        })?;
    let limits = Arc::new(limits);
    let seats = crate::actors::realtime::Seats::new(
        settings.realtime.max_sessions_per_key,
        settings.realtime.max_sessions,
    );
    let speech_sockets = crate::actors::realtime::Seats::new(
        settings.realtime.max_speech_sockets_per_key,
        settings.realtime.max_speech_sockets,
    );
    let background = start_background(
        keys.clone(),
        db.clone(),
        Arc::clone(&limits),
        Arc::clone(&voices),
        [Arc::clone(&seats), Arc::clone(&speech_sockets)],
        graph.jobs.waker(),
        records.clone(),
    );
    let turns = crate::turns::TurnModels::load(&settings.turns, &settings.models)
        .map_err(|(key, problem)| ConfigError::Invalid { key, problem })?;
    let stopping = tokio_util::sync::CancellationToken::new();
    let ops = crate::ops::Service {
        settings: Arc::clone(&settings),
        voices: Arc::clone(&voices),
        graph: graph.clone(),
        dictionaries: crate::dictionaries::Dictionaries::new(
            db.clone(),
            Arc::clone(voices.lexicon()),
            settings.tts.max_dictionaries_per_key,
        ),
        decoders: Arc::new(tokio::sync::Semaphore::new(
            std::thread::available_parallelism().map_or(2, |n| n.get()),
        )),
        seats,
        speech_sockets,
        stopping: stopping.clone(),
        db: db.clone(),
        recognition,
        calls: Arc::new(crate::telephony::twilio::TwilioCalls::new(
            &settings.telephony,
        )),
        records,
        turns: Arc::new(turns),
    };
    let state = AppState::new(Shared {
        ops,
        keys: keys.clone(),
        limits: Arc::clone(&limits),
    });
    let app = front(state, keys, limits);

    tracing::info!(%address, data_dir = %settings.storage.data_dir.display(), "sauti listening");
    on_start(&Started {
        address,
        created_key,
    });

    let (graph_stopped_tx, graph_stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let watcher = tokio::spawn(async move {
        let _ = supervisor.await;
        let _ = graph_stopped_tx.send(());
    });
    let graph_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failed = Arc::clone(&graph_failed);
    let shutdown = async move {
        tokio::select! {
            _ = shutdown_requested => tracing::info!("shutdown requested"),
            _ = graph_stopped_rx => {
                failed.store(true, std::sync::atomic::Ordering::SeqCst);
                tracing::error!("actor graph stopped");
            }
        }
        // Realtime sockets are no longer the server's connections once upgraded: they are told to go.
        stopping.cancel();
    };
    let server = &settings.server;
    let limits = crate::http::transport::listen::ConnectionLimits {
        header_timeout: Duration::from_secs(server.header_timeout_seconds),
        idle_timeout: Duration::from_secs(server.idle_timeout_seconds),
        write_timeout: Duration::from_secs(server.write_timeout_seconds),
        max_connections: server.max_connections,
        shutdown_grace: Duration::from_secs(server.shutdown_grace_seconds),
    };
    let result = crate::http::transport::listen::serve(listener, app, limits, shutdown).await;

    background.stop().await;
    if db.shared() {
        // Other replicas take the running jobs up now rather than after their leases lapse; what this one
        // still finishes meanwhile is fenced out.
        match db.release_jobs().await {
            Ok(0) => {}
            Ok(released) => {
                tracing::info!(released, "running jobs handed back to the other replicas")
            }
            Err(error) => {
                tracing::warn!(%error, "running jobs not handed back; their leases will lapse")
            }
        }
    }
    graph.stop();
    // Give running jobs' actors a moment to stop; anything still running is queued again at the next start.
    let _ = tokio::time::timeout(Duration::from_secs(5), watcher).await;
    if !db.shared() {
        // Queued again now, as stopped by request: the next start does not count this stop against them (a job
        // the process stops under twice, by a crash, is failed rather than run again).
        match db.release_jobs().await {
            Ok(0) => {}
            Ok(released) => {
                tracing::info!(released, "running jobs queued again for the next start")
            }
            Err(error) => {
                tracing::warn!(%error, "running jobs not queued again; the next start does it")
            }
        }
    }
    db.close().await;
    tracing::info!("sauti stopped");
    result.map_err(ServeError::Serve)?;
    if graph_failed.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(ServeError::GraphStopped);
    }
    Ok(())
}

/// With no configured key and none stored, create one development key (only its hash is kept).
async fn ensure_a_key(
    settings: &Settings,
    db: &dyn crate::storage::Store,
) -> Result<Option<String>, StorageError> {
    if !settings.auth.api_keys.is_empty() || db.any_key().await? {
        return Ok(None);
    }
    let key = new_key();
    db.insert_key("development", &key).await?;
    Ok(Some(key))
}

/// A fresh random API key.
pub fn new_key() -> String {
    let bytes: [u8; 24] = rand::random();
    format!(
        "sk_sauti_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Install the SIGINT and SIGTERM handlers now and return a future that completes on the first of them. Installing
/// them before the service announces itself means a signal can never find the process still on the default action
/// (which ends it at once, without the graceful stop): a signal that arrives during start-up is kept and ends the
/// service as soon as it listens.
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// The shipped lexicon with the operator's `tts.lexicon_path` laid over it; a file that does not read stops
/// start-up with the line or rule at fault.
fn server_lexicon(settings: &Settings) -> Result<crate::tts::lexicon::Lexicon, ConfigError> {
    use crate::tts::{lexicon::Lexicon, pronunciation};
    let path = &settings.tts.lexicon_path;
    if path.as_os_str().is_empty() {
        return Ok(Lexicon::embedded().clone());
    }
    let invalid = |problem: String| ConfigError::Invalid {
        key: "tts.lexicon_path",
        problem,
    };
    let rules = pronunciation::file::load(path).map_err(|e| invalid(e.to_string()))?;
    let lexicon = pronunciation::layered(Lexicon::embedded(), &rules)
        .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    tracing::info!(path = %path.display(), rules = rules.len(), "server lexicon loaded");
    Ok(lexicon)
}

/// Publish the stored cloned voices (each to its owner) before the server answers.
async fn restore_cloned_voices(
    db: &dyn crate::storage::Store,
    voices: &VoiceRegistry,
) -> Result<(), ServeError> {
    let lexicon = voices.lexicon();
    let records = db.voices().await?;
    for record in &records {
        if let Err(why) = crate::clone::publish(record, voices, lexicon) {
            tracing::error!(%why, "cloned voice not restored");
        }
    }
    if !records.is_empty() {
        tracing::info!(voices = records.len(), "cloned voices restored");
    }
    Ok(())
}
