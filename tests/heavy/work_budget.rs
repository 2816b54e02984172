//! Bounded work per request: a text that used to cost quadratic time, many of them from one key, and clients
//! that go away while their synthesis waits or runs.

use crate::common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, KEY_A, KEY_B};
use serde_json::json;

/// Digits and full stops without a sentence end: one enormous "sentence" at the slowest rate.
fn unpunctuated(chars: usize) -> String {
    let mut text = "99.999.999 ".repeat(chars / 11 + 1);
    text.truncate(chars);
    text.trim_end().to_string()
}

/// Syntheses that have reached the TTS actor: queued or running, or refused there as busy.
fn at_the_tts_actor(server: &Server) -> f64 {
    counter(server, "sauti_actor_queue_depth{actor=\"tts\"}")
        + counter(server, "sauti_actor_busy_rejections_total{actor=\"tts\"}")
}

fn counter(server: &Server, name: &str) -> f64 {
    let metrics = common::get(&server.url("/metrics"), None);
    String::from_utf8_lossy(&metrics.body)
        .lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn one_key_sending_the_costliest_texts_does_not_stall_another_keys_synthesis() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[]);
    let url = server.url("/v1/text-to-speech/zuri");
    let heavy = json!({"text": unpunctuated(2000), "voice_settings": {"speaking_rate": 0.25}});
    let attackers: Vec<_> = (0..3)
        .map(|_| {
            let (url, heavy) = (url.clone(), heavy.clone());
            std::thread::spawn(move || common::post_json(&url, Some(KEY_A), &heavy))
        })
        .collect();
    let job = common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": unpunctuated(20_000), "voice_settings": {"speaking_rate": 0.25}}),
    );
    assert_eq!(job.status, 202, "{}", String::from_utf8_lossy(&job.body));

    // The competition is under way (each attacker's synthesis at the actor) before the short one is sent.
    common::wait_until(
        Instant::now() + Duration::from_secs(30),
        "the heavy syntheses reached the TTS actor",
        || at_the_tts_actor(&server) >= 3.0,
    );
    let started = Instant::now();
    let short = common::post_json(&url, Some(KEY_B), &json!({"text": "Habari ya asubuhi."}));
    let waited = started.elapsed();
    assert_eq!(
        short.status,
        200,
        "{}",
        String::from_utf8_lossy(&short.body)
    );
    // Not a speed measurement: a stalled pool made this wait two minutes and then answer 503.
    assert!(
        waited < Duration::from_secs(30),
        "another key's short synthesis waited {waited:?}"
    );
    for attacker in attackers {
        let reply = attacker.join().unwrap();
        assert!(
            reply.status == 200 || reply.status == 503,
            "{} {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        );
        if reply.status == 200 {
            let audio = reply.json()["duration_seconds"].as_f64().unwrap();
            assert!(
                audio > 60.0,
                "2,000 characters at a quarter speed: {audio} s"
            );
        }
    }
}

#[test]
fn a_client_that_goes_away_stops_its_synthesis() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let server = Server::start(data.path(), &[("SAUTI__TTS__WORKERS", "1")]);
    let address = server.base.trim_start_matches("http://").to_string();
    let body =
        json!({"text": unpunctuated(2000), "voice_settings": {"speaking_rate": 0.25}}).to_string();
    // Five requests on one worker: while the first runs the others wait; then every client hangs up.
    let streams: Vec<TcpStream> = (0..5)
        .map(|_| {
            let mut stream = TcpStream::connect(&address).unwrap();
            let head = format!(
                "POST /v1/text-to-speech/zuri HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
            stream
        })
        .collect();
    common::wait_until(
        Instant::now() + Duration::from_secs(30),
        "the five syntheses reached the TTS actor",
        || at_the_tts_actor(&server) >= 5.0,
    );
    drop(streams);

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut cancelled = 0.0;
    while Instant::now() < deadline {
        cancelled = counter(&server, "sauti_cancelled_work_total{actor=\"tts\"}");
        if cancelled >= 4.0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        cancelled >= 4.0,
        "synthesis whose clients left was not stopped: {cancelled}"
    );
    let short = common::post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_B),
        &json!({"text": "Asante sana."}),
    );
    assert_eq!(
        short.status,
        200,
        "{}",
        String::from_utf8_lossy(&short.body)
    );
}

/// Seconds of CPU the process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which ends with the last ')'): utime and stime are the 12th and 13th.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn a_client_that_goes_away_stops_the_encoding_of_its_answer() {
    let _alone = common::alone();
    let data = common::temp_dir();
    let env = [
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000"),
    ];
    let server = Server::start(data.path(), &env);
    let created = common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari ya asubuhi."}),
    );
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let job = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(job["status"], "succeeded", "{job}");
    drop(server);
    // The job's audio becomes twenty minutes of a tone, so that encoding it as Opus takes a long while.
    let minutes = 20;
    let samples: Vec<f32> = (0..16_000 * 60 * minutes)
        .map(|i| (i as f32 * 2.0 * std::f32::consts::PI * 220.0 / 16_000.0).sin() * 0.3)
        .collect();
    std::fs::write(
        data.path().join(format!("jobs/{id}.wav")),
        sauti::audio::encode_wav_16k(&samples),
    )
    .unwrap();
    let server = Server::start(data.path(), &env);
    let counted = || counter(&server, "sauti_cancelled_work_total{actor=\"encoder\"}");
    let before = counted();

    let address = server.base.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&address).unwrap();
    let head = format!(
        "GET /v1/tts/jobs/{id}/audio?output_format=opus_48000_64 HTTP/1.1\r\nHost: {address}\r\n\
         xi-api-key: {KEY_A}\r\n\r\n"
    );
    let pid = server.child.id();
    let idle = cpu_seconds(pid);
    stream.write_all(head.as_bytes()).unwrap();
    // The client hangs up once the server is at work on its answer (its CPU time climbs).
    let deadline = Instant::now() + Duration::from_secs(60);
    while cpu_seconds(pid) < idle + 0.5 {
        assert!(
            Instant::now() < deadline,
            "the server never started the work"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stream);

    let deadline = Instant::now() + Duration::from_secs(60);
    while counted() < before + 1.0 {
        assert!(
            Instant::now() < deadline,
            "the encoding whose client left was not counted as cancelled"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And the work stopped: within a while the server is idle again, though twenty minutes of audio were not
    // encoded.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let start = cpu_seconds(pid);
        // The window the server's CPU time is measured over (not a wait for something to happen).
        std::thread::sleep(Duration::from_millis(500));
        if cpu_seconds(pid) - start < 0.2 {
            break;
        }
        assert!(Instant::now() < deadline, "the server kept encoding");
    }
    let short = common::post_json(
        &server.url("/v1/audio/speech"),
        Some(KEY_B),
        &json!({"model": "tts-1", "input": "Asante sana.", "voice": "zuri", "response_format": "opus"}),
    );
    assert_eq!(
        short.status,
        200,
        "{}",
        String::from_utf8_lossy(&short.body)
    );
}
