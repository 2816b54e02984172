//! The model lists say what is installed: each name with the engines behind it and the languages (and voices)
//! they serve, in the OpenAI and ElevenLabs dialects; a server without a recognizer lists none for
//! recognition, and one with a CTC model for Swahili lists it beside Whisper for the other languages.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn engines(models: &Value, id: &str) -> Value {
    models["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {models}"))["engines"]
        .clone()
}

fn eleven<'a>(models: &'a Value, id: &str) -> &'a Value {
    models
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model_id"] == id)
        .unwrap_or_else(|| panic!("{id} in {models}"))
}

#[test]
fn the_model_lists_name_the_engines_installed() {
    let data = temp_dir();
    let plain = Server::start(data.path(), &[]);
    let models = get(&plain.url("/v1/models"), Some(KEY_A)).json();
    let speech = engines(&models, "tts-1");
    assert_eq!(speech.as_array().unwrap().len(), 1, "{speech}");
    assert_eq!(speech[0]["engine"], "formant");
    assert_eq!(speech[0]["languages"], json!(["sw"]));
    for voice in ["zuri", "baraka"] {
        assert!(speech[0]["voices"]
            .as_array()
            .unwrap()
            .contains(&json!(voice)));
    }
    assert_eq!(engines(&models, "whisper-1"), json!([]));
    let one = get(&plain.url("/v1/models/sauti-stt"), Some(KEY_A)).json();
    assert_eq!(one["engines"], json!([]));
    let listed = get(&plain.url("/elevenlabs/v1/models"), Some(KEY_A)).json();
    assert_eq!(eleven(&listed, "scribe_v1")["languages"], json!([]));
    assert_eq!(
        eleven(&listed, "eleven_multilingual_v2")["languages"],
        json!([{"language_id": "sw", "name": "Swahili"}])
    );
    drop(plain);

    let data = temp_dir();
    let routed = common::sdk::server(&data);
    let models = get(&routed.url("/v1/models"), Some(KEY_A)).json();
    let recognition = engines(&models, "gpt-4o-transcribe");
    let by_engine = |engine: &str| {
        recognition
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["engine"] == engine)
            .unwrap_or_else(|| panic!("{engine} in {recognition}"))["languages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(by_engine("ctc"), ["sw"]);
    let whisper = by_engine("whisper");
    assert_eq!(whisper.len(), 10, "{whisper:?}");
    assert!(whisper.contains(&"en".to_string()) && !whisper.contains(&"sw".to_string()));
    let listed = get(&routed.url("/elevenlabs/v1/models"), Some(KEY_A)).json();
    let languages = eleven(&listed, "scribe_v2")["languages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(languages, 11);
}
