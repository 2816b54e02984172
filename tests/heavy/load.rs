//! A bounded load run over loopback: 10,000 requests on voices, text-to-speech and jobs from four clients, with
//! the error rate and latency percentiles printed and the server's memory watched for leaks.

use crate::common;

use std::time::{Duration, Instant};

use common::{Server, KEY_A};
use serde_json::json;

fn rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// One request of the mix; its status and latency.
fn request(server: &Server, agent: &ureq::Agent, n: usize) -> (u16, Duration) {
    let started = Instant::now();
    let result = match n % 20 {
        0..=13 => agent
            .get(&server.url("/v1/voices"))
            .set("xi-api-key", KEY_A)
            .call(),
        14..=18 => agent
            .post(&server.url("/v1/text-to-speech/zuri"))
            .set("xi-api-key", KEY_A)
            .send_json(json!({"text": "Habari za asubuhi."})),
        _ => agent
            .post(&server.url("/v1/tts/jobs"))
            .set("xi-api-key", KEY_A)
            .send_json(json!({"text": "Asante sana."})),
    };
    let status = match result {
        Ok(response) => {
            let _ = response.into_string();
            200
        }
        Err(ureq::Error::Status(code, _)) => code,
        Err(_) => 0,
    };
    (status, started.elapsed())
}

fn run(server: &Server, total: usize, clients: usize) -> Vec<(u16, Duration)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                scope.spawn(move || {
                    let agent = ureq::AgentBuilder::new()
                        .timeout(Duration::from_secs(60))
                        .build();
                    (c..total)
                        .step_by(clients)
                        .map(|n| request(server, &agent, n))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

#[test]
fn ten_thousand_requests_without_errors_or_a_leak() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100000000"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000000"),
            ("SAUTI__JOBS__MAX_UNFINISHED_PER_KEY", "100000"),
            ("RUST_LOG", "error"),
        ],
    );
    let pid = server.child.id();
    // Warm-up: caches, worker threads, the allocator's first pages.
    run(&server, 1_000, 4);
    let before = rss(pid);
    let started = Instant::now();
    let results = run(&server, 10_000, 4);
    let elapsed = started.elapsed();
    let after = rss(pid);

    let errors = results.iter().filter(|(s, _)| *s != 200).count();
    let mut latencies: Vec<Duration> = results.iter().map(|(_, d)| *d).collect();
    latencies.sort();
    let percentile = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    eprintln!(
        "10,000 requests in {:.1} s ({:.0}/s): {errors} errors, p50 {:?}, p99 {:?}; RSS {} MB -> {} MB",
        elapsed.as_secs_f64(),
        10_000.0 / elapsed.as_secs_f64(),
        percentile(0.5),
        percentile(0.99),
        before >> 20,
        after >> 20
    );
    assert_eq!(errors, 0, "every request answered 200/202");
    assert!(
        after < before + (40 << 20),
        "RSS grew from {} MB to {} MB",
        before >> 20,
        after >> 20
    );
}
