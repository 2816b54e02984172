//! What the service's HTTP layers cost. Three measurements, same run:
//!
//! 1. From outside: `GET /v1/voices` with a valid key against the release server, and against a bare axum
//!    handler serving the same JSON bytes (started here, one runtime thread like the server's on 2 cores), with
//!    `wrk` (1 and 2 threads), alternating rounds; the server's requests per second as a share of the bare one's.
//! 2. In process: the same handler alone, and behind sauti's front (request id, log scope, authentication, rate
//!    limits, body timeout, metrics, problem rendering), microseconds per request.
//! 3. Each part of the front on its own, nanoseconds per call.
//!
//! Run: `apt-get install -y wrk && cargo bench --bench layers` (`-- inside` skips the wrk rounds).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, Request};
use axum::response::IntoResponse;
use axum::Router;
use tower::ServiceExt;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KEY: &str = "bench-key-0123456789";
const ROUNDS: usize = 5;
const WINDOW: &str = "5s";

fn wrk_rps(threads: usize, url: &str) -> f64 {
    let connections = (threads * 4).to_string();
    let output = Command::new("wrk")
        .args([
            &format!("-t{threads}"),
            &format!("-c{connections}"),
            &format!("-d{WINDOW}"),
            "-H",
            &format!("xi-api-key: {KEY}"),
            url,
        ])
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("wrk printed no rate:\n{text}"))
}

fn start_server(data: &std::path::Path) -> (std::process::Child, String) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("serve")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__SERVER__BIND", "127.0.0.1:0")
        .env("SAUTI__STORAGE__DATA_DIR", data)
        .env("SAUTI__AUTH__API_KEYS", KEY)
        .env("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000000000")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("release server starts");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let base = loop {
        let line = lines
            .next()
            .and_then(Result::ok)
            .expect("server prints its address");
        if let Some(base) = line.strip_prefix("sauti listening on ") {
            break base.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (server, base)
}

/// The bare comparison: one axum route answering `body` as JSON, on a one-thread runtime of its own.
fn start_bare(body: Arc<Vec<u8>>) -> String {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            sender
                .send(listener.local_addr().expect("address"))
                .expect("send");
            let app = Router::new().route(
                "/v1/voices",
                axum::routing::get(move || {
                    let body = Arc::clone(&body);
                    async move { ([(header::CONTENT_TYPE, "application/json")], body.to_vec()) }
                }),
            );
            axum::serve(listener, app).await.expect("serve");
        });
    });
    format!("http://{}", receiver.recv().expect("bare server address"))
}

fn outside(body: Arc<Vec<u8>>, base: &str) {
    let bare = start_bare(body);
    println!("## From outside: GET /v1/voices, wrk, {ROUNDS} alternating rounds of {WINDOW}\n");
    println!("| wrk threads | bare axum (req/s) | sauti (req/s) | sauti / bare |");
    println!("|---|---|---|---|");
    for threads in [1, 2] {
        let (mut bare_runs, mut sauti_runs) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            bare_runs.push(wrk_rps(threads, &format!("{bare}/v1/voices")));
            sauti_runs.push(wrk_rps(threads, &format!("{base}/v1/voices")));
        }
        let median = |runs: &mut Vec<f64>| {
            runs.sort_by(f64::total_cmp);
            runs[runs.len() / 2]
        };
        let (b, s) = (median(&mut bare_runs), median(&mut sauti_runs));
        println!("| {threads} | {b:.0} | {s:.0} | {:.2}× |", s / b);
    }
}

/// The client's address in the in-process runs.
const PEER: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 40000);

/// A `GET /v1/voices` with the key, as the listener hands it on.
fn voices_request() -> Request<Body> {
    Request::get("/v1/voices")
        .header("xi-api-key", KEY)
        .body(Body::empty())
        .expect("request")
}

/// Microseconds per request of `answer`, median of 5 batches.
fn per_request<F: std::future::Future<Output = axum::response::Response>>(
    runtime: &tokio::runtime::Runtime,
    answer: impl Fn(Request<Body>) -> F,
) -> f64 {
    const BATCH: usize = 20_000;
    let mut batches: Vec<f64> = (0..6)
        .map(|_| {
            let started = Instant::now();
            runtime.block_on(async {
                for _ in 0..BATCH {
                    let response = answer(voices_request()).await;
                    let _ = axum::body::to_bytes(response.into_body(), usize::MAX).await;
                }
            });
            started.elapsed().as_secs_f64() * 1e6 / BATCH as f64
        })
        .skip(1)
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// The guard for the in-process runs: the bench key, limits that never refuse.
fn bench_guard() -> sauti::http::transport::limits::Guard {
    let settings = sauti::config::LimitSettings {
        default_per_minute: 1_000_000_000,
        ..Default::default()
    };
    sauti::http::transport::limits::Guard {
        keys: sauti::http::transport::auth::KeyRing::new(
            &[KEY.to_string()],
            &sauti::storage::KeySecret::random(),
        ),
        limits: Arc::new(sauti::http::transport::limits::RateLimits::new(&settings)),
    }
}

fn inside(body: Arc<Vec<u8>>) {
    use sauti::http::transport::edge::{Front, Parts};
    use sauti::http::transport::problem::ProblemBase;
    use sauti::telemetry::metrics::Routes;

    sauti::telemetry::metrics::install();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let handler = move || {
        let body = Arc::clone(&body);
        async move { ([(header::CONTENT_TYPE, "application/json")], body.to_vec()).into_response() }
    };
    let bare = Router::new().route("/v1/voices", axum::routing::get(handler));
    let front = Front::new(Parts {
        router: bare.clone(),
        base: ProblemBase(Arc::from("http://127.0.0.1:8080")),
        routes: Routes::new(sauti::http::openapi_document().paths.paths.keys().cloned()),
        guard: bench_guard(),
        body_timeout: Duration::from_secs(30),
        cors: sauti::http::transport::cors::Cors::Off,
    });
    let alone = per_request(&runtime, |request| {
        let bare = bare.clone();
        async move {
            let Ok(response) = bare.oneshot(request).await;
            response
        }
    });
    // One keep-alive connection, as wrk's are.
    let connection = front.connection(PEER);
    let fronted = per_request(&runtime, |request| connection.handle(request));
    println!("\n## Where the time goes: in process (µs per request)\n");
    println!("| stack | µs per request | added |");
    println!("|---|---|---|");
    println!("| handler alone | {alone:.2} | — |");
    println!(
        "| + the front: request id, log scope, authentication, rate limits, body timeout, metrics, problem rendering | {fronted:.2} | {:+.2} |",
        fronted - alone
    );
}

fn main() {
    sauti::telemetry::init(&sauti::config::LogSettings::default());
    let data = tempfile::tempdir().expect("temp dir");
    let (mut server, base) = start_server(data.path());
    let body = reqwest_body(&base);
    println!("2-core VM; wrk, the server and the bare handler share the machine; sauti at log level info\n");
    // `cargo bench --bench layers -- inside` skips the wrk rounds.
    if !std::env::args().any(|a| a == "inside") {
        outside(Arc::clone(&body), &base);
    }
    let _ = server.kill();
    let _ = server.wait();
    inside(body);
    components();
}

/// Nanoseconds per call of `work`, median of 5 batches of 200,000.
fn per_call(mut work: impl FnMut()) -> f64 {
    const CALLS: usize = 200_000;
    let mut batches: Vec<f64> = (0..6)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..CALLS {
                work();
            }
            started.elapsed().as_secs_f64() * 1e9 / CALLS as f64
        })
        .skip(1)
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// The parts of the edge and the guard, each on its own.
fn components() {
    use sauti::http::transport::auth::KeyRing;
    use sauti::telemetry::metrics::Routes;
    let keys = KeyRing::new(&[KEY.to_string()], &sauti::storage::KeySecret::random());
    let routes = Routes::new(sauti::http::openapi_document().paths.paths.keys().cloned());
    let route = routes.index_of("/v1/voices");
    let guard = bench_guard();
    let request = voices_request();
    let memo = sauti::http::transport::auth::KeyMemo::default();
    let guard_memo = sauti::http::transport::limits::ConnectionMemo::default();
    let id = axum::http::HeaderValue::from_static("0b4f2c1e-8d6a-4e3b-9f21-7c5d8e9a0b1c");
    let rows: [(&str, f64); 9] = [
        (
            "authentication: SHA-256 of the key, one lookup",
            per_call(|| {
                std::hint::black_box(keys.authenticate(std::hint::black_box(KEY)));
            }),
        ),
        (
            "authentication: the key the connection presented last, remembered",
            per_call(|| {
                std::hint::black_box(keys.authenticate_with(&memo, std::hint::black_box(KEY)));
            }),
        ),
        (
            "guard: authentication, the rate limit and its three headers",
            per_call(|| {
                if let sauti::http::transport::limits::Admission::Now(Ok((caller, allowance))) =
                    guard.admit(&request, PEER.ip(), &guard_memo, &id)
                {
                    let mut headers = axum::http::HeaderMap::new();
                    allowance.write(&mut headers);
                    std::hint::black_box((caller, headers));
                }
            }),
        ),
        (
            "request id: a new UUID as a header value",
            per_call(|| {
                std::hint::black_box(sauti::http::transport::edge::new_request_id());
            }),
        ),
        (
            "log scope: the request id as the task's log context",
            per_call(|| {
                let id =
                    axum::http::HeaderValue::from_static("0b4f2c1e-8d6a-4e3b-9f21-7c5d8e9a0b1c");
                let scoped = sauti::telemetry::request_scope::scope(id, None, async { 1 });
                std::hint::black_box(futures_util::FutureExt::now_or_never(scoped));
            }),
        ),
        (
            "for comparison, what the log scope replaced: a tracing span, entered and left",
            per_call(|| {
                let span = tracing::info_span!(
                    "request",
                    request_id = "0b4f2c1e-8d6a-4e3b-9f21-7c5d8e9a0b1c"
                );
                let _entered = std::hint::black_box(span.enter());
            }),
        ),
        (
            "metrics: the request counted and timed",
            per_call(|| routes.record(route, "GET", 200, 0.000_25)),
        ),
        (
            "metrics: the route template of /v1/voices",
            per_call(|| {
                std::hint::black_box(routes.index_of(std::hint::black_box("/v1/voices")));
            }),
        ),
        (
            "metrics: the route template of /v1/voices/zuri",
            per_call(|| {
                std::hint::black_box(routes.index_of(std::hint::black_box("/v1/voices/zuri")));
            }),
        ),
    ];
    println!("\n## The parts, one at a time (ns per call)\n");
    println!("| part | ns |");
    println!("|---|---|");
    for (name, ns) in rows {
        println!("| {name} | {ns:.0} |");
    }
}

/// The JSON the server answers `GET /v1/voices` with.
fn reqwest_body(base: &str) -> Arc<Vec<u8>> {
    let response = ureq::get(&format!("{base}/v1/voices"))
        .set("xi-api-key", KEY)
        .call()
        .expect("voices");
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut response.into_reader(), &mut body).expect("body");
    Arc::new(body)
}
