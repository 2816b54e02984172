//! Black-box tests of the HTTP contract: the real binary on 127.0.0.1:0, real HTTP.

use crate::common;

use std::time::Duration;

use base64::Engine as _;
use common::*;
use serde_json::json;

fn assert_problem(reply: &Reply, status: u16, code: &str) {
    let body = problem_body(reply, status);
    assert_eq!(
        body["type"],
        format!("https://api.sauti.test/errors/{code}"),
        "{body}"
    );
    assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(body["detail"].as_str().is_some_and(|t| !t.is_empty()));
}

fn assert_rate_headers(reply: &Reply, limit: u32) {
    assert_eq!(
        reply.header("x-ratelimit-limit"),
        Some(limit.to_string().as_str()),
        "headers {:?}",
        reply.headers
    );
    let remaining: u32 = reply
        .header("x-ratelimit-remaining")
        .and_then(|v| v.parse().ok())
        .expect("remaining");
    assert!(remaining < limit);
    let reset: u64 = reply
        .header("x-ratelimit-reset")
        .and_then(|v| v.parse().ok())
        .expect("reset");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    assert!(
        reset >= now && reset <= now + 61,
        "reset {reset} vs now {now}"
    );
}

#[test]
fn keys_are_required_and_errors_are_problems_with_rate_headers() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    let missing = get(&server.url("/v1/voices"), None);
    assert_problem(&missing, 401, "unauthorized");
    assert_rate_headers(&missing, 30);
    let wrong = get(&server.url("/v1/voices"), Some("not-a-key-at-all"));
    assert_problem(&wrong, 401, "unauthorized");

    let unknown_voice = get(&server.url("/v1/voices/nobody"), Some(KEY_A));
    assert_problem(&unknown_voice, 404, "not_found");
    assert_rate_headers(&unknown_voice, 30);
    let empty = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &json!({"text": "   "}),
    );
    assert_problem(&empty, 422, "unprocessable_content");
    assert_rate_headers(&empty, 10);

    assert_problem(
        &get(&server.url("/v1/no-such-thing"), Some(KEY_A)),
        404,
        "not_found",
    );
    assert_problem(&get(&server.url("/elsewhere"), None), 404, "not_found");
    let wrong_method = method("DELETE", &server.url("/v1/voices"), Some(KEY_A));
    assert_problem(&wrong_method, 405, "method_not_allowed");
    assert!(wrong_method
        .header("allow")
        .is_some_and(|a| a.contains("GET")));

    // Health probes need no key.
    assert_eq!(get(&server.url("/healthz"), None).status, 200);
    let ready = get(&server.url("/readyz"), None);
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["status"], "ready");
}

#[test]
fn the_eleventh_synthesis_in_a_minute_is_refused_but_other_keys_are_not() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    let url = server.url("/v1/text-to-speech/zuri");
    for i in 0..10 {
        let ok = post_json(&url, Some(KEY_A), &json!({"text": "Asante"}));
        assert_eq!(ok.status, 200, "request {i}");
        assert_eq!(
            ok.header("x-ratelimit-remaining"),
            Some((9 - i).to_string().as_str())
        );
    }
    let limited = post_json(&url, Some(KEY_A), &json!({"text": "Asante"}));
    assert_problem(&limited, 429, "rate_limit_exceeded");
    let retry: u64 = limited
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
    let detail = limited.json()["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        detail.contains("10 requests per minute for synthesis"),
        "{detail}"
    );
    // Jobs share the synthesis category; other categories and other keys are unaffected.
    assert_eq!(
        post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({"text": "Habari"})
        )
        .status,
        429
    );
    assert_eq!(get(&server.url("/v1/voices"), Some(KEY_A)).status, 200);
    assert_eq!(
        post_json(&url, Some(KEY_B), &json!({"text": "Asante"})).status,
        200
    );
}

#[test]
fn text_to_speech_returns_a_16k_mono_wav_and_validates_input() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100")],
    );
    let text = "Habari ya asubuhi! Salio lako ni TSh 12,500.";
    let reply = post_json(
        &server.url("/v1/text-to-speech/baraka"),
        Some(KEY_A),
        &json!({"text": text, "voice_settings": {"speaking_rate": 1.2}}),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert_eq!(body["content_type"], "audio/wav");
    assert_eq!(body["voice_id"], "baraka");
    assert_eq!(body["characters_synthesized"], text.chars().count());
    let wav = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().unwrap_or_default())
        .expect("base64");
    let (rate, channels, seconds) = wav_properties(&wav);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(
        (seconds - body["duration_seconds"].as_f64().unwrap_or(0.0)).abs() < 0.002,
        "{seconds} vs {body}"
    );
    assert!(seconds > 1.0);

    let url = server.url("/v1/text-to-speech/zuri");
    let too_long = post_json(&url, Some(KEY_A), &json!({"text": "a".repeat(5_001)}));
    assert_problem(&too_long, 422, "unprocessable_content");
    assert!(too_long.json()["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("`text` exceeds the maximum length of 5000 characters"));
    assert_problem(
        &post_json(&url, Some(KEY_A), &json!({"text": ""})),
        422,
        "unprocessable_content",
    );
    assert_problem(
        &post_json(&url, Some(KEY_A), &json!({"txt": "Habari"})),
        422,
        "unprocessable_content",
    );
    assert_problem(
        &post_json(&url, Some(KEY_A), &json!({"text": 5})),
        422,
        "unprocessable_content",
    );
    assert_problem(
        &post_json(&url, Some(KEY_A), &json!({"text": "?!"})),
        422,
        "unprocessable_content",
    );
    for settings in [
        json!({"speaking_rate": 0}),
        json!({"noise_scale": 9}),
        json!({"noise_scale_duration": -1}),
        json!({"pitch": 2}),
    ] {
        let reply = post_json(
            &url,
            Some(KEY_A),
            &json!({"text": "Habari", "voice_settings": settings}),
        );
        assert_problem(&reply, 422, "unprocessable_content");
    }
    assert_problem(
        &post_json(
            &server.url("/v1/text-to-speech/nobody"),
            Some(KEY_A),
            &json!({"text": "Habari"}),
        ),
        404,
        "not_found",
    );
    assert_problem(
        &post_raw(&url, Some(KEY_A), "application/json", b"{\"text\": "),
        400,
        "bad_request",
    );
    assert_problem(
        &post_raw(&url, Some(KEY_A), "text/plain", b"Habari"),
        415,
        "unsupported_media_type",
    );
}

#[test]
fn long_texts_become_jobs_that_belong_to_their_key() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100")],
    );
    let created = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &json!({"text": text_of(2_001)}),
    );
    assert_eq!(
        created.status,
        202,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let body = created.json();
    assert_eq!(body["status"], "queued");
    assert!(body["created_at"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    let first = body["job_id"].as_str().expect("job_id").to_string();
    // A second job waits behind the first (one job worker), so its audio is not ready yet.
    let second = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": text_of(2_500), "voice_id": "baraka"}),
    );
    assert_eq!(second.status, 202);
    let second = second.json()["job_id"]
        .as_str()
        .expect("job_id")
        .to_string();
    let early = get(
        &server.url(&format!("/v1/tts/jobs/{second}/audio")),
        Some(KEY_A),
    );
    assert_problem(&early, 409, "job_not_complete");

    // Another key sees nothing of these jobs.
    assert_problem(
        &get(&server.url(&format!("/v1/tts/jobs/{first}")), Some(KEY_B)),
        404,
        "not_found",
    );
    assert_problem(
        &get(
            &server.url(&format!("/v1/tts/jobs/{first}/audio")),
            Some(KEY_B),
        ),
        404,
        "not_found",
    );
    assert_problem(
        &get(&server.url("/v1/tts/jobs/job_unknown"), Some(KEY_A)),
        404,
        "not_found",
    );

    for job in [&first, &second] {
        let done = wait_for_job(&server, KEY_A, job, Duration::from_secs(120));
        assert_eq!(done["status"], "succeeded", "{done}");
        assert!(done["completed_at"].as_str().is_some());
        assert_eq!(done["progress"], 1.0);
        let audio = get(
            &server.url(&format!("/v1/tts/jobs/{job}/audio")),
            Some(KEY_A),
        );
        assert_eq!(audio.status, 200);
        assert_eq!(audio.header("content-type"), Some("audio/wav"));
        let (rate, channels, seconds) = wav_properties(&audio.body);
        assert_eq!((rate, channels), (16_000, 1));
        assert!((seconds - done["duration_seconds"].as_f64().unwrap_or(0.0)).abs() < 0.002);
        assert!(
            seconds > 100.0,
            "2,000+ characters last minutes, got {seconds} s"
        );
    }
    let too_long = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "a".repeat(20_001)}),
    );
    assert_problem(&too_long, 422, "unprocessable_content");
    let unknown_voice = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari", "voice_id": "nobody"}),
    );
    assert_problem(&unknown_voice, 404, "not_found");
}

#[test]
fn voices_list_filter_and_lookup() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    let all = get(&server.url("/v1/voices"), Some(KEY_A)).json();
    let voices = all["voices"].as_array().expect("voices array");
    let ids: Vec<&str> = voices
        .iter()
        .filter_map(|v| v["voice_id"].as_str())
        .collect();
    assert_eq!(ids, ["zuri", "baraka", "mms-swh", "piper-lanfrica"]);
    for voice in voices {
        for field in [
            "voice_id",
            "name",
            "language_code",
            "locale",
            "gender",
            "description",
            "status",
        ] {
            assert!(
                voice[field].as_str().is_some_and(|v| !v.is_empty()),
                "{field} in {voice}"
            );
        }
        if voice["engine"] == "formant" {
            assert_eq!(voice["status"], "active");
        } else {
            // Neural voices whose models are not installed say how to install them.
            assert_eq!(voice["status"], "inactive", "{voice}");
            let detail = voice["status_detail"].as_str().unwrap_or_default();
            assert!(detail.contains("sauti models fetch"), "{voice}");
            let tts = post_json(
                &server.url(&format!(
                    "/v1/text-to-speech/{}",
                    voice["voice_id"].as_str().unwrap()
                )),
                Some(KEY_A),
                &json!({"text": "Habari"}),
            );
            assert_problem(&tts, 503, "voice_inactive");
        }
    }
    assert_eq!(voices[2]["licence"], "CC-BY-NC-4.0");
    assert_eq!(
        get(&server.url("/v1/voices?language=sw"), Some(KEY_A)).json()["voices"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );
    assert_eq!(
        get(&server.url("/v1/voices?language=en"), Some(KEY_A)).json()["voices"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
    let zuri = get(&server.url("/v1/voices/zuri"), Some(KEY_A));
    assert_eq!(zuri.status, 200);
    assert_eq!(zuri.json()["locale"], "sw-TZ");
}

#[test]
fn upload_endpoints_need_a_key_and_a_form() {
    let dir = temp_dir();
    let server = Server::start(dir.path(), &[]);
    for path in [
        "/v1/speech-to-text/",
        "/v1/voice-clone/",
        "/v1/voice-agent/converse/audio",
    ] {
        let without_key = post_raw(&server.url(path), None, "application/json", b"{}");
        assert_problem(&without_key, 401, "unauthorized");
        let json = post_raw(&server.url(path), Some(KEY_A), "application/json", b"{}");
        assert_problem(&json, 415, "unsupported_media_type");
    }
}

#[test]
fn a_full_synthesis_queue_answers_server_busy() {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI__TTS__WORKERS", "1"),
            ("SAUTI__TTS__QUEUE", "0"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100"),
        ],
    );
    let url = server.url("/v1/text-to-speech/zuri");
    let text = text_of(2_000);
    let replies: Vec<Reply> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| post_json(&url, Some(KEY_A), &json!({"text": text}))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("request thread"))
            .collect()
    });
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let busy: Vec<&Reply> = replies.iter().filter(|r| r.status == 503).collect();
    assert!(
        ok >= 1 && !busy.is_empty(),
        "statuses {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    for reply in busy {
        assert_problem(reply, 503, "server_busy");
        assert!(reply.header("retry-after").is_some());
    }
}
