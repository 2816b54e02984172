//! Turn-taking with the real models, from outside: a realtime socket over a noisy line raises no transcript and
//! no interruption with Silero VAD (where the energy detector hears the same line as speech), and with Smart
//! Turn on a caller's mid-sentence pause does not end their turn while a finished sentence still does. The models
//! are installed through the catalog (`sauti models import` from the Pipecat wheel's files).

use crate::common;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::call_socket::{open, send, until, Socket};
use common::*;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

const RATE: usize = 16_000;

/// A server with the Whisper fixture for recognition, the turn models' folder, and `extra` settings.
fn server(data: &std::path::Path, extra: &[(&str, &str)]) -> Server {
    let asr = fixture("whisper/model");
    let ort = onnxruntime();
    let models = common::sdk::turn_models();
    let mut env = vec![
        ("SAUTI__ASR__MODEL", asr.to_str().unwrap()),
        ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
        ("SAUTI__MODELS__ONNXRUNTIME", ort.to_str().unwrap()),
        ("SAUTI__MODELS__DIR", models.to_str().unwrap()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data, &env)
}

/// Four seconds of a bad line: a mains hum and hiss, and three bursts of crackle 25 dB above them, each long
/// enough (0.7 s) to stop a reply if taken for speech; then 1.5 s of the quiet line.
fn noisy_line() -> Vec<f32> {
    let mut state = 46u32;
    let mut white = move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    let total = (5.5 * RATE as f64) as usize;
    let mut rumble = 0f32;
    (0..total)
        .map(|i| {
            let t = i as f32 / RATE as f32;
            let hum = 0.004 * (2.0 * std::f32::consts::PI * 50.0 * t).sin();
            let in_burst = t < 4.0 && (t % 1.3) > 0.4 && (t % 1.3) < 1.1;
            rumble = 0.9 * rumble + 0.1 * white();
            let crackle = if in_burst {
                0.25 * white() + 0.6 * rumble
            } else {
                0.0
            };
            hum + 0.006 * white() + crackle
        })
        .collect()
}

fn chunk_message(samples: &[f32]) -> Value {
    let bytes: Vec<u8> = samples
        .iter()
        .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes())
        .collect();
    json!({ "user_audio_chunk": base64::engine::general_purpose::STANDARD.encode(bytes) })
}

fn send_audio(socket: &mut Socket, samples: &[f32]) {
    for chunk in samples.chunks(RATE / 10) {
        send(socket, chunk_message(chunk));
    }
}

/// Everything the socket sends within `window`.
fn events_for(socket: &mut Socket, window: Duration, seen: &mut Vec<Value>) {
    let deadline = Instant::now() + window;
    if let tokio_tungstenite::tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref()
    {
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
    }
    while Instant::now() < deadline {
        match socket.read() {
            Ok(Message::Text(text)) => seen.push(serde_json::from_str(&text).unwrap()),
            Ok(Message::Close(frame)) => panic!("closed: {frame:?} after {seen:?}"),
            _ => continue,
        }
    }
}

/// While the agent speaks, the caller's line crackles: which events come back.
fn over_noise(server: &Server) -> Vec<Value> {
    let mut socket = open(
        &server.url(""),
        "/v1/voice-agent/realtime?output_format=pcm_16000",
    );
    let mut seen = Vec::new();
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "Habari, nieleze kuhusu huduma zenu zote tafadhali." }),
    );
    until(&mut socket, "audio", &mut seen);
    seen.clear();
    send_audio(&mut socket, &noisy_line());
    events_for(&mut socket, Duration::from_secs(4), &mut seen);
    seen
}

fn kinds(seen: &[Value], kind: &str) -> usize {
    seen.iter().filter(|m| m["type"] == kind).count()
}

/// The events but the audio, for messages.
fn shown(seen: &[Value]) -> Vec<&Value> {
    seen.iter().filter(|m| m["type"] != "audio").collect()
}

/// Turns the server's realtime sessions ended, by what ended them (from `/metrics`).
fn turn_ends(server: &Server, by: &str) -> u64 {
    counted(
        server,
        &format!("sauti_realtime_turn_ends_total{{by=\"{by}\"}}"),
    )
}

/// Recognitions started when the caller fell quiet, by outcome (from `/metrics`).
fn early(server: &Server, outcome: &str) -> u64 {
    counted(
        server,
        &format!("sauti_realtime_early_recognitions_total{{outcome=\"{outcome}\"}}"),
    )
}

fn counted(server: &Server, series: &str) -> u64 {
    let text = String::from_utf8(get(&server.url("/metrics"), None).body).unwrap();
    let prefix = format!("{series} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[test]
fn line_noise_raises_no_transcript_and_no_interruption_with_silero() {
    let _alone = common::alone();
    let data = temp_dir();
    let silero = server(data.path(), &[("SAUTI__TURNS__VAD", "silero")]);
    let ready = get(&silero.url("/readyz"), None);
    assert_eq!(ready.json()["turns"]["vad"], "silero", "{:?}", ready.json());
    let seen = over_noise(&silero);
    assert_eq!(kinds(&seen, "user_transcript"), 0, "{:?}", shown(&seen));
    assert_eq!(kinds(&seen, "interruption"), 0, "{:?}", shown(&seen));
    assert!(
        kinds(&seen, "audio") > 0,
        "the reply went on: {:?}",
        shown(&seen)
    );
    assert_eq!(turn_ends(&silero, "silence"), 0);
    drop(silero);

    // The energy detector takes the same crackle for a caller speaking over the reply.
    let data = temp_dir();
    let energy = server(data.path(), &[("SAUTI__TURNS__VAD", "energy")]);
    let seen = over_noise(&energy);
    assert!(kinds(&seen, "interruption") > 0, "{:?}", shown(&seen));
}

/// "Habari, ningependa kujua salio la akaunti yangu ya akiba leo." with the caller stopping for 1.2 s in the
/// middle (at the quietest moment between 40 and 60 % of it), then 2.5 s of quiet line.
fn paused_sentence(server: &Server) -> Vec<f32> {
    let reply = post_json(
        &server.url("/v1/text-to-speech/baraka?output_format=pcm_16000"),
        Some(KEY_A),
        &json!({ "text": "Habari, ningependa kujua salio la akaunti yangu ya akiba leo." }),
    );
    assert_eq!(reply.status, 200);
    let pcm = base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap();
    let samples: Vec<f32> = pcm
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect();
    let frame = RATE / 50;
    let energy = |at: usize| -> f32 { samples[at..at + frame].iter().map(|s| s * s).sum() };
    let cut = (samples.len() * 2 / 5 / frame..samples.len() * 3 / 5 / frame)
        .map(|f| f * frame)
        .min_by(|&a, &b| energy(a).total_cmp(&energy(b)))
        .unwrap();
    let quiet = |seconds: f64| vec![0f32; (seconds * RATE as f64) as usize];
    let mut audio = quiet(0.5);
    audio.extend_from_slice(&samples[..cut]);
    audio.extend(quiet(1.2));
    audio.extend_from_slice(&samples[cut..]);
    audio.extend(quiet(2.5));
    audio
}

/// A new session whose caller says `audio` in real time: the socket, and what it sent meanwhile.
fn say_in_real_time(server: &Server, audio: &[f32]) -> (Socket, Vec<Value>) {
    let mut socket = open(
        &server.url(""),
        "/v1/voice-agent/realtime?output_format=pcm_16000",
    );
    let mut seen = Vec::new();
    until(&mut socket, "conversation_initiation_metadata", &mut seen);
    let started = Instant::now();
    for (i, chunk) in audio.chunks(RATE / 10).enumerate() {
        send(&mut socket, chunk_message(chunk));
        let due = started + Duration::from_millis(100 * (i as u64 + 1));
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
    (socket, seen)
}

/// The caller says `audio` in real time, and the session has 3 s more to answer.
fn spoken(server: &Server, audio: &[f32]) {
    let (mut socket, mut seen) = say_in_real_time(server, audio);
    events_for(&mut socket, Duration::from_secs(3), &mut seen);
}

#[test]
fn a_mid_sentence_pause_does_not_end_the_turn_with_smart_turn() {
    let _alone = common::alone();
    let data = temp_dir();
    let judged = server(
        data.path(),
        &[
            ("SAUTI__TURNS__SMART_TURN", "true"),
            ("SAUTI__TURNS__SMART_TURN_LONGEST_MS", "2000"),
        ],
    );
    assert_eq!(
        get(&judged.url("/readyz"), None).json()["turns"]["smart_turn"],
        true
    );
    let audio = paused_sentence(&judged);
    spoken(&judged, &audio);
    // The pause was judged incomplete and the turn went on; the end of the sentence was judged complete.
    let metrics = String::from_utf8(get(&judged.url("/metrics"), None).body).unwrap();
    let turns: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("sauti_realtime_turn"))
        .collect();
    assert_eq!(turn_ends(&judged, "judged"), 1, "{turns:?}");
    assert_eq!(
        turn_ends(&judged, "longest") + turn_ends(&judged, "silence"),
        0
    );
    drop(judged);

    // With a fixed 500 ms of silence the same pause splits the sentence in two turns.
    let data = temp_dir();
    let fixed = server(data.path(), &[]);
    spoken(&fixed, &audio);
    assert_eq!(turn_ends(&fixed, "silence"), 2);
    assert_eq!(early(&fixed, "used"), 2);
}

#[test]
fn interim_transcripts_come_before_the_turn_s_transcript() {
    let _alone = common::alone();
    let data = temp_dir();
    let routes = data.path().join("routes.toml");
    std::fs::write(
        &routes,
        format!(
            "[[asr.ctc]]\nlanguages = [\"sw\"]\nmodel = {:?}\n",
            fixture("ctc/model").to_str().unwrap()
        ),
    )
    .unwrap();
    let ort = onnxruntime();
    let models = common::sdk::turn_models();
    let server = Server::start_with_config(
        data.path(),
        &routes,
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").to_str().unwrap(),
            ),
            ("SAUTI__MODELS__ONNXRUNTIME", ort.to_str().unwrap()),
            ("SAUTI__MODELS__DIR", models.to_str().unwrap()),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ],
    );
    let reply = post_json(
        &server.url("/v1/text-to-speech/baraka?output_format=pcm_16000"),
        Some(KEY_A),
        &json!({ "text": "Habari, ningependa kujua salio la akaunti yangu ya akiba leo asubuhi, tafadhali." }),
    );
    let pcm = base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap();
    let mut audio = vec![0f32; RATE / 2];
    audio.extend(
        pcm.chunks_exact(2)
            .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0),
    );
    audio.extend(vec![0f32; 2 * RATE]);
    let (mut socket, mut seen) = say_in_real_time(&server, &audio);
    until(&mut socket, "user_transcript", &mut seen);
    let order: Vec<&str> = seen
        .iter()
        .filter_map(|m| m["type"].as_str())
        .filter(|t| t.ends_with("user_transcript"))
        .collect();
    // Several seconds of speech: interim transcripts while it went on, each longer than the one before, then
    // the turn's own, which goes on from the last of them. (The fixture's random weights run its letters into
    // words longer than a piece, which wait for later pieces: fewer interim transcripts than seconds.)
    assert!(order.len() >= 2, "{order:?} {seen:?}");
    assert_eq!(order.last(), Some(&"user_transcript"));
    assert!(order[..order.len() - 1]
        .iter()
        .all(|t| *t == "tentative_user_transcript"));
    let tentative: Vec<&str> = seen
        .iter()
        .filter(|m| m["type"] == "tentative_user_transcript")
        .map(|m| {
            m["tentative_user_transcription_event"]["user_transcript"]
                .as_str()
                .unwrap()
        })
        .collect();
    for pair in tentative.windows(2) {
        assert!(pair[1].starts_with(pair[0]), "{tentative:?}");
    }
    // The turn's transcript is what was settled while the caller spoke, then the rest's words.
    let last = seen
        .iter()
        .rfind(|m| m["type"] == "user_transcript")
        .unwrap();
    let turn = last["user_transcription_event"]["user_transcript"]
        .as_str()
        .unwrap();
    let settled = tentative.last().unwrap();
    assert!(turn.starts_with(settled), "{settled:?} then {turn:?}");
}
