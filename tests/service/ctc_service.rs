//! Speech recognition routed by language, black-box against `sauti serve`: Swahili through the tiny CTC fixture
//! (`tools/make_ctc_fixtures.py`), English through the tiny Whisper fixture; word timings in `verbose_json`,
//! captions in SubRip and WebVTT, and 503s that name what to install.

use crate::common;

use common::multipart::{post_form, Part};
use common::Server;

/// The upload formats, their media types and lengths in seconds.
const UPLOADS: [(&str, &str, f64); 5] = [
    ("whisper/speech.wav", "audio/wav", 2.5),
    ("audio/tone-mp3-44100-2ch-1000ms.mp3", "audio/mpeg", 1.0),
    ("audio/speech-opus-48000-1ch-2500ms.webm", "audio/webm", 2.5),
    ("audio/tone-flac-48000-2ch-1000ms.flac", "audio/flac", 1.0),
    ("audio/speech-opus-48000-1ch-2500ms.ogg", "audio/ogg", 2.5),
];

/// A server whose `[[asr.ctc]]` routes Swahili to `ctc_model` (catalog entry `swahili-test`) and whose Whisper is
/// `whisper_model`.
fn start(data: &tempfile::TempDir, ctc_model: &str, whisper_model: &str) -> Server {
    start_with(data, ctc_model, whisper_model, &[])
}

/// [`start`] with more settings.
fn start_with(
    data: &tempfile::TempDir,
    ctc_model: &str,
    whisper_model: &str,
    more: &[(&str, &str)],
) -> Server {
    let config = data.path().join("routes.toml");
    std::fs::write(
        &config,
        format!(
            "[[asr.ctc]]\nlanguages = [\"sw\"]\nmodel = {ctc_model:?}\ncatalog = \"swahili-test\"\n\
             window_seconds = 2.0\noverlap_seconds = 0.5\n"
        ),
    )
    .unwrap();
    let library = common::onnxruntime();
    let mut env = vec![
        ("SAUTI__ASR__MODEL", whisper_model),
        ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(more);
    Server::start_with_config(data.path(), &config, &env)
}

fn fixture(path: &str) -> String {
    common::fixture(path).to_str().unwrap().to_string()
}

fn transcribe(server: &Server, file: &str, media: &str, fields: &[(&str, &str)]) -> common::Reply {
    let bytes = std::fs::read(common::fixture(file)).unwrap();
    let mut parts = vec![("audio", Part::File(media, &bytes))];
    parts.extend(
        fields
            .iter()
            .map(|&(name, value)| (name, Part::Text(value))),
    );
    post_form(server, "/v1/speech-to-text/", &parts)
}

/// Cue times of a SubRip or WebVTT document, checked for order and bounds.
fn cues(document: &str, separator: char, seconds: f64) -> Vec<(f64, f64, String)> {
    let clock = |text: &str| {
        let (hms, millis) = text.trim().split_once(separator).expect("milliseconds");
        let parts: Vec<f64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        assert_eq!(parts.len(), 3, "{text}");
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + millis.parse::<f64>().unwrap() / 1000.0
    };
    let lines: Vec<&str> = document.lines().collect();
    let mut cues = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some((start, end)) = line.split_once(" --> ") {
            let (start, end) = (clock(start), clock(end));
            let text = lines[i + 1].to_string();
            assert!(
                !text.is_empty() && lines.get(i + 2).is_none_or(|l| l.is_empty()),
                "{document}"
            );
            assert!(
                start <= end && end <= seconds + 0.001,
                "{line} in {seconds} s"
            );
            assert!(cues
                .last()
                .is_none_or(|(_, last, _): &(f64, f64, String)| *last <= start));
            cues.push((start, end, text));
        }
    }
    cues
}

#[test]
fn swahili_goes_to_the_ctc_model_with_word_timings_in_every_format() {
    let data = common::temp_dir();
    let server = start(&data, &fixture("ctc/model"), &fixture("whisper/model"));
    for (file, media, seconds) in UPLOADS {
        let reply = transcribe(&server, file, media, &[("response_format", "verbose_json")]);
        assert_eq!(
            reply.status,
            200,
            "{file}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        let body = reply.json();
        let words = body["words"]
            .as_array()
            .unwrap_or_else(|| panic!("{file}: {body}"));
        assert!(
            !words.is_empty(),
            "{file}: the random model always says something"
        );
        let mut previous = 0.0;
        for word in words {
            let (start, end) = (
                word["start"].as_f64().unwrap(),
                word["end"].as_f64().unwrap(),
            );
            assert!(
                previous <= start && start < end && end <= seconds + 0.001,
                "{file}: {word}"
            );
            previous = end;
        }
        let joined: Vec<&str> = words.iter().map(|w| w["word"].as_str().unwrap()).collect();
        assert_eq!(body["text"], joined.join(" "), "{file}");
        let segments = body["segments"].as_array().unwrap();
        let texts: Vec<&str> = segments
            .iter()
            .map(|s| s["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts.join(" "), joined.join(" "), "{file}");

        // Plain json: the transcript alone.
        let plain = transcribe(&server, file, media, &[]).json();
        assert_eq!(plain["text"], body["text"]);
        assert!(plain.get("words").is_none() && plain.get("segments").is_none());

        for (format, media_type, separator) in [
            ("srt", "application/x-subrip; charset=utf-8", ','),
            ("vtt", "text/vtt; charset=utf-8", '.'),
        ] {
            let reply = transcribe(&server, file, media, &[("response_format", format)]);
            assert_eq!(reply.status, 200);
            assert_eq!(reply.header("content-type"), Some(media_type));
            let document = String::from_utf8(reply.body.clone()).unwrap();
            if format == "vtt" {
                assert!(document.starts_with("WEBVTT\n\n"), "{document}");
            } else {
                assert!(document.starts_with("1\n"), "{document}");
            }
            let cues = cues(&document, separator, seconds);
            let texts: Vec<&str> = cues.iter().map(|(_, _, t)| t.as_str()).collect();
            assert_eq!(texts.join(" "), joined.join(" "), "{file} {format}");
        }
    }
}

#[test]
fn other_languages_go_to_whisper_and_a_missing_model_is_named() {
    let data = common::temp_dir();
    let server = start(&data, &fixture("ctc/model"), &fixture("whisper/model"));
    let english = transcribe(
        &server,
        "whisper/speech.wav",
        "audio/wav",
        &[("language", "en"), ("response_format", "verbose_json")],
    );
    assert_eq!(english.status, 200);
    let body = english.json();
    // No CTC model aligns English here: Whisper's own timestamps time its segments and their words.
    assert_eq!(
        english.header("sauti-word-timing"),
        Some("whisper-timestamps")
    );
    let words: Vec<&str> = body["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["word"].as_str().unwrap())
        .collect();
    assert_eq!(words.join(" "), body["text"].as_str().unwrap(), "{body}");
    assert!(!body["segments"].as_array().unwrap().is_empty(), "{body}");
    // Metrics name the engine that did the work, not the router in front of it.
    let swahili = transcribe(&server, "whisper/speech.wav", "audio/wav", &[]);
    assert_eq!(swahili.status, 200);
    let metrics = String::from_utf8(common::get(&server.url("/metrics"), None).body).unwrap();
    for engine in ["ctc", "whisper"] {
        let count = format!("sauti_asr_real_time_factor_count{{engine=\"{engine}\"}} 1");
        assert!(
            metrics.lines().any(|l| l == count),
            "{count} in:\n{metrics}"
        );
    }
    drop(server);

    // The preferred model is missing: Swahili falls to Whisper.
    let data = common::temp_dir();
    let server = start(&data, "no-such-ctc-model", &fixture("whisper/model"));
    let swahili = transcribe(
        &server,
        "whisper/speech.wav",
        "audio/wav",
        &[("response_format", "verbose_json")],
    );
    assert_eq!(swahili.status, 200);
    assert_eq!(
        swahili.header("sauti-word-timing"),
        Some("whisper-timestamps")
    );
    drop(server);

    // Neither is installed: 503 naming the preferred catalog entry for Swahili, Whisper's for English.
    let data = common::temp_dir();
    let server = start(&data, "no-such-ctc-model", "no-such-whisper-model");
    for (language, names) in [
        (
            "sw",
            vec![
                "sauti models fetch swahili-test",
                "sauti models fetch whisper-base",
            ],
        ),
        ("en", vec!["sauti models fetch whisper-base"]),
    ] {
        let reply = transcribe(
            &server,
            "whisper/speech.wav",
            "audio/wav",
            &[("language", language)],
        );
        let body = common::problem_body(&reply, 503);
        let detail = body["detail"].as_str().unwrap();
        for name in names {
            assert!(detail.contains(name), "{language}: {detail}");
        }
    }
    drop(server);

    // Only the CTC model: Swahili works, English says what to install.
    let data = common::temp_dir();
    let server = start(&data, &fixture("ctc/model"), "no-such-whisper-model");
    let swahili = transcribe(&server, "whisper/speech.wav", "audio/wav", &[]);
    assert_eq!(swahili.status, 200);
    let english = transcribe(
        &server,
        "whisper/speech.wav",
        "audio/wav",
        &[("language", "en")],
    );
    let detail = common::problem_body(&english, 503)["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("sauti models fetch whisper-base"),
        "{detail}"
    );
}

/// Every upload in both languages, sent all at once to a server that batches and one by one to a server that
/// does not: the same transcripts and word times, and the batched server's metrics show batches of more than one.
#[test]
fn recognitions_batched_together_answer_as_each_alone() {
    let (one, two) = (common::temp_dir(), common::temp_dir());
    let models = (fixture("ctc/model"), fixture("whisper/model"));
    let alone = start(&one, &models.0, &models.1);
    let batching = [
        ("SAUTI__ASR__BATCH_SIZE", "8"),
        ("SAUTI__ASR__BATCH_WINDOW_MS", "100"),
    ];
    let batched = start_with(&two, &models.0, &models.1, &batching);
    let requests: Vec<(&str, &str, &str)> = UPLOADS
        .iter()
        .flat_map(|&(file, media, _)| [(file, media, "sw"), (file, media, "en")])
        .collect();
    let ask = |server: &Server, (file, media, language): (&str, &str, &str)| {
        let fields = [("response_format", "verbose_json"), ("language", language)];
        let reply = transcribe(server, file, media, &fields);
        assert_eq!(reply.status, 200, "{file} {language}");
        let body = reply.json();
        (
            body["text"].clone(),
            body["words"].clone(),
            body["segments"].clone(),
        )
    };
    let expected: Vec<_> = requests.iter().map(|&r| ask(&alone, r)).collect();
    let (server, ask) = (&batched, &ask);
    let answers: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = requests
            .iter()
            .map(|&r| scope.spawn(move || ask(server, r)))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for ((request, got), want) in requests.iter().zip(&answers).zip(&expected) {
        assert_eq!(got, want, "{request:?}");
    }
    let metrics = String::from_utf8(common::get(&batched.url("/metrics"), None).body).unwrap();
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(name))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let (runs, inputs) = (
        value("sauti_model_batch_size_count"),
        value("sauti_model_batch_size_sum"),
    );
    assert!(
        runs > 0.0 && inputs > runs,
        "{runs} runs for {inputs} inputs:\n{metrics}"
    );
}
