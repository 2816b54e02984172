//! OpenAI's realtime transcription sessions through the official `openai` SDK's realtime client (pinned in
//! tools/pypi.sh sdks), unchanged, pointed at sauti by its base URL: a committed turn's transcript equals the HTTP
//! transcription of the same audio; with server VAD the speech events come in order and the CTC model sends
//! deltas while the caller is still speaking; G.711 μ-law is heard; mistakes are error events and the session
//! goes on; refusals before the upgrade are problems.

use crate::common;

use common::*;
use serde_json::Value;

fn types(events: &Value) -> Vec<&str> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect()
}

fn position(events: &Value, kind: &str) -> usize {
    types(events)
        .iter()
        .position(|t| *t == kind)
        .unwrap_or_else(|| panic!("no {kind} in {events}"))
}

fn completed(events: &Value) -> String {
    let last = events.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["type"], "conversation.item.input_audio_transcription.completed",
        "{events}"
    );
    last["transcript"].as_str().unwrap().to_string()
}

#[test]
fn the_openai_sdk_s_realtime_client_transcribes_live() {
    let data = temp_dir();
    let server = common::sdk::server(&data);
    let out = data.path().join("realtime");
    let base = server.base.clone() + "/v1";
    common::sdk::run("openai_realtime.py", &[&base, KEY_A, out.to_str().unwrap()]);
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("realtime.json")).unwrap()).unwrap();
    let http = results["http"].as_str().unwrap();
    assert!(!http.trim().is_empty());

    // Committed by the client: the same audio, the same transcript, said once in deltas.
    let committed = &results["committed"];
    assert_eq!(
        types(committed)[..2],
        ["session.created", "session.updated"]
    );
    assert!(position(committed, "input_audio_buffer.committed") > 1);
    assert_eq!(completed(committed), http);
    let deltas: String = committed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(deltas, http);

    // Server VAD: started, a delta while the caller still speaks, stopped, committed, completed.
    let vad = &results["vad"];
    let started = position(vad, "input_audio_buffer.speech_started");
    let stopped = position(vad, "input_audio_buffer.speech_stopped");
    let delta = position(vad, "conversation.item.input_audio_transcription.delta");
    assert!(started < delta && delta < stopped, "{vad}");
    assert!(stopped < position(vad, "input_audio_buffer.committed"));
    assert!(!completed(vad).trim().is_empty());
    let items: Vec<&str> = vad
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["item_id"].as_str())
        .collect();
    assert!(
        items.windows(2).all(|w| w[0] == w[1]),
        "one turn, one item: {items:?}"
    );
    let start_ms = vad[started]["audio_start_ms"].as_u64().unwrap();
    let end_ms = vad[stopped]["audio_end_ms"].as_u64().unwrap();
    assert!(end_ms > start_ms + 1_000, "{start_ms} → {end_ms}");

    assert!(!completed(&results["ulaw"]).trim().is_empty());
    assert_eq!(
        results["refusals"],
        serde_json::json!(["invalid_value", "input_audio_buffer_commit_empty"])
    );

    // Before the upgrade: the intent is required, then the WebSocket.
    problem_body(&get(&server.url("/v1/realtime"), Some(KEY_A)), 422);
    problem_body(
        &get(
            &server.url("/v1/realtime?intent=transcription"),
            Some(KEY_A),
        ),
        426,
    );
    problem_body(
        &get(
            &server.url("/v1/realtime?intent=transcription&model=tts-1"),
            Some(KEY_A),
        ),
        404,
    );
}
