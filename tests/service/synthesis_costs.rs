//! What a synthesis costs, as every dialect tells it: the `character-cost` header on each synthesised answer (sync,
//! streamed, timed), and OpenAI's server-sent events (`stream_format: "sse"`), whose done event counts the same
//! characters; refusals still come first, as problems, before any event.

use crate::common;

use base64::Engine as _;
use common::*;

const TEXT: &str = "Mkutano wa wanahisa utafanyika Jumamosi ijayo. Karibu nyote, saa nne kamili.";

#[test]
fn every_synthesised_answer_carries_its_character_cost() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let chars = TEXT.chars().count().to_string();
    let text = serde_json::json!({ "text": TEXT });
    let openai = |extra: serde_json::Value| {
        let mut body = serde_json::json!({ "model": "tts-1", "voice": "zuri", "input": TEXT });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    for (path, body) in [
        ("/v1/text-to-speech/zuri", text.clone()),
        (
            "/v1/text-to-speech/zuri?output_format=mp3_44100_128",
            text.clone(),
        ),
        ("/v1/text-to-speech/zuri/stream", text.clone()),
        ("/v1/text-to-speech/zuri/with-timestamps", text.clone()),
        ("/elevenlabs/v1/text-to-speech/zuri", text.clone()),
        ("/elevenlabs/v1/text-to-speech/zuri/stream", text.clone()),
        (
            "/elevenlabs/v1/text-to-speech/zuri/with-timestamps",
            text.clone(),
        ),
        (
            "/elevenlabs/v1/text-to-speech/zuri/stream/with-timestamps",
            text.clone(),
        ),
        ("/v1/audio/speech", openai(serde_json::json!({}))),
        (
            "/v1/audio/speech",
            openai(serde_json::json!({ "stream_format": "audio" })),
        ),
        (
            "/v1/audio/speech",
            openai(serde_json::json!({ "stream_format": "sse" })),
        ),
    ] {
        let reply = post_json(&server.url(path), Some(KEY_A), &body);
        assert_eq!(
            reply.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(
            reply.header("character-cost"),
            Some(chars.as_str()),
            "{path} {body}"
        );
    }
    // A job is counted when it is queued: its 202 says what it costs, on both paths that queue one.
    let long = text_of(2_500);
    for (path, body) in [
        (
            "/v1/text-to-speech/zuri",
            serde_json::json!({ "text": long }),
        ),
        (
            "/v1/tts/jobs",
            serde_json::json!({ "text": long, "voice_id": "zuri" }),
        ),
    ] {
        let reply = post_json(&server.url(path), Some(KEY_A), &body);
        assert_eq!(reply.status, 202, "{path}");
        assert_eq!(reply.header("character-cost"), Some("2500"), "{path}");
    }
    // A refusal costs nothing and says so by not claiming a cost.
    let refused = post_json(
        &server.url("/v1/text-to-speech/no-such-voice"),
        Some(KEY_A),
        &text,
    );
    assert_eq!(refused.status, 404);
    assert_eq!(refused.header("character-cost"), None);
}

/// The `data:` events of an event stream, parsed.
fn events(body: &str) -> Vec<serde_json::Value> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let data = event
                .strip_prefix("data: ")
                .expect("each event is one data line");
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

#[test]
fn openai_speech_as_server_sent_events_is_the_same_audio_piece_by_piece() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let url = server.url("/v1/audio/speech");
    let body = |format: &str, stream: &str| {
        serde_json::json!({
            "model": "gpt-4o-mini-tts", "voice": "zuri", "input": TEXT,
            "response_format": format, "stream_format": stream,
        })
    };
    let whole = post_json(&url, Some(KEY_A), &body("pcm", "audio"));
    assert_eq!(whole.status, 200);
    let reply = post_json(&url, Some(KEY_A), &body("pcm", "sse"));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let sent = events(&String::from_utf8_lossy(&reply.body));
    // A delta per sentence at least (two here; resampled formats add the resampler's tail at the end), then
    // done, and nothing after it.
    let (done, deltas) = sent.split_last().unwrap();
    assert!(deltas.len() >= 2, "{sent:?}");
    assert_eq!(done["type"], "speech.audio.done");
    assert_eq!(done["usage"]["input_tokens"], TEXT.chars().count());
    assert_eq!(done["usage"]["output_tokens"], 0);
    let mut audio = Vec::new();
    for delta in deltas {
        assert_eq!(delta["type"], "speech.audio.delta");
        let piece = base64::engine::general_purpose::STANDARD
            .decode(delta["audio"].as_str().unwrap())
            .unwrap();
        assert!(!piece.is_empty());
        audio.extend(piece);
    }
    // The pieces joined are the whole answer's audio, sample for sample.
    assert_eq!(audio, whole.body);

    // In MP3 the deltas joined decode as one file.
    let reply = post_json(&url, Some(KEY_A), &body("mp3", "sse"));
    let mp3: Vec<u8> = events(&String::from_utf8_lossy(&reply.body))
        .iter()
        .filter(|e| e["type"] == "speech.audio.delta")
        .flat_map(|e| {
            base64::engine::general_purpose::STANDARD
                .decode(e["audio"].as_str().unwrap())
                .unwrap()
        })
        .collect();
    let decoded = sauti::audio::decode(&mp3, &Default::default()).unwrap();
    let seconds = decoded.samples.len() as f64 / f64::from(decoded.sample_rate);
    let expected = whole.body.len() as f64 / 2.0 / 24_000.0;
    assert!(
        (seconds - expected).abs() < 0.1,
        "{seconds} s vs {expected} s"
    );
}

#[test]
fn a_refused_event_stream_is_a_problem_before_any_event() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let url = server.url("/v1/audio/speech");
    let refusals = [
        (
            serde_json::json!({ "model": "tts-1", "voice": "no-such-voice", "input": TEXT, "stream_format": "sse" }),
            404,
        ),
        (
            serde_json::json!({ "model": "tts-1", "voice": "zuri", "input": "", "stream_format": "sse" }),
            422,
        ),
        (
            serde_json::json!({ "model": "tts-1", "voice": "zuri", "input": TEXT, "stream_format": "websocket" }),
            422,
        ),
        (
            serde_json::json!({ "model": "tts-1", "voice": "zuri", "input": TEXT, "stream_format": "sse", "response_format": "aac" }),
            422,
        ),
    ];
    for (body, status) in refusals {
        let reply = post_json(&url, Some(KEY_A), &body);
        let problem = problem_body(&reply, status);
        assert!(problem["detail"].as_str().is_some(), "{body}: {problem}");
        assert_eq!(reply.header("character-cost"), None, "{body}");
    }
}
