//! Recognition shared fairly between API keys, black-box against `sauti serve` with the tiny Whisper fixture:
//! one key's many concurrent uploads wait in that key's own queue, so another key's single upload is heard
//! after at most one of them.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::multipart::{form, Part, BOUNDARY};
use common::{Reply, Server, KEY_A, KEY_B};

/// Uploads the busy key sends at once.
const BUSY_UPLOADS: usize = 10;

/// The fixture's speech clip repeated `times` times, as one 16 kHz mono 16-bit WAV file.
fn long_speech(times: usize) -> Vec<u8> {
    let clip = std::fs::read(common::fixture("whisper/speech.wav")).unwrap();
    common::wav_16k(&common::wav_pcm(&clip).repeat(times))
}

fn upload(url: &str, key: &str, body: &[u8]) -> Reply {
    common::post_raw(
        url,
        Some(key),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        body,
    )
}

/// Recognitions admitted and not finished, from `/metrics`.
fn asr_queue_depth(server: &Server) -> f64 {
    let metrics = common::get(&server.url("/metrics"), None);
    String::from_utf8_lossy(&metrics.body)
        .lines()
        .find(|l| l.starts_with(r#"sauti_actor_queue_depth{actor="asr"}"#))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

/// One upload by `key`, answered 200, and how long it took.
fn timed(url: &str, key: &str, body: &[u8]) -> Duration {
    let started = Instant::now();
    let reply = upload(url, key, body);
    let took = started.elapsed();
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert!(reply.json()["text"].is_string());
    took
}

#[test]
fn one_keys_ten_uploads_delay_another_keys_upload_by_at_most_one_recognition() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let model = common::fixture("whisper/model");
    let library = common::onnxruntime();
    let server = Server::start(
        data.path(),
        &[
            ("SAUTI__ASR__MODEL", model.to_str().unwrap()),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
            ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
            // Two workers: without fairness the second key would wait behind five rounds of the first's.
            ("SAUTI__ASR__WORKERS", "2"),
            ("SAUTI__ASR__QUEUE", "16"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let url = server.url("/v1/speech-to-text/");
    let body = Arc::new(form(&[(
        "audio",
        Part::File("audio/wav", &long_speech(48)),
    )]));

    // One recognition alone, once the sessions are warm.
    timed(&url, KEY_B, &body);
    let alone = timed(&url, KEY_B, &body).min(timed(&url, KEY_B, &body));

    let finished = Arc::new(AtomicUsize::new(0));
    let busy: Vec<_> = (0..BUSY_UPLOADS)
        .map(|_| {
            let (url, body, finished) = (url.clone(), Arc::clone(&body), Arc::clone(&finished));
            std::thread::spawn(move || {
                let reply = upload(&url, KEY_A, &body);
                finished.fetch_add(1, Ordering::AcqRel);
                reply
            })
        })
        .collect();
    // Every one of the busy key's uploads admitted (waiting or running) before the other key's is sent.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let admitted = asr_queue_depth(&server) as usize + finished.load(Ordering::Acquire);
        if admitted >= BUSY_UPLOADS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the busy key's uploads were not all admitted"
        );
        std::thread::yield_now();
    }
    let waiting = BUSY_UPLOADS - finished.load(Ordering::Acquire);

    let other = timed(&url, KEY_B, &body);
    let bound = alone * 2 + Duration::from_secs(1);
    eprintln!("one recognition alone: {alone:?}; another key behind {waiting} waiting: {other:?}");
    assert!(
        other <= bound,
        "another key's upload took {other:?} behind {waiting} of the busy key's; one recognition takes {alone:?}"
    );

    for upload in busy {
        let reply = upload.join().unwrap();
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
    }
    // Each finished recognition leaves the gauge (just after its answer is on its way).
    let deadline = Instant::now() + Duration::from_secs(30);
    while asr_queue_depth(&server) != 0.0 {
        assert!(Instant::now() < deadline, "recognitions still counted");
        std::thread::yield_now();
    }
}
