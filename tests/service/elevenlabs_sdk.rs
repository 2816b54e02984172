//! ElevenLabs' official Python SDK (pinned in tools/pypi.sh sdks), unchanged, against `/elevenlabs` of the real
//! server: voices (all, paged search, one), models, speech in the formats it names (decoded back by sauti and
//! ffmpeg), streaming, speed, an instant clone from two files used in a following synthesis and then deleted,
//! speech to text with timed words, and refusals the SDK raises with sauti's problem in their body.

use crate::common;

use common::ffmpeg::probe;
use common::multipart::{post_form, Part};
use common::*;
use serde_json::Value;

const SPEECH: &str = "audio/speech-pcm16-16000-1ch-2500ms.wav";

#[test]
fn the_elevenlabs_sdk_works_unchanged() {
    let data = temp_dir();
    let server = common::sdk::server(&data);
    let out = data.path().join("sdk");
    let path = |p: &str| fixture(p).to_str().unwrap().to_string();
    common::sdk::run(
        "elevenlabs_calls.py",
        &[
            &server.base,
            KEY_A,
            out.to_str().unwrap(),
            &path("clone/low.wav"),
            &path("clone/low.mp3"),
            &path(SPEECH),
        ],
    );
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect()
    };

    // Voices: all of them, and the same ones page by page.
    let voices = ids(&results["voices"]);
    assert!(
        voices.contains(&"zuri".into()) && voices.contains(&"baraka".into()),
        "{voices:?}"
    );
    let pages = results["pages"].as_array().unwrap();
    let mut paged: Vec<String> = pages.iter().flat_map(|p| ids(&p["ids"])).collect();
    assert_eq!(pages.len(), voices.len());
    assert!(pages.iter().all(|p| p["total_count"] == voices.len()));
    paged.sort();
    let mut sorted = voices.clone();
    sorted.sort();
    assert_eq!(paged, sorted);
    assert_eq!(results["zuri"]["category"], "premade");
    assert_eq!(results["zuri"]["labels"]["language"], "sw");
    assert!(ids(&results["models"]).contains(&"eleven_multilingual_v2".into()));

    // The subscription counts the characters the SDK's calls synthesised, as the server's own path does.
    let month = get(&server.url("/v1/user/subscription"), Some(KEY_A)).json();
    assert_eq!(results["subscription"]["tier"], "sauti");
    assert!(results["subscription"]["character_count"].as_i64().unwrap() > 500);
    assert_eq!(
        results["subscription"]["character_count"],
        month["character_count"]
    );
    assert_eq!(
        results["subscription"]["character_limit"],
        serde_json::Value::Null
    );
    assert_eq!(
        results["subscription"]["next_character_count_reset_unix"],
        month["next_character_count_reset_unix"]
    );

    // Speech: every format decodes to the rate it names and the same length.
    let read = |name: &str| std::fs::read(out.join(name)).unwrap();
    let (_, _, reference) = probe(&read("convert.wav_22050"), &[]);
    assert!(reference > 2.0);
    for (file, rate, input) in [
        ("convert.mp3_44100_128", 44_100, &[][..]),
        ("convert.mp3_22050_32", 22_050, &[]),
        ("default.mp3", 44_100, &[]),
        ("stream.mp3", 44_100, &[]),
        (
            "convert.pcm_16000",
            16_000,
            &["-f", "s16le", "-ar", "16000", "-ac", "1"],
        ),
        (
            "convert.ulaw_8000",
            8_000,
            &["-f", "mulaw", "-ar", "8000", "-ac", "1"],
        ),
        ("convert.opus_48000_64", 48_000, &[]),
        ("convert.wav_22050", 22_050, &[]),
    ] {
        let bytes = read(file);
        let (got, channels, seconds) = probe(&bytes, input);
        assert_eq!((got, channels), (rate, 1), "{file}");
        assert!(
            (seconds - reference).abs() < 0.05,
            "{file}: {seconds} vs {reference}"
        );
        if input.is_empty() {
            let decoded = sauti::audio::decode(&bytes, &Default::default()).unwrap();
            assert_eq!(decoded.sample_rate, rate, "{file}");
        }
    }
    let (_, _, slow) = probe(
        &read("slow.pcm"),
        &["-f", "s16le", "-ar", "16000", "-ac", "1"],
    );
    assert!(
        slow > reference * 1.4,
        "speed 0.5: {slow} s vs {reference} s"
    );

    // Refusals: ApiError with the status and sauti's problem as its body.
    let refused = |name: &str, status: u64, says: &str| {
        let r = &results[name];
        assert_eq!(r["status"], status, "{r}");
        assert!(r["body"]["detail"].as_str().unwrap().contains(says), "{r}");
    };
    refused("unknown_voice", 404, "alloy");
    refused("unknown_format", 422, "mp3_44100_128");
    refused("bad_model", 422, "scribe_v1");

    // Character timings: every character of the text, in order, times that never go back and stay within the
    // audio; the read text spells the number out.
    let timed = &results["timed"];
    let text = timed["text"].as_str().unwrap();
    let (_, _, spoken) = probe(&read("timed.wav"), &[]);
    let check = |alignment: &Value| -> String {
        let characters: Vec<&str> = alignment["characters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let numbers = |key: &str| -> Vec<f64> {
            alignment[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_f64().unwrap())
                .collect()
        };
        let (starts, ends) = (numbers("starts"), numbers("ends"));
        assert_eq!(starts.len(), characters.len());
        assert_eq!(ends.len(), characters.len());
        for i in 0..characters.len() {
            assert!(
                starts[i] <= ends[i] && ends[i] <= spoken + 0.001,
                "{alignment}"
            );
            assert!(i == 0 || starts[i] >= ends[i - 1] - 0.0011, "{alignment}");
        }
        // The speech fills the audio: the words begin near the start and end near the end.
        assert!(
            starts[0] < 0.5 && *ends.last().unwrap() > spoken - 0.6,
            "{spoken} s: {alignment}"
        );
        characters.concat()
    };
    assert_eq!(check(&timed["alignment"]), text);
    let read_text = check(&timed["normalized"]);
    assert!(read_text.contains("elfu kumi na mbili"), "{read_text}");
    assert!(!read_text.contains("12"), "{read_text}");
    // Streamed, a line comes for each sentence as it is made; joined, they time the whole text the same way.
    let streamed = results["timed_stream"].as_array().unwrap();
    let sentences = text.matches(['.', '!', '?']).count();
    assert!(streamed.len() >= sentences.max(2), "{streamed:?}");
    let mut joined = serde_json::json!({ "characters": [], "starts": [], "ends": [] });
    for line in streamed {
        for key in ["characters", "starts", "ends"] {
            let values = line[key].as_array().unwrap().clone();
            joined[key].as_array_mut().unwrap().extend(values);
        }
    }
    assert_eq!(check(&joined), text);
    let (_, _, streamed_seconds) = probe(
        &read("timed_stream.pcm"),
        &["-f", "s16le", "-ar", "16000", "-ac", "1"],
    );
    assert!((streamed_seconds - spoken).abs() < 0.05);

    // An instant clone from two files: usable at once, listed as this key's, then deleted.
    let voice = results["added"]["voice_id"].as_str().unwrap();
    assert_eq!(results["added"]["requires_verification"], false);
    let (rate, _, seconds) = probe(&read("cloned.wav"), &[]);
    assert_eq!(rate, 16_000);
    assert!(seconds > 1.0, "{seconds}");
    assert_eq!(results["cloned"]["name"], "Mwalimu Juma");
    // A voice cloned from an embedded one keeps its timings.
    let cloned_timed = &results["cloned_timed"];
    assert!(cloned_timed["characters"]
        .as_str()
        .unwrap()
        .starts_with("Karibu kliniki"));
    assert!(cloned_timed["last_end"].as_f64().unwrap() > 1.0);
    assert_eq!(results["cloned"]["category"], "cloned");
    assert_eq!(ids(&results["personal"]), [voice.to_string()]);
    assert_eq!(results["deleted"], "ok");
    assert_eq!(results["gone"]["status"], 404);
    // Another key never saw it.
    assert_eq!(
        get(&server.url(&format!("/v1/voices/{voice}")), Some(KEY_B)).status,
        404
    );

    // Speech to text: sauti's transcript, ISO 639-3, and the words timed with the spaces between them.
    let transcript = &results["transcript"];
    let bytes = std::fs::read(fixture(SPEECH)).unwrap();
    let seed = post_form(
        &server,
        "/v1/speech-to-text/",
        &[
            ("audio", Part::File("audio/wav", &bytes)),
            ("response_format", Part::Text("verbose_json")),
        ],
    )
    .json();
    assert_eq!(transcript["text"], seed["text"]);
    assert_eq!(transcript["language_code"], "swa");
    let words = transcript["words"].as_array().unwrap();
    let spoken: Vec<&Value> = words.iter().filter(|w| w["type"] == "word").collect();
    assert_eq!(spoken.len(), seed["words"].as_array().unwrap().len());
    assert!(!spoken.is_empty());
    let mut last = 0.0;
    for word in words {
        let (start, end) = (
            word["start"].as_f64().unwrap(),
            word["end"].as_f64().unwrap(),
        );
        assert!(last <= start + 1e-9 && start <= end, "{words:?}");
        last = end;
    }
    assert!(
        words.windows(2).all(|w| w[0]["type"] != w[1]["type"]),
        "{words:?}"
    );

    // English and French are Whisper's: English words timed by forced alignment with the CTC model, French ones
    // by Whisper's own timestamps. Either way every word of the text, in order, inside the window.
    for language in ["english", "french"] {
        let heard = &results[language];
        let words: Vec<&Value> = heard["words"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["type"] == "word")
            .collect();
        let text = heard["text"].as_str().unwrap();
        assert!(!text.is_empty(), "{language}");
        let said: Vec<&str> = words.iter().map(|w| w["text"].as_str().unwrap()).collect();
        assert_eq!(
            said,
            text.split_whitespace().collect::<Vec<_>>(),
            "{language}"
        );
        let mut last = 0.0;
        for word in &words {
            let start = word["start"].as_f64().unwrap();
            let end = word["end"].as_f64().unwrap();
            assert!(
                last <= start + 1e-9 && start <= end && end <= 2.5 + 1e-9,
                "{language}: {words:?}"
            );
            last = end;
        }
    }
    let direct = post_form(
        &server,
        "/elevenlabs/v1/speech-to-text",
        &[
            ("file", Part::File("audio/wav", &bytes)),
            ("model_id", Part::Text("scribe_v1")),
            ("language_code", Part::Text("en")),
        ],
    );
    assert_eq!(direct.header("sauti-word-timing"), Some("forced-alignment"));
    let french = post_form(
        &server,
        "/elevenlabs/v1/speech-to-text",
        &[
            ("file", Part::File("audio/wav", &bytes)),
            ("model_id", Part::Text("scribe_v1")),
            ("language_code", Part::Text("fr")),
        ],
    );
    assert_eq!(
        french.header("sauti-word-timing"),
        Some("whisper-timestamps")
    );
    // Key terms are taken (the CTC model searches with them) and checked first.
    assert!(results["hinted"]["words"].as_u64().unwrap() > 0);
    assert_eq!(results["bad_keyterm"]["status"], 422);
}

#[test]
fn an_instant_clone_takes_at_most_25_files() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let clip = std::fs::read(fixture("clone/short.wav")).unwrap();
    let mut parts = vec![("name", Part::Text("Wengi"))];
    parts.extend((0..26).map(|_| ("files", Part::File("audio/wav", clip.as_slice()))));
    let reply = post_form(&server, "/elevenlabs/v1/voices/add", &parts);
    let detail = problem_body(&reply, 422)["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(detail.contains("at most 25"), "{detail}");
}
