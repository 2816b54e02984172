//! Logging (`tracing` with structured fields, a `RUST_LOG`-style filter, text or JSON lines on stderr) and
//! [`metrics`] for Prometheus.

pub mod labels;
pub mod metrics;

use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, LogSettings};

/// Install the global subscriber (once; later calls are ignored). `RUST_LOG` overrides the configured filter.
pub fn init(settings: &LogSettings) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.filter));
    // Colours only for a person at a terminal: a log file or collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = match settings.format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
