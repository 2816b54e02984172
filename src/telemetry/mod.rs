//! Logging (`tracing` with structured fields, a `RUST_LOG`-style filter, text or JSON lines on stderr, the request
//! id on every line written for a request) and
//! [`metrics`] for Prometheus.

pub mod labels;
pub mod metrics;
pub mod request_scope;
pub mod usage;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::config::{LogFormat, LogSettings};
use request_scope::{Style, WithRequestId};

/// Install the global subscriber (once; later calls are ignored). `RUST_LOG` overrides the configured filter
/// (an invalid `RUST_LOG` is ignored).
pub fn init(settings: &LogSettings) {
    let directives = std::env::var("RUST_LOG")
        .ok()
        .filter(|d| !d.trim().is_empty() && EnvFilter::try_new(d).is_ok())
        .unwrap_or_else(|| settings.filter.clone());
    // Plain `target=level` lists are decided once per call site; only directives that name spans or fields
    // (`[span{field}]`) need `EnvFilter`, which looks at every span as requests enter and leave it.
    match directives.parse::<Targets>() {
        Ok(targets) if !directives.contains('[') => install(targets, settings.format),
        _ => install(EnvFilter::new(&directives), settings.format),
    }
}

fn install<F: Layer<Registry> + Send + Sync + 'static>(filter: F, format: LogFormat) {
    // Colours only for a person at a terminal: a log file or collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    // The WebSocket library writes whole frames at `trace` (a caller's typed PIN among them), past the masking
    // every line of sauti's own applies: nothing of it reaches a log, whatever the filter asks for.
    let frames_unlogged = Targets::new()
        .with_default(tracing::level_filters::LevelFilter::TRACE)
        .with_target("tungstenite", tracing::level_filters::LevelFilter::OFF)
        .with_target(
            "tokio_tungstenite",
            tracing::level_filters::LevelFilter::OFF,
        );
    let registry = tracing_subscriber::registry()
        .with(filter)
        .with(frames_unlogged);
    let _ = match format {
        LogFormat::Json => registry
            .with(
                layer
                    .json()
                    .flatten_event(true)
                    .map_event_format(|inner| WithRequestId {
                        inner,
                        style: Style::Json,
                    }),
            )
            .try_init(),
        // The line is formatted apart before the id is added, so the format keeps the colour setting itself.
        LogFormat::Text => registry
            .with(layer.map_event_format(|inner| WithRequestId {
                inner: inner.with_ansi(ansi),
                style: Style::Text,
            }))
            .try_init(),
    };
}
