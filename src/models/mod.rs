//! Model files and ONNX Runtime: the runtime library is loaded once, every session is built here (graph
//! optimisation and threads from `[models]`), and [`catalog`] / [`fetch`] / [`import`]
//! install the models people publish.
//!
//! Nothing here downloads at build time: `ort` is built with `load-dynamic`, and the shared library comes from the
//! PyPI `onnxruntime` wheel (`onnxruntime/capi/libonnxruntime.so.<version>`), named by `models.onnxruntime` or the
//! `ORT_DYLIB_PATH` environment variable.

pub mod archive;
pub mod batch;
pub mod catalog;
pub mod fetch;
pub mod import;
pub mod pool;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ort::environment::Environment;
use ort::logging::LogLevel;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use serde::{Deserialize, Serialize};

pub use pool::SessionPool;

/// The ONNX Runtime release the project's scripts install and test against.
pub const ONNXRUNTIME_VERSION: &str = "1.32.0";

/// `[models]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSettings {
    /// Where `sauti models fetch` installs models; relative model paths of voices are read from here.
    pub dir: PathBuf,
    /// The ONNX Runtime shared library (`libonnxruntime.so.*`). Empty: the `ORT_DYLIB_PATH` environment variable.
    pub onnxruntime: PathBuf,
    /// Threads one session uses for one operator; 0: all the machine's cores (a lone request uses them all;
    /// concurrent sessions share them, which costs little with spinning off).
    pub intra_threads: usize,
    /// Threads that run independent operators at once (1 runs the graph sequentially).
    pub inter_threads: usize,
    /// Graph optimisation: `disable`, `basic`, `extended` or `all`.
    pub optimization: Optimization,
    /// Whether idle ONNX Runtime threads busy-wait for the next operator (faster alone, slower when sessions share
    /// cores).
    pub spinning: bool,
}

impl Default for ModelSettings {
    fn default() -> Self {
        Self {
            dir: PathBuf::from("models"),
            onnxruntime: PathBuf::new(),
            intra_threads: 0,
            inter_threads: 1,
            optimization: Optimization::All,
            spinning: false,
        }
    }
}

/// ONNX Runtime graph optimisation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimization {
    /// No rewriting.
    Disable,
    /// Constant folding and redundant-node removal.
    Basic,
    /// Basic plus operator fusions.
    Extended,
    /// Everything, including layout changes.
    All,
}

impl Optimization {
    fn level(self) -> GraphOptimizationLevel {
        match self {
            Optimization::Disable => GraphOptimizationLevel::Disable,
            Optimization::Basic => GraphOptimizationLevel::Level1,
            Optimization::Extended => GraphOptimizationLevel::Level2,
            Optimization::All => GraphOptimizationLevel::All,
        }
    }
}

/// Why a model cannot be used.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// The ONNX Runtime library is not configured or could not be loaded.
    #[error("ONNX Runtime is not available ({0}); install it with `pip install onnxruntime=={ONNXRUNTIME_VERSION}` and set models.onnxruntime (or ORT_DYLIB_PATH) to its onnxruntime/capi/libonnxruntime.so.{ONNXRUNTIME_VERSION}")]
    Runtime(String),
    /// A file the model needs is missing.
    #[error("model file {path} is missing")]
    Missing {
        /// The file looked for.
        path: PathBuf,
    },
    /// The files are there but not usable.
    #[error("{path}: {problem}")]
    Invalid {
        /// The offending file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

impl ModelError {
    /// An [`ModelError::Invalid`] for `path`.
    pub fn invalid(path: &Path, problem: impl std::fmt::Display) -> Self {
        ModelError::Invalid {
            path: path.to_path_buf(),
            problem: problem.to_string(),
        }
    }
}

static RUNTIME: OnceLock<Result<Environment, String>> = OnceLock::new();

/// The process-wide ONNX Runtime environment, loading the library on first use. The first caller's path wins for
/// the life of the process (ONNX Runtime cannot be unloaded).
pub fn runtime(settings: &ModelSettings) -> Result<&'static Environment, ModelError> {
    RUNTIME
        .get_or_init(|| {
            let library = library_path(settings)?;
            if !library.is_file() {
                return Err(format!("{} does not exist", library.display()));
            }
            let environment = ort::init_from(&library)
                .map_err(|e| format!("{}: {e}", library.display()))?
                .with_name("sauti")
                .with_logger(std::sync::Arc::new(runtime_log))
                .build()
                .map_err(|e| format!("{}: {e}", library.display()))?;
            environment.set_log_level(runtime_log_level());
            tracing::info!(library = %library.display(), "ONNX Runtime loaded");
            Ok(environment)
        })
        .as_ref()
        .map_err(|e| ModelError::Runtime(e.clone()))
}

/// The `tracing` target ONNX Runtime's own messages are logged under (e.g. `RUST_LOG=info,onnxruntime=debug`).
pub const RUNTIME_LOG_TARGET: &str = "onnxruntime";

/// One message of ONNX Runtime's, into our log: its chatter (verbose, info) at `trace` / `debug`, so that an
/// `info` log stays readable; warnings and errors at their own level.
fn runtime_log(level: LogLevel, category: &str, id: &str, location: &str, message: &str) {
    match level {
        LogLevel::Verbose => {
            tracing::trace!(target: RUNTIME_LOG_TARGET, category, id, location, "{message}")
        }
        LogLevel::Info => {
            tracing::debug!(target: RUNTIME_LOG_TARGET, category, id, location, "{message}")
        }
        LogLevel::Warning => {
            tracing::warn!(target: RUNTIME_LOG_TARGET, category, id, location, "{message}")
        }
        LogLevel::Error | LogLevel::Fatal => {
            tracing::error!(target: RUNTIME_LOG_TARGET, category, id, location, "{message}")
        }
    }
}

/// The least severe ONNX Runtime message our log filter would keep, so that the runtime does not format
/// messages only to have them dropped.
fn runtime_log_level() -> LogLevel {
    if tracing::enabled!(target: RUNTIME_LOG_TARGET, tracing::Level::TRACE) {
        LogLevel::Verbose
    } else if tracing::enabled!(target: RUNTIME_LOG_TARGET, tracing::Level::DEBUG) {
        LogLevel::Info
    } else if tracing::enabled!(target: RUNTIME_LOG_TARGET, tracing::Level::WARN) {
        LogLevel::Warning
    } else {
        LogLevel::Error
    }
}

/// Where the ONNX Runtime library is expected.
pub fn library_path(settings: &ModelSettings) -> Result<PathBuf, String> {
    if !settings.onnxruntime.as_os_str().is_empty() {
        return Ok(settings.onnxruntime.clone());
    }
    match std::env::var_os("ORT_DYLIB_PATH") {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => Err("neither models.onnxruntime nor ORT_DYLIB_PATH names the library".into()),
    }
}

/// Threads per session: the configured count, or every core.
pub fn intra_threads(settings: &ModelSettings) -> usize {
    if settings.intra_threads > 0 {
        return settings.intra_threads;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Build a session for `path` — the one place sessions are made.
pub fn session(
    path: &Path,
    settings: &ModelSettings,
    intra_threads: usize,
) -> Result<Session, ModelError> {
    let environment = runtime(settings)?;
    if !path.is_file() {
        return Err(ModelError::Missing {
            path: path.to_path_buf(),
        });
    }
    let fail = |e: &dyn std::fmt::Display| ModelError::invalid(path, e);
    Session::builder(environment)
        .map_err(|e| fail(&e))?
        .with_optimization_level(settings.optimization.level())
        .map_err(|e| fail(&e))?
        .with_intra_threads(intra_threads)
        .map_err(|e| fail(&e))?
        .with_inter_threads(settings.inter_threads.max(1))
        .map_err(|e| fail(&e))?
        .with_intra_op_spinning(settings.spinning)
        .map_err(|e| fail(&e))?
        .with_inter_op_spinning(settings.spinning)
        .map_err(|e| fail(&e))?
        .commit_from_file(path)
        .map_err(|e| fail(&e))
}
