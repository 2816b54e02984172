//! Prometheus metrics (`GET /metrics`): the names, the recorder, and the HTTP middleware that counts requests.
//!
//! Code records through the `metrics` facade wherever the event happens; without an installed recorder (tests
//! of single modules, the CLI) the calls cost next to nothing.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Requests by route, method and status.
pub const HTTP_REQUESTS: &str = "sauti_http_requests_total";
/// Request latency by route and method, seconds.
pub const HTTP_DURATION: &str = "sauti_http_request_duration_seconds";
/// Characters synthesised, by voice (cloned voices all count under `voice="cloned"`).
pub const TTS_CHARACTERS: &str = "sauti_tts_characters_total";
/// Milliseconds of audio produced, by voice (counters are integers; cloned voices as above).
pub const TTS_AUDIO_MS: &str = "sauti_tts_audio_milliseconds_total";
/// Synthesis time over audio time, by engine.
pub const TTS_REAL_TIME_FACTOR: &str = "sauti_tts_real_time_factor";
/// Milliseconds of audio transcribed, by engine.
pub const ASR_AUDIO_MS: &str = "sauti_asr_audio_milliseconds_total";
/// Recognition time over audio time, by engine.
pub const ASR_REAL_TIME_FACTOR: &str = "sauti_asr_real_time_factor";
/// Requests admitted and not yet finished, by actor.
pub const QUEUE_DEPTH: &str = "sauti_actor_queue_depth";
/// Requests refused with 503 `server_busy`, by actor.
pub const BUSY_REJECTIONS: &str = "sauti_actor_busy_rejections_total";
/// Actor restarts, by actor.
pub const ACTOR_RESTARTS: &str = "sauti_actor_restarts_total";
/// Requests refused with 429, by category.
pub const RATE_LIMITED: &str = "sauti_rate_limited_total";
/// Job state changes, by the state entered.
pub const JOBS: &str = "sauti_jobs_total";
/// Work stopped because its caller went away or its deadline passed, by actor.
pub const CANCELLED_WORK: &str = "sauti_cancelled_work_total";
/// Connections open now.
pub const CONNECTIONS_OPEN: &str = "sauti_http_connections_open";
/// Connections refused because `server.max_connections` were open.
pub const CONNECTIONS_REFUSED: &str = "sauti_http_connections_refused_total";
/// Turns the dialogue fallback answered, by the backend that failed.
pub const DIALOGUE_FALLBACKS: &str = "sauti_dialogue_fallbacks_total";
/// Agent turns, by scenario and outcome (intent, fallback, guardrail, emergency, llm).
pub const DIALOGUE_TURNS: &str = "sauti_dialogue_turns_total";

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Install the process-wide Prometheus recorder (once; later calls return the same handle).
pub fn install() -> Option<&'static PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Some(handle);
    }
    let latency = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    ];
    let rtf = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0,
    ];
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), &latency)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(TTS_REAL_TIME_FACTOR.into()), &rtf))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(ASR_REAL_TIME_FACTOR.into()), &rtf))
        .map(PrometheusBuilder::build_recorder);
    let recorder = match recorder {
        Ok(recorder) => recorder,
        Err(error) => {
            tracing::error!(%error, "metrics recorder not installed");
            return None;
        }
    };
    let handle = recorder.handle();
    if metrics::set_global_recorder(super::labels::Scrubbed(recorder)).is_err() {
        tracing::warn!("another metrics recorder is installed; /metrics will be empty");
    }
    let handle = HANDLE.get_or_init(|| handle);
    spawn_upkeep(handle.clone());
    Some(handle)
}

/// How often recorded histogram samples are folded into their buckets.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Histogram samples are kept raw until folded into their buckets, which otherwise happens only when
/// `/metrics` is scraped: a service nobody scrapes would hold every request's latency forever. A small thread
/// folds them every few seconds, so memory stays flat whether or not anyone scrapes.
fn spawn_upkeep(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new()
        .name("metrics-upkeep".into())
        .spawn(move || loop {
            std::thread::sleep(UPKEEP_EVERY);
            handle.run_upkeep();
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "metrics upkeep thread not started; histograms are folded only when scraped");
    }
}

/// The metrics in Prometheus text format.
pub fn render() -> String {
    HANDLE
        .get()
        .map(PrometheusHandle::render)
        .unwrap_or_default()
}

/// The route template a path belongs to (`/v1/tts/jobs/{job_id}`), or `unmatched`; keeps label values few.
pub fn route_of(path: &str, templates: &[String]) -> String {
    let segments: Vec<&str> = path.split('/').collect();
    templates
        .iter()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(t, s)| {
                    t == s || (t.starts_with('{') && t.ends_with('}') && !s.is_empty())
                })
        })
        .cloned()
        .unwrap_or_else(|| "unmatched".to_string())
}

/// The route templates requests are counted under.
#[derive(Clone)]
pub struct Routes(pub std::sync::Arc<Vec<String>>);

/// Middleware: count every request by route, method and status, and time it.
pub async fn track(
    axum::extract::State(routes): axum::extract::State<Routes>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route = route_of(request.uri().path(), &routes.0);
    // Any method name can arrive before authentication; unknown ones share one label value.
    let method = match request.method().as_str() {
        m @ ("GET" | "POST" | "PUT" | "DELETE" | "HEAD" | "OPTIONS" | "PATCH") => m,
        _ => "other",
    }
    .to_string();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!(HTTP_REQUESTS, "route" => route.clone(), "method" => method.clone(), "status" => status)
        .increment(1);
    metrics::histogram!(HTTP_DURATION, "route" => route, "method" => method)
        .record(started.elapsed().as_secs_f64());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_their_templates() {
        let templates: Vec<String> = [
            "/v1/voices",
            "/v1/voices/{voice_id}",
            "/v1/tts/jobs/{job_id}/audio",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            route_of("/v1/voices/zuri", &templates),
            "/v1/voices/{voice_id}"
        );
        assert_eq!(
            route_of("/v1/tts/jobs/abc/audio", &templates),
            "/v1/tts/jobs/{job_id}/audio"
        );
        assert_eq!(route_of("/v1/voices/", &templates), "unmatched");
        assert_eq!(route_of("/etc/passwd", &templates), "unmatched");
    }
}
