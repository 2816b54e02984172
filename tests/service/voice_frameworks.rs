//! The voice-agent frameworks people build with, from PyPI (pinned in tools/pypi.sh frameworks), unchanged and pointed
//! at sauti by their base URL only: Pipecat's `ElevenLabsTTSService` and LiveKit Agents' ElevenLabs plugin stream
//! replies in word by word over the multi-context socket and get the whole reply's audio back with word times;
//! LiveKit closes a context mid-speech (a barge-in) while the next reply speaks, and the next reply still
//! arrives whole.

use crate::common;

use common::*;
use serde_json::{json, Value};

/// Seconds of the same text synthesised in one request.
fn reference_seconds(server: &Server, voice: &str, text: &str) -> f64 {
    let reply = post_json(
        &server.url(&format!(
            "/elevenlabs/v1/text-to-speech/{voice}?output_format=pcm_16000"
        )),
        Some(KEY_A),
        &json!({ "text": text }),
    );
    assert_eq!(reply.status, 200);
    reply.body.len() as f64 / 32_000.0
}

fn server(data: &tempfile::TempDir) -> Server {
    Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ],
    )
}

fn assert_whole(what: &str, seconds: f64, reference: f64) {
    let ratio = seconds / reference;
    assert!(
        (0.85..1.3).contains(&ratio),
        "{what}: {seconds:.2} s received, {reference:.2} s for the text at once"
    );
}

#[test]
fn pipecat_speaks_a_reply_streamed_word_by_word() {
    let data = temp_dir();
    let server = server(&data);
    let out = data.path().join("pipecat");
    let base = server.base.replace("http://", "ws://") + "/elevenlabs";
    common::sdk::run_framework(
        "pipecat_calls.py",
        &[&base, KEY_A, "zuri", out.to_str().unwrap()],
    );
    let replies: Vec<Value> =
        serde_json::from_slice(&std::fs::read(out.join("pipecat.json")).unwrap()).unwrap();
    assert_eq!(replies.len(), 2, "both replies, on one socket");
    for reply in &replies {
        let text = reply["text"].as_str().unwrap();
        assert_eq!(reply["errors"], json!([]), "{reply}");
        let seconds = reply["seconds"].as_f64().unwrap();
        assert_whole(text, seconds, reference_seconds(&server, "zuri", text));
        // Every word, timed in order within the audio.
        let words = reply["words"].as_array().unwrap();
        let spoken: Vec<&str> = words.iter().map(|w| w[0].as_str().unwrap()).collect();
        assert_eq!(spoken.join(" "), text, "{reply}");
        let times: Vec<f64> = words.iter().map(|w| w[1].as_f64().unwrap()).collect();
        assert!(times.windows(2).all(|t| t[0] < t[1]), "{times:?}");
        assert!(times[times.len() - 1] < seconds, "{times:?} in {seconds} s");
    }
}

#[test]
fn livekit_agents_speaks_replies_and_survives_a_barge_in() {
    let data = temp_dir();
    let server = server(&data);
    let out = data.path().join("livekit");
    let base = server.base.clone() + "/elevenlabs/v1";
    common::sdk::run_framework(
        "livekit_calls.py",
        &[&base, KEY_A, "baraka", out.to_str().unwrap()],
    );
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("livekit.json")).unwrap()).unwrap();
    let first =
        "Karibu kwenye huduma ya wateja wa benki. Akaunti yako iko salama na salio lako ni \
                 shilingi elfu tano.";
    let second =
        "Samahani, nimekuelewa. Nitakuunganisha na mhudumu sasa hivi, tafadhali subiri kidogo.";
    let (first_seconds, second_seconds) = (
        reference_seconds(&server, "baraka", first),
        reference_seconds(&server, "baraka", second),
    );
    // The plugin's default encoding (MP3 at 22.05 kHz) and PCM both decode to the whole reply, with its words.
    for (run, rate) in [("mp3", 22_050), ("pcm", 16_000)] {
        let result = &results[run];
        assert_eq!(result["rate"], rate, "{run}");
        assert_whole(run, result["seconds"].as_f64().unwrap(), first_seconds);
        let words = result["words"].as_array().unwrap();
        assert_eq!(words.len(), first.split(' ').count(), "{run}: {words:?}");
        // The plugin asks for sync_alignment: its word times run on with the audio, across messages.
        let starts: Vec<f64> = words.iter().map(|w| w[1].as_f64().unwrap()).collect();
        assert!(starts.windows(2).all(|s| s[0] < s[1]), "{run}: {starts:?}");
        assert!(
            words.iter().all(|w| w[1].as_f64() <= w[2].as_f64()),
            "{words:?}"
        );
        let seconds = result["seconds"].as_f64().unwrap();
        assert!(
            starts[starts.len() - 1] < seconds,
            "{starts:?} in {seconds} s"
        );
    }
    // Interrupted mid-speech, the long reply's context is closed; the reply speaking meanwhile arrives whole,
    // and the next turn on the same socket too.
    let next = &results["barge_in"]["next"];
    assert_whole(
        "after the barge-in",
        next["seconds"].as_f64().unwrap(),
        second_seconds,
    );
    assert!(!next["words"].as_array().unwrap().is_empty());
    assert_whole(
        "the next turn",
        results["after"]["seconds"].as_f64().unwrap(),
        second_seconds,
    );
}
