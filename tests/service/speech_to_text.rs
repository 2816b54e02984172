//! `POST /v1/speech-to-text/` and the agent's audio mode, black-box against `sauti serve` with the tiny Whisper
//! fixture model (its transcripts are nonsense; the tests check the pipeline and the fields a client sees).

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::multipart::{form, post_form, Part, BOUNDARY};
use common::{Server, KEY_A};

/// A form, the status it must get and words its detail must contain.
type Case<'a> = (Vec<(&'a str, Part<'a>)>, u16, &'a str);

fn audio(name: &str) -> Vec<u8> {
    std::fs::read(common::fixture(name)).unwrap()
}

fn start(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let model = common::fixture("whisper/model");
    let library = common::onnxruntime();
    let mut env = vec![
        ("SAUTI__ASR__MODEL", model.to_str().unwrap()),
        ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

#[test]
fn every_upload_format_is_transcribed_with_the_spec_fields() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    for (file, media, seconds) in [
        ("whisper/speech.wav", "audio/wav", 2.5),
        ("audio/tone-mp3-44100-2ch-1000ms.mp3", "audio/mpeg", 1.0),
        ("audio/speech-opus-48000-1ch-2500ms.webm", "audio/webm", 2.5),
        ("audio/tone-flac-48000-2ch-1000ms.flac", "audio/flac", 1.0),
        ("audio/speech-opus-48000-1ch-2500ms.ogg", "audio/ogg", 2.5),
        ("audio/tone-vorbis-44100-2ch-1000ms.ogg", "audio/ogg", 1.0),
    ] {
        let bytes = audio(file);
        let reply = post_form(
            &server,
            "/v1/speech-to-text/",
            &[("audio", Part::File(media, &bytes))],
        );
        assert_eq!(
            reply.status,
            200,
            "{file}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let body = reply.json();
        assert!(body["text"].is_string(), "{file}: {body}");
        assert_eq!(body["language"], "sw");
        let duration = body["duration_seconds"].as_f64().unwrap();
        assert!((duration - seconds).abs() < 0.1, "{file}: {duration} s");
        assert!(body.get("segments").is_none());
    }

    // The speech clip is speech to the detector: a transcript, and in verbose_json Whisper's segments between its
    // timestamps, in order, inside the clip, their texts the transcript.
    let bytes = audio("whisper/speech.wav");
    let reply = post_form(
        &server,
        "/v1/speech-to-text/",
        &[
            ("audio", Part::File("audio/x-wav", &bytes)),
            ("language", Part::Text("EN")),
            ("response_format", Part::Text("verbose_json")),
        ],
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert_eq!(body["language"], "en");
    let text = body["text"].as_str().unwrap();
    assert!(!text.is_empty());
    assert_eq!(
        reply.header("sauti-word-timing"),
        Some("whisper-timestamps")
    );
    let segments = body["segments"].as_array().unwrap();
    assert!(!segments.is_empty(), "{body}");
    let mut last = 0.0;
    for segment in segments {
        let (start, end) = (
            segment["start"].as_f64().unwrap(),
            segment["end"].as_f64().unwrap(),
        );
        assert!(last <= start && start < end && end <= 2.5 + 1e-9, "{body}");
        last = end;
    }
    let joined: Vec<&str> = segments
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(joined.join(" "), text);
    // The plain answer says the same words.
    let plain = post_form(
        &server,
        "/v1/speech-to-text/",
        &[
            ("audio", Part::File("audio/x-wav", &bytes)),
            ("language", Part::Text("en")),
        ],
    );
    assert_eq!(plain.json()["text"], text);

    // Silence: no speech, no invented text.
    let silence = sauti::audio::encode_wav_16k(&vec![0.0; 16_000 * 3]);
    let reply = post_form(
        &server,
        "/v1/speech-to-text/",
        &[("audio", Part::File("audio/wav", &silence))],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["text"], "");
}

#[test]
fn bad_forms_get_clear_problems() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let wav = audio("whisper/speech.wav");
    let cases: Vec<Case> = vec![
        (vec![("language", Part::Text("sw"))], 422, "no `audio`"),
        (
            vec![
                ("audio", Part::File("audio/wav", &wav)),
                ("language", Part::Text("xx")),
            ],
            422,
            "unsupported language",
        ),
        (
            vec![
                ("audio", Part::File("audio/wav", &wav)),
                ("language", Part::Text("sw-TZ")),
            ],
            422,
            "unsupported language",
        ),
        (
            vec![
                ("audio", Part::File("audio/wav", &wav)),
                ("response_format", Part::Text("xml")),
            ],
            422,
            "response_format",
        ),
        (vec![("audio", Part::File("audio/wav", b""))], 422, "empty"),
        (
            vec![(
                "audio",
                Part::File("audio/wav", b"this is not audio at all, just text"),
            )],
            422,
            "unrecognised audio format",
        ),
        (
            vec![("audio", Part::File("text/plain", &wav))],
            422,
            "not audio/*",
        ),
        (
            vec![("audio", Part::File("audio/wav", &wav[..2000]))],
            422,
            "truncated",
        ),
    ];
    for (parts, status, words) in cases {
        let reply = post_form(&server, "/v1/speech-to-text/", &parts);
        let body = common::problem_body(&reply, status);
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains(words),
            "{detail:?} should mention {words:?}"
        );
    }
    // Not multipart at all.
    let reply = common::post_raw(
        &server.url("/v1/speech-to-text/"),
        Some(KEY_A),
        "audio/wav",
        &wav,
    );
    common::problem_body(&reply, 415);
    // A form that breaks off.
    let mut broken = form(&[("audio", Part::File("audio/wav", &wav))]);
    broken.truncate(broken.len() - 20);
    let reply = common::post_raw(
        &server.url("/v1/speech-to-text/"),
        Some(KEY_A),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &broken,
    );
    common::problem_body(&reply, 400);
    // No key.
    let reply = common::post_raw(
        &server.url("/v1/speech-to-text/"),
        None,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &form(&[("audio", Part::File("audio/wav", &wav))]),
    );
    common::problem_body(&reply, 401);
}

/// Send a chunked upload without a declared length and return the status line once the server answers.
fn stream_until_answered(server: &Server, total: usize) -> (String, usize) {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /v1/speech-to-text/ HTTP/1.1\r\nHost: {address}\r\nxi-api-key: {KEY_A}\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let opening = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"big.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    );
    let mut sent = 0;
    let chunk = |data: &[u8], stream: &mut TcpStream| -> bool {
        let framed = [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat();
        stream.write_all(&framed).is_ok()
    };
    chunk(opening.as_bytes(), &mut stream);
    let block = vec![0x55u8; 64 * 1024];
    while sent < total {
        if !chunk(&block, &mut stream) {
            break;
        }
        sent += block.len();
    }
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
        }
    }
    let status = String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    (status, sent)
}

#[test]
fn uploads_over_the_limit_are_refused_while_they_stream() {
    let data = common::temp_dir();
    // A 1 MB limit keeps the test quick; the default is 25 MB.
    let server = start(&data, &[("SAUTI__ASR__MAX_UPLOAD_BYTES", "1048576")]);
    let wav = audio("whisper/speech.wav");

    // Declared too large: refused before any of the body is sent.
    let (status, body) = common::send_raw(
        &server,
        "/v1/speech-to-text/",
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        1024 * 1024 + 300 * 1024,
        &[],
    );
    assert!(status.contains("413"), "{status:?}");
    assert!(body.contains("1048576 bytes"), "{body}");

    // Just over the limit inside the form's allowance: counted while streaming.
    let over = form(&[(
        "audio",
        Part::File("audio/wav", &vec![0u8; 1024 * 1024 + 1]),
    )]);
    let (status, _) = common::send_raw(
        &server,
        "/v1/speech-to-text/",
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        over.len(),
        &over,
    );
    assert!(status.contains("413"), "{status:?}");

    // No declared length at all (chunked): the answer comes long before 8 MB have been sent.
    let (status, _) = stream_until_answered(&server, 8 * 1024 * 1024);
    assert!(status.contains("413"), "{status:?}");

    // Within the limit the same server still transcribes.
    let reply = post_form(
        &server,
        "/v1/speech-to-text/",
        &[("audio", Part::File("audio/wav", &wav))],
    );
    assert_eq!(reply.status, 200);
}

#[test]
fn without_a_model_recognition_is_503_naming_the_model_to_fetch() {
    let data = common::temp_dir();
    let library = common::onnxruntime();
    let server = Server::start(
        data.path(),
        &[("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap())],
    );
    let wav = audio("whisper/speech.wav");
    for path in ["/v1/speech-to-text/", "/v1/voice-agent/converse/audio"] {
        let reply = post_form(&server, path, &[("audio", Part::File("audio/wav", &wav))]);
        let body = common::problem_body(&reply, 503);
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains("sauti models fetch whisper-base"),
            "{detail}"
        );
        assert!(
            reply.header("retry-after").is_none(),
            "a missing model is not transient"
        );
    }
    // The rest of the service runs on.
    assert_eq!(common::get(&server.url("/readyz"), None).status, 200);
}

#[test]
fn the_agent_hears_audio_then_answers_in_speech() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let wav = audio("whisper/speech.wav");
    let reply = post_form(
        &server,
        "/v1/voice-agent/converse/audio",
        &[
            ("audio", Part::File("audio/wav", &wav)),
            ("scenario", Part::Text("banking")),
        ],
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    // user_text is the transcript, exactly what speech-to-text returns for the same audio.
    let heard = post_form(
        &server,
        "/v1/speech-to-text/",
        &[("audio", Part::File("audio/wav", &wav))],
    )
    .json();
    assert_eq!(body["user_text"], heard["text"]);
    assert!(!body["agent_text"].as_str().unwrap().is_empty());
    assert_eq!(body["scenario"], "banking");
    assert_eq!(body["voice_id"], "baraka");
    assert_eq!(body["content_type"], "audio/wav");
    for stage in ["asr", "dialogue", "tts", "total"] {
        assert!(body["timings_ms"][stage].is_u64(), "{stage}: {body}");
    }
    use base64::Engine as _;
    let reply_audio = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().unwrap())
        .unwrap();
    let (rate, channels, seconds) = common::wav_properties(&reply_audio);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 0.3);

    // The session continues with the next spoken turn.
    let session = body["session_id"].as_str().unwrap();
    let next = post_form(
        &server,
        "/v1/voice-agent/converse/audio",
        &[
            ("audio", Part::File("audio/wav", &wav)),
            ("scenario", Part::Text("banking")),
            ("session_id", Part::Text(session)),
            ("voice_id", Part::Text("zuri")),
        ],
    );
    assert_eq!(next.status, 200, "{}", String::from_utf8_lossy(&next.body));
    assert_eq!(next.json()["session_id"], session);
    assert_eq!(next.json()["voice_id"], "zuri");

    // Silence: nothing was said, so there is no turn.
    let silence = sauti::audio::encode_wav_16k(&vec![0.0; 16_000 * 2]);
    let reply = post_form(
        &server,
        "/v1/voice-agent/converse/audio",
        &[("audio", Part::File("audio/wav", &silence))],
    );
    let body = common::problem_body(&reply, 422);
    assert!(body["detail"].as_str().unwrap().contains("no speech"));
    // Unknown voice and scenario are refused as in the text mode.
    let reply = post_form(
        &server,
        "/v1/voice-agent/converse/audio",
        &[
            ("audio", Part::File("audio/wav", &wav)),
            ("voice_id", Part::Text("nobody")),
        ],
    );
    common::problem_body(&reply, 404);
    let reply = post_form(
        &server,
        "/v1/voice-agent/converse/audio",
        &[
            ("audio", Part::File("audio/wav", &wav)),
            ("scenario", Part::Text("travel")),
        ],
    );
    common::problem_body(&reply, 422);
}
