//! What the task handling a request knows about it: the request id, on every log line written while the
//! request is handled, and the id of the key that authenticated it, for the handlers.
//!
//! Both travel in one task-local value rather than in a tracing span and a request extension: creating,
//! entering and closing a span (with its fields formatted up front) cost more than all the rest of a request's
//! bookkeeping together, and the first extension of a request allocates its map (`bench/layers`). The event
//! format below adds the id only to the lines that are written.

use std::future::Future;
use std::sync::Arc;

use axum::http::HeaderValue;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// One request, as the task handling it sees it.
struct Scope {
    id: HeaderValue,
    key_id: Option<Arc<str>>,
}

tokio::task_local! {
    static REQUEST: Scope;
}

/// `future`, with `id` as the request id of the log lines it writes and `key_id` as the key it was
/// authenticated with (none outside the authenticated API).
pub fn scope<F: Future>(
    id: HeaderValue,
    key_id: Option<Arc<str>>,
    future: F,
) -> impl Future<Output = F::Output> {
    REQUEST.scope(Scope { id, key_id }, future)
}

/// Run `work` with `id` as the request id of the log lines it writes (before authentication).
pub fn sync_scope<R>(id: HeaderValue, work: impl FnOnce() -> R) -> R {
    REQUEST.sync_scope(Scope { id, key_id: None }, work)
}

/// The request id of the running task, if it is handling a request.
pub fn current() -> Option<String> {
    REQUEST
        .try_with(|scope| String::from_utf8_lossy(scope.id.as_bytes()).into_owned())
        .ok()
}

/// The id of the key the running task's request was authenticated with, if any.
pub fn key_id() -> Option<Arc<str>> {
    REQUEST
        .try_with(|scope| scope.key_id.clone())
        .ok()
        .flatten()
}

/// How a line names its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `… request_id=<id>` at the end of a text line.
    Text,
    /// A `"request_id"` key first in a JSON object.
    Json,
}

/// An event format that adds the request id to the lines `inner` writes inside a request.
pub struct WithRequestId<F> {
    /// The format of the line itself.
    pub inner: F,
    /// Where the id goes.
    pub style: Style,
}

impl<S, N, F> FormatEvent<S, N> for WithRequestId<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let Some(id) = current() else {
            return self.inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.inner
            .format_event(ctx, Writer::new(&mut line), event)?;
        let body = line.strip_suffix('\n').unwrap_or(&line);
        match (self.style, body.strip_prefix('{')) {
            (Style::Json, Some(fields)) => {
                let id = serde_json::to_string(&id).map_err(|_| std::fmt::Error)?;
                writeln!(writer, "{{\"request_id\":{id},{fields}")
            }
            _ => writeln!(writer, "{body} request_id={id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// Log lines captured in memory.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Write one warning, inside a request with `id` or outside any, and return what was logged.
    fn logged(style: Style, id: Option<&'static str>) -> String {
        let lines = Lines::default();
        let writer = {
            let lines = lines.clone();
            move || lines.clone()
        };
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(writer);
        let subscriber: Box<dyn Subscriber + Send + Sync> = match style {
            Style::Text => Box::new(
                tracing_subscriber::registry()
                    .with(layer.map_event_format(|inner| WithRequestId { inner, style })),
            ),
            Style::Json => Box::new(
                tracing_subscriber::registry().with(
                    layer
                        .json()
                        .flatten_event(true)
                        .map_event_format(|inner| WithRequestId { inner, style }),
                ),
            ),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let write = async { tracing::warn!(voice = "zuri", "synthesis slow") };
        tracing::subscriber::with_default(subscriber, || match id {
            Some(id) => runtime.block_on(scope(HeaderValue::from_static(id), None, write)),
            None => runtime.block_on(write),
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        text
    }

    #[test]
    fn text_lines_inside_a_request_end_with_its_id() {
        let line = logged(Style::Text, Some("req-7"));
        assert!(
            line.ends_with("synthesis slow voice=\"zuri\" request_id=req-7\n"),
            "{line}"
        );
        let line = logged(Style::Text, None);
        assert!(!line.contains("request_id"), "{line}");
        assert!(line.ends_with("synthesis slow voice=\"zuri\"\n"), "{line}");
    }

    #[test]
    fn json_lines_inside_a_request_carry_its_id_as_a_key() {
        let line = logged(Style::Json, Some("a\"b"));
        let value: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(value["request_id"], "a\"b");
        assert_eq!(value["voice"], "zuri");
        assert_eq!(value["message"], "synthesis slow");
        let line = logged(Style::Json, None);
        let value: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert!(value.get("request_id").is_none());
    }
}
