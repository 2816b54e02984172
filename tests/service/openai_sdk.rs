//! OpenAI's official Python SDK (pinned in tools/pypi.sh sdks), unchanged, against the real server: models, speech in
//! every format it names (decoded back by sauti and by ffmpeg), streaming, speed, refusals the SDK turns into
//! readable exceptions, and transcriptions that equal sauti's own path for the same audio — Swahili through the
//! CTC fixture (with word timings), English through the Whisper fixture.

use crate::common;

use common::ffmpeg::probe;
use common::multipart::{post_form, Part};
use common::*;
use serde_json::Value;

const SPEECH: &str = "audio/speech-pcm16-16000-1ch-2500ms.wav";

/// sauti's own transcription of the fixture in `language` and `format`.
fn seed(server: &Server, language: &str, format: &str) -> Reply {
    let bytes = std::fs::read(fixture(SPEECH)).unwrap();
    let reply = post_form(
        server,
        "/v1/speech-to-text/",
        &[
            ("audio", Part::File("audio/wav", &bytes)),
            ("language", Part::Text(language)),
            ("response_format", Part::Text(format)),
        ],
    );
    assert_eq!(reply.status, 200);
    reply
}

#[test]
fn the_openai_sdk_works_unchanged() {
    let data = temp_dir();
    let server = common::sdk::server(&data);
    let out = data.path().join("sdk");
    let speech = fixture(SPEECH);
    let speech = speech.to_str().unwrap();
    common::sdk::run(
        "openai_calls.py",
        &[&server.base, KEY_A, out.to_str().unwrap(), speech, speech],
    );
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();

    let models: Vec<&str> = results["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for id in ["tts-1", "whisper-1", "sauti-tts", "sauti-stt"] {
        assert!(models.contains(&id), "{models:?}");
    }
    assert_eq!(results["model"], "whisper-1");

    // Every format the SDK names (aac aside) decodes to the length of the same text in WAV.
    let read = |name: &str| std::fs::read(out.join(name)).unwrap();
    let (_, _, reference) = probe(&read("speech.wav"), &[]);
    assert!(reference > 2.0, "{reference} s");
    for (file, rate, input) in [
        ("speech.mp3", 44_100, &[][..]),
        ("default.mp3", 44_100, &[]),
        ("speech.opus", 48_000, &[]),
        ("streamed.opus", 48_000, &[]),
        ("speech.flac", 24_000, &[]),
        ("speech.wav", 24_000, &[]),
        (
            "speech.pcm",
            24_000,
            &["-f", "s16le", "-ar", "24000", "-ac", "1"],
        ),
        (
            "sse.pcm",
            24_000,
            &["-f", "s16le", "-ar", "24000", "-ac", "1"],
        ),
    ] {
        let bytes = read(file);
        let (got, channels, seconds) = probe(&bytes, input);
        assert_eq!((got, channels), (rate, 1), "{file}");
        // default.mp3 is another voice: its own length.
        if file != "default.mp3" {
            assert!(
                (seconds - reference).abs() < 0.05,
                "{file}: {seconds} vs {reference}"
            );
        }
        if input.is_empty() {
            let decoded = sauti::audio::decode(&bytes, &Default::default()).unwrap();
            assert_eq!(decoded.sample_rate, rate, "{file}");
        }
    }
    // The events: a delta per sentence (two here) before the one done event, which counts the characters.
    let sse = &results["sse"];
    assert!(
        sse["content_type"]
            .as_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "{sse}"
    );
    let kinds: Vec<&str> = sse["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(kinds.len() >= 3, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"speech.audio.done"), "{kinds:?}");
    assert!(kinds[..kinds.len() - 1]
        .iter()
        .all(|k| *k == "speech.audio.delta"));
    let text = "Habari za mchana. Mkopo wako wa shilingi laki tano umeidhinishwa leo.";
    assert_eq!(sse["done"]["usage"]["input_tokens"], text.chars().count());
    assert_eq!(sse["done"]["usage"]["total_tokens"], text.chars().count());
    let (_, _, fast) = probe(&read("fast.wav"), &[]);
    assert!(
        fast < reference * 0.7,
        "speed 2.0: {fast} s vs {reference} s"
    );

    // Refusals arrive as the SDK's exceptions, with sauti's detail in their message.
    let refusal = |name: &str, class: &str, status: u64, says: &str| {
        let r = &results[name];
        assert_eq!(r["class"], class, "{r}");
        assert_eq!(r["status"], status, "{r}");
        assert!(r["message"].as_str().unwrap().contains(says), "{r}");
        assert!(
            r["request_id"].as_str().is_some_and(|id| !id.is_empty()),
            "{r}"
        );
    };
    refusal("unknown_voice", "NotFoundError", 404, "alloy");
    refusal("aac", "UnprocessableEntityError", 422, "AAC");
    refusal("unknown_model", "NotFoundError", 404, "eleven_v3");
    refusal("wrong_key", "AuthenticationError", 401, "invalid API key");
    refusal(
        "bad_language",
        "UnprocessableEntityError",
        422,
        "unsupported language",
    );

    // Transcripts through the SDK are sauti's own, in every response format.
    let t = &results["transcripts"];
    for language in ["sw", "en"] {
        let json = seed(&server, language, "json").json();
        assert_eq!(t[format!("{language}_json")], json["text"], "{language}");
        assert_eq!(t[format!("{language}_text")], json["text"], "{language}");
        for captions in ["srt", "vtt"] {
            let document = String::from_utf8(seed(&server, language, captions).body).unwrap();
            assert_eq!(t[format!("{language}_{captions}")], document.as_str());
        }
        let verbose = seed(&server, language, "verbose_json").json();
        let sdk = &t[format!("{language}_verbose")];
        assert_eq!(sdk["text"], verbose["text"]);
        assert_eq!(sdk["duration"], verbose["duration_seconds"]);
        let segments: Vec<(Value, Value)> = verbose["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["start"].clone(), s["end"].clone()))
            .collect();
        let via_sdk: Vec<(Value, Value)> = sdk["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["start"].clone(), s["end"].clone()))
            .collect();
        assert_eq!(segments, via_sdk, "{language}");
    }
    assert_eq!(t["sw_verbose"]["language"], "swahili");
    assert_eq!(t["en_verbose"]["language"], "english");
    // The CTC model times every word; they are in order and within the audio.
    let words = t["sw_verbose"]["words"].as_array().unwrap();
    assert!(!words.is_empty(), "{t}");
    let duration = t["sw_verbose"]["duration"].as_f64().unwrap();
    let mut last = 0.0;
    for word in words {
        let (start, end) = (
            word["start"].as_f64().unwrap(),
            word["end"].as_f64().unwrap(),
        );
        assert!(
            last <= start && start <= end && end <= duration + 1e-3,
            "{words:?}"
        );
        last = end;
    }
    // Translation: Whisper's translate task over the same audio, in OpenAI's shapes.
    let translated = &results["translations"];
    assert_eq!(translated["json"], translated["text"]);
    assert_eq!(translated["verbose"]["text"], translated["json"]);
    assert_eq!(translated["verbose"]["task"], "translate");
    assert_eq!(translated["verbose"]["language"], "english");
    assert_eq!(translated["verbose"]["duration"], duration);
    for segment in translated["verbose"]["segments"].as_array().unwrap() {
        assert!(
            segment["end"].as_f64().unwrap() <= duration + 1e-3,
            "{segment}"
        );
    }
    let seed_words = seed(&server, "sw", "verbose_json").json()["words"].clone();
    assert_eq!(words.len(), seed_words.as_array().unwrap().len());
}
