//! Prometheus metrics (`GET /metrics`): the names, the recorder, and the HTTP middleware that counts requests.
//!
//! Code records through the `metrics` facade wherever the event happens; without an installed recorder (tests
//! of single modules, the CLI) the calls cost next to nothing.

use std::sync::OnceLock;
use std::time::Duration;

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
/// Seconds from a streamed synthesis starting on its worker to its first audio, by engine.
pub const TTS_FIRST_AUDIO: &str = "sauti_tts_time_to_first_audio_seconds";
/// Realtime voice-agent sessions open now.
pub const REALTIME_SESSIONS: &str = "sauti_realtime_sessions";
/// Seconds from the end of the caller's speech to the first byte of the agent's reply, per realtime turn.
pub const REALTIME_VOICE_TO_VOICE: &str = "sauti_realtime_voice_to_voice_seconds";
/// Replies the caller talked over (barge-in).
pub const REALTIME_INTERRUPTIONS: &str = "sauti_realtime_interruptions_total";
/// Sounds the caller made over a reply that did not stop it, by kind (`short`: shorter than
/// `realtime.min_interruption_ms`; `words`: only "eeh", "mhm", "sawa" and the like, after which the reply went on).
pub const REALTIME_BACKCHANNELS: &str = "sauti_realtime_backchannels_total";
/// Calls the agent put through to people, by outcome (`transferred`, or `failed` after its second try).
pub const CALL_TRANSFERS: &str = "sauti_call_transfers_total";
/// Post-call webhook deliveries tried, by outcome (`delivered`, `failed`).
pub const WEBHOOK_DELIVERIES: &str = "sauti_webhook_deliveries_total";
/// Waits of up to a second a realtime socket made because its caller's audio ran ahead of real time.
pub const REALTIME_PACED: &str = "sauti_realtime_paced_waits_total";
/// Caller turns a realtime session dropped unheard, by reason (`superseded`: a newer turn came before it was
/// recognised and both would be longer than a turn may be; `rate_limited`: over the key's limit).
pub const REALTIME_TURNS_DROPPED: &str = "sauti_realtime_turns_dropped_total";
/// Caller turns a realtime session heard end, by what ended them (`silence`: the end-of-turn silence;
/// `judged`: a pause the end-of-turn model judged complete; `longest`: the longest silence after a pause judged
/// incomplete; `length`: the longest turn).
pub const REALTIME_TURN_ENDS: &str = "sauti_realtime_turn_ends_total";
/// Pauses the end-of-turn model judged, by judgement (`complete`, `incomplete`).
pub const REALTIME_TURN_JUDGEMENTS: &str = "sauti_realtime_turn_judgements_total";
/// Recognitions a realtime session started when the caller fell quiet, by outcome (`used`: the turn ended with
/// that audio; `discarded`: the caller spoke again).
pub const REALTIME_EARLY_RECOGNITIONS: &str = "sauti_realtime_early_recognitions_total";
/// Milliseconds of audio transcribed, by engine.
pub const ASR_AUDIO_MS: &str = "sauti_asr_audio_milliseconds_total";
/// How long recognitions waited for a recognition worker (behind other work, their key's and others').
pub const ASR_QUEUE_WAIT: &str = "sauti_asr_queue_wait_seconds";
/// Inputs per batched model run, by model (`whisper-encoder`, `ctc`).
pub const MODEL_BATCH_SIZE: &str = "sauti_model_batch_size";
/// Recognition time over audio time, by engine.
pub const ASR_REAL_TIME_FACTOR: &str = "sauti_asr_real_time_factor";
/// Requests admitted and not yet finished, by actor.
pub const QUEUE_DEPTH: &str = "sauti_actor_queue_depth";
/// Requests refused with 503 `server_busy`, by actor.
pub const BUSY_REJECTIONS: &str = "sauti_actor_busy_rejections_total";
/// Actor restarts, by actor.
pub const ACTOR_RESTARTS: &str = "sauti_actor_restarts_total";
/// Panics caught inside an actor's work (a synthesis, a recognition, a turn, a job run), by actor: each failed
/// one request or job alone.
pub const WORK_FAULTS: &str = "sauti_work_faults_total";
/// Background loops (key and voice sync, the job listener) restarted after they panicked or ended, by loop.
pub const BACKGROUND_RESTARTS: &str = "sauti_background_restarts_total";
/// Requests refused with 429, by category.
pub const RATE_LIMITED: &str = "sauti_rate_limited_total";
/// Requests the shared rate limits (Redis) could not count: it failed, timed out, or failed moments before (each
/// request then fell back or was refused).
pub const RATE_LIMIT_STORE_FAILURES: &str = "sauti_rate_limit_store_failures_total";
/// Job state changes, by the state entered.
pub const JOBS: &str = "sauti_jobs_total";
/// Work stopped because its caller went away or its deadline passed, by actor (`encoder`: the decoding and
/// encoding of a non-streamed answer in another audio format).
pub const CANCELLED_WORK: &str = "sauti_cancelled_work_total";
/// What the operations used, by kind (`tts_characters`, `asr_seconds`, `clone_seconds`, `agent_turns`).
pub const USAGE: &str = "sauti_usage_total";
/// Use a key with no limit had that the store could not count (a full disk, a database that does not answer),
/// by kind (`characters`, `audio_seconds`, `agent_turns`, `call_seconds`).
pub const USAGE_UNCOUNTED: &str = "sauti_usage_uncounted_total";
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
    let sizes = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0];
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), &latency)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(TTS_REAL_TIME_FACTOR.into()), &rtf))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(ASR_REAL_TIME_FACTOR.into()), &rtf))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(ASR_QUEUE_WAIT.into()), &latency))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(MODEL_BATCH_SIZE.into()), &sizes))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(TTS_FIRST_AUDIO.into()), &latency))
        .and_then(|b| {
            b.set_buckets_for_metric(Matcher::Full(REALTIME_VOICE_TO_VOICE.into()), &latency)
        })
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
const UPKEEP_EVERY: Duration = Duration::from_secs(1);

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

/// The route templates requests are counted under, split once, with the metric handles already made for each
/// (route, method, status) seen: counting a request allocates nothing and looks nothing up by label.
#[derive(Clone)]
pub struct Routes(std::sync::Arc<RouteTable>);

struct RouteTable {
    templates: Vec<Template>,
    /// Templates without parameters, by their path: most requests are found here at once (hashed fast, with
    /// a seed of the process's own, since the paths looked up come from anyone).
    exact: std::collections::HashMap<String, usize, foldhash::fast::RandomState>,
    /// The indices of templates with parameters, the only ones matched segment by segment.
    parameterised: Vec<usize>,
    /// The handles of every (route, method, common status), made on first use and found by index: counting a
    /// request takes no lock and hashes nothing.
    slots: Box<[std::sync::OnceLock<Handles>]>,
    /// The handles of the rarer statuses.
    handles: std::sync::RwLock<
        std::collections::HashMap<(usize, &'static str, u16), Handles, foldhash::fast::RandomState>,
    >,
}

struct Template {
    name: String,
    parts: Vec<Part>,
}

/// A segment of a template: written out, or a `{parameter}` that any non-empty segment fills.
enum Part {
    Literal(String),
    Parameter,
}

#[derive(Clone)]
struct Handles {
    requests: metrics::Counter,
    duration: metrics::Histogram,
}

/// The label value of paths outside every template.
const UNMATCHED: &str = "unmatched";

impl Routes {
    /// The templates (`/v1/tts/jobs/{job_id}`, …).
    pub fn new(templates: impl IntoIterator<Item = String>) -> Self {
        let templates: Vec<Template> = templates
            .into_iter()
            .map(|name| Template {
                parts: name
                    .split('/')
                    .map(|part| {
                        if part.starts_with('{') && part.ends_with('}') {
                            Part::Parameter
                        } else {
                            Part::Literal(part.to_string())
                        }
                    })
                    .collect(),
                name,
            })
            .collect();
        let exact = templates
            .iter()
            .enumerate()
            .filter(|(_, t)| t.parts.iter().all(|p| matches!(p, Part::Literal(_))))
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let parameterised = templates
            .iter()
            .enumerate()
            .filter(|(_, t)| t.parts.iter().any(|p| matches!(p, Part::Parameter)))
            .map(|(i, _)| i)
            .collect();
        let slots = (0..(templates.len() + 1) * METHODS.len() * COMMON_STATUSES.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        Self(std::sync::Arc::new(RouteTable {
            templates,
            exact,
            parameterised,
            slots,
            handles: Default::default(),
        }))
    }

    /// The index of the template `path` belongs to; `templates.len()` for none.
    pub fn index_of(&self, path: &str) -> usize {
        // The path is split once; no template has more segments than this.
        const MOST: usize = 12;
        let table = &self.0;
        if let Some(&index) = table.exact.get(path) {
            return index;
        }
        let mut segments = [""; MOST];
        let mut count = 0;
        for segment in path.split('/') {
            if count == MOST {
                return table.templates.len();
            }
            segments[count] = segment;
            count += 1;
        }
        let segments = &segments[..count];
        table
            .parameterised
            .iter()
            .copied()
            .find(|&i| {
                let parts = &table.templates[i].parts;
                parts.len() == count
                    && parts
                        .iter()
                        .zip(segments)
                        .all(|(part, segment)| match part {
                            Part::Literal(literal) => literal == segment,
                            Part::Parameter => !segment.is_empty(),
                        })
            })
            .unwrap_or(table.templates.len())
    }

    /// The template `path` belongs to, or `unmatched`; keeps label values few.
    pub fn route_of(&self, path: &str) -> &str {
        self.0
            .templates
            .get(self.index_of(path))
            .map_or(UNMATCHED, |t| t.name.as_str())
    }

    fn handles(&self, route: usize, method: &'static str, status: u16) -> Handles {
        let key = (route, method, status);
        if let Some(handles) = self
            .0
            .handles
            .read()
            .ok()
            .and_then(|h| h.get(&key).cloned())
        {
            return handles;
        }
        let name = self
            .0
            .templates
            .get(route)
            .map_or(UNMATCHED, |t| t.name.as_str())
            .to_string();
        let handles = Handles {
            requests: metrics::counter!(HTTP_REQUESTS, "route" => name.clone(), "method" => method, "status" => status.to_string()),
            duration: metrics::histogram!(HTTP_DURATION, "route" => name, "method" => method),
        };
        if let Ok(mut cache) = self.0.handles.write() {
            cache.insert(key, handles.clone());
        }
        handles
    }
}

/// The label value of a request method; unknown ones (any name can arrive before authentication) share one.
pub fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    let slot = match *method {
        Method::GET => 0,
        Method::POST => 1,
        Method::PUT => 2,
        Method::DELETE => 3,
        Method::HEAD => 4,
        Method::OPTIONS => 5,
        Method::PATCH => 6,
        _ => 7,
    };
    METHODS[slot]
}

impl Routes {
    /// Count one request by its route (from [`Routes::index_of`]), method and status, and record its duration.
    pub fn record(&self, route: usize, method: &'static str, status: u16, seconds: f64) {
        let count = |handles: &Handles| {
            handles.requests.increment(1);
            handles.duration.record(seconds);
        };
        let method_slot = METHODS.iter().position(|m| *m == method);
        let status_slot = COMMON_STATUSES.binary_search(&status).ok();
        let slot = method_slot.zip(status_slot).and_then(|(m, s)| {
            let index = (route * METHODS.len() + m) * COMMON_STATUSES.len() + s;
            self.0.slots.get(index)
        });
        if let Some(slot) = slot {
            return count(slot.get_or_init(|| self.handles(route, method, status)));
        }
        // Counted under the read lock when the handles exist: no reference counts change hands.
        if let Ok(cache) = self.0.handles.read() {
            if let Some(handles) = cache.get(&(route, method, status)) {
                return count(handles);
            }
        }
        count(&self.handles(route, method, status));
    }
}

/// The method labels [`method_label`] gives, each with a slot of its own in the table of handles.
static METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "other",
];

/// The statuses with a slot of their own in the table of handles (sorted); others are looked up by label.
const COMMON_STATUSES: [u16; 24] = [
    101, 200, 201, 202, 204, 206, 304, 400, 401, 403, 404, 405, 406, 408, 409, 413, 415, 416, 422,
    429, 500, 502, 503, 504,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_their_templates() {
        let routes = Routes::new(
            [
                "/v1/voices",
                "/v1/voices/{voice_id}",
                "/v1/tts/jobs/{job_id}/audio",
            ]
            .map(String::from),
        );
        assert_eq!(routes.route_of("/v1/voices/zuri"), "/v1/voices/{voice_id}");
        assert_eq!(
            routes.route_of("/v1/tts/jobs/abc/audio"),
            "/v1/tts/jobs/{job_id}/audio"
        );
        assert_eq!(routes.route_of("/v1/voices"), "/v1/voices");
        assert_eq!(routes.route_of("/v1/voices/"), "unmatched");
        assert_eq!(routes.route_of("/etc/passwd"), "unmatched");
    }

    #[test]
    fn requests_are_counted_by_route_method_and_status_common_or_not() {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let routes = Routes::new(["/v1/voices", "/v1/voices/{voice_id}"].map(String::from));
        let voices = routes.index_of("/v1/voices");
        let one = routes.index_of("/v1/voices/zuri");
        let unmatched = routes.index_of("/nowhere");
        let get = method_label(&axum::http::Method::GET);
        let other = method_label(&axum::http::Method::from_bytes(b"BREW").unwrap());
        metrics::with_local_recorder(&recorder, || {
            routes.record(voices, get, 200, 0.001);
            routes.record(voices, get, 200, 0.001);
            routes.record(voices, "GET", 200, 0.001);
            routes.record(one, get, 418, 0.001);
            routes.record(one, get, 418, 0.001);
            routes.record(unmatched, other, 503, 0.001);
            routes.record(unmatched, other, 431, 0.001);
        });
        let text = handle.render();
        for (line, count) in [
            (r#"{route="/v1/voices",method="GET",status="200"}"#, 3),
            (
                r#"{route="/v1/voices/{voice_id}",method="GET",status="418"}"#,
                2,
            ),
            (r#"{route="unmatched",method="other",status="503"}"#, 1),
            (r#"{route="unmatched",method="other",status="431"}"#, 1),
        ] {
            let expected = format!("{HTTP_REQUESTS}{line} {count}");
            assert!(
                text.lines().any(|l| l == expected),
                "no {expected} in\n{text}"
            );
        }
    }
}
