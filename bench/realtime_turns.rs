//! Realtime turns over the WebSocket for the realtime benchmark: the caller's speech sent in real time (20 ms
//! chunks), recognised by the whisper-base-size int8 model or the XLS-R-size int8 CTC model (random weights;
//! speed does not depend on them), answered by the scenario engine and spoken by the embedded voice, in 1 to 40
//! sessions at once, with recognition started when the caller falls quiet (`turns.early_recognition_ms`) and
//! without it, with the recognitions' model runs batched (`asr.batch_size`), with the calls' turns ending
//! together or spread over the caller's speech, and on CTC routes with and without recognition while the caller
//! speaks (`turns.interim_ms`). Voice-to-voice is the end of the caller's speech to the first reply audio, the
//! 500 ms end-of-turn silence included.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::Message;

use super::python::{root, run};
use super::{median, percentile, start_server, KEY, RUNS};

const CALLER: &str = "Nataka kujua salio la akaunti yangu ya akiba tafadhali.";

/// The tables: each recognizer with and without early recognition, and batched.
pub fn tables(voices: &Path, library: &str, whisper: &Path) {
    let ctc = root().join("target/bench-models/ctc-xlsr-300m");
    let python = root().join("target/py/bin/python");
    if !ctc.join("model_quantized.onnx").exists() {
        run(
            &python,
            &[
                "tools/make_ctc_fixtures.py",
                "--size",
                "xlsr-300m",
                ctc.to_str().unwrap(),
            ],
        );
        run(
            &python,
            &["bench/ctc_reference.py", "prepare", ctc.to_str().unwrap()],
        );
    }
    let voices = std::fs::read_to_string(voices).unwrap();
    let with_ctc = root().join("target/bench-models/realtime-ctc.toml");
    std::fs::write(
        &with_ctc,
        format!(
            "{voices}\n[[asr.ctc]]\nlanguages = [\"sw\"]\nmodel = \"{}\"\nvariant = \"_quantized\"\n",
            ctc.display()
        ),
    )
    .unwrap();
    let speech: Vec<u8> = {
        use sauti::tts::Synthesizer as _;
        let samples = sauti::tts::EmbeddedVoice::baraka()
            .synthesize(CALLER, &sauti::tts::VoiceSettings::default())
            .unwrap();
        samples
            .iter()
            .flat_map(|&s| ((s.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes())
            .collect()
    };
    let speech = std::sync::Arc::new(speech);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let only = std::env::var("SAUTI_BENCH_RECOGNIZER").unwrap_or_default();
    for (name, config) in [
        ("whisper-base int8", voices_file(&voices)),
        ("CTC XLS-R-size int8", with_ctc),
    ] {
        if !only.is_empty() && !name.starts_with(&only) {
            continue;
        }
        for variant in VARIANTS {
            if variant.interim == "0" && !name.starts_with("CTC") {
                continue; // Whisper routes recognise each turn whole either way.
            }
            let data = tempfile::tempdir().unwrap();
            let server = start_server(
                &config,
                data.path(),
                &[
                    ("SAUTI__MODELS__ONNXRUNTIME", library.to_string()),
                    ("SAUTI__ASR__MODEL", whisper.display().to_string()),
                    ("SAUTI__ASR__VARIANT", "_quantized".into()),
                    ("SAUTI__ASR__MAX_NEW_TOKENS", "20".into()),
                    ("SAUTI__TURNS__EARLY_RECOGNITION_MS", variant.early.into()),
                    ("SAUTI__TURNS__INTERIM_MS", variant.interim.into()),
                    ("SAUTI__ASR__BATCH_SIZE", variant.batch.into()),
                    ("SAUTI__ASR__BATCH_WINDOW_MS", "10".into()),
                ],
            );
            let url = server.base.replace("http://", "ws://")
                + "/v1/voice-agent/realtime?scenario=banking&voice_id=zuri&end_of_turn_ms=500";
            println!(
                "\n## Realtime turns, {name}, {}: seconds after the caller's speech ends\n",
                variant.what
            );
            table(&runtime, &url, &speech, variant.spread);
        }
    }
}

/// One way of running the turns.
struct Variant {
    /// `turns.early_recognition_ms`.
    early: &'static str,
    /// `asr.batch_size`.
    batch: &'static str,
    /// `turns.interim_ms`: recognition while the caller speaks (CTC routes), or 0.
    interim: &'static str,
    /// The calls' turns end spread over the caller's speech, rather than all together.
    spread: bool,
    what: &'static str,
}

/// Without and with early recognition, then batched; the default with the calls spread; on CTC routes each of
/// the last two without recognition while the caller speaks too.
const VARIANTS: [Variant; 6] = [
    Variant { early: "0", batch: "1", interim: "1000", spread: false, what: "recognised once the turn ends" },
    Variant { early: "200", batch: "1", interim: "1000", spread: false, what: "recognised from 200 ms into the silence" },
    Variant { early: "200", batch: "1", interim: "0", spread: false, what: "recognised from 200 ms into the silence, whole (no recognition while the caller speaks)" },
    Variant { early: "200", batch: "8", interim: "1000", spread: false, what: "recognised from 200 ms into the silence, batches of up to 8 (10 ms window)" },
    Variant { early: "200", batch: "1", interim: "1000", spread: true, what: "recognised from 200 ms into the silence, the calls' turns ending spread over 3.4 s" },
    Variant { early: "200", batch: "1", interim: "0", spread: true, what: "the same, whole (no recognition while the caller speaks)" },
];

/// The voices configuration alone, as a file.
fn voices_file(voices: &str) -> std::path::PathBuf {
    let path = root().join("target/bench-models/realtime-whisper.toml");
    std::fs::write(&path, voices).unwrap();
    path
}

/// One row per number of calls. All calls start together, so all their turns end in the same 20 ms; or, with
/// `spread`, each starts a share of the speech's length after the one before, as calls in a call centre do.
fn table(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    speech: &std::sync::Arc<Vec<u8>>,
    spread: bool,
) {
    println!("| sessions | turns | transcript p50 | reply p50 | first audio p50 (voice-to-voice) | first audio p95 | send lag max ms |");
    println!("|---|---|---|---|---|---|---|");
    for sessions in [1usize, 1, 5, 10, 20, 40] {
        let rounds = if sessions == 1 { RUNS } else { 2 };
        let mut turns = Vec::new();
        for _ in 0..rounds {
            let batch = runtime.block_on(async {
                // 32 bytes a millisecond (16 kHz, 16-bit).
                let gap = if spread {
                    Duration::from_millis((speech.len() / 32 / sessions) as u64)
                } else {
                    Duration::ZERO
                };
                let tasks: Vec<_> = (0..sessions)
                    .map(|i| {
                        let (url, speech) = (url.to_string(), std::sync::Arc::clone(speech));
                        tokio::spawn(async move {
                            tokio::time::sleep(gap * i as u32).await;
                            turn(url, speech).await
                        })
                    })
                    .collect();
                let mut done = Vec::new();
                for task in tasks {
                    done.push(task.await.unwrap());
                }
                done
            });
            turns.extend(batch);
        }
        let column = |f: fn(&Turn) -> f64| {
            turns
                .iter()
                .map(f)
                .filter(|v| v.is_finite())
                .collect::<Vec<f64>>()
        };
        println!(
            "| {sessions} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} |",
            turns.len(),
            median(column(|t| t.transcript)),
            median(column(|t| t.reply)),
            median(column(|t| t.first_audio)),
            percentile(column(|t| t.first_audio), 0.95),
            column(|t| t.send_lag).into_iter().fold(0.0, f64::max) * 1000.0,
        );
    }
    println!("\nThe first single-session row warms the models; the second is the measurement.");
}

/// One realtime turn's timings in seconds after the caller stopped speaking: transcript, reply, first audio;
/// and how far the sending fell behind real time.
struct Turn {
    transcript: f64,
    reply: f64,
    first_audio: f64,
    send_lag: f64,
}

async fn turn(url: String, speech: std::sync::Arc<Vec<u8>>) -> Turn {
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("xi-api-key", KEY.parse().unwrap());
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("the socket opens");
    let (mut sink, mut stream) = socket.split();
    stream.next().await.expect("metadata").expect("metadata");
    let chunk = |bytes: &[u8]| {
        Message::Text(
            serde_json::json!({ "user_audio_chunk": base64::engine::general_purpose::STANDARD.encode(bytes) })
                .to_string()
                .into(),
        )
    };
    // When the speech ended and how late the sending ran, written by the sender as it goes (it is stopped,
    // not joined, once the reply starts).
    let spoke_until = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let lag = std::sync::Arc::new(std::sync::Mutex::new(0f64));
    let sender = {
        let (spoke_until, lag) = (
            std::sync::Arc::clone(&spoke_until),
            std::sync::Arc::clone(&lag),
        );
        tokio::spawn(async move {
            let started = Instant::now();
            let silence = vec![0u8; 640];
            let spoken = speech.len().div_ceil(640);
            let frames = speech
                .chunks(640)
                .chain(std::iter::repeat_n(&silence[..], 250));
            for (i, frame) in frames.enumerate() {
                let due = started + Duration::from_millis(20 * i as u64);
                tokio::time::sleep_until(due.into()).await;
                if let Ok(mut lag) = lag.lock() {
                    *lag = lag.max(due.elapsed().as_secs_f64());
                }
                if sink.send(chunk(frame)).await.is_err() {
                    break;
                }
                if i + 1 == spoken {
                    let _ = spoke_until.set(Instant::now());
                }
            }
        })
    };
    let (mut transcript, mut reply, mut audio) = (None, None, None);
    while audio.is_none() {
        let Some(Ok(Message::Text(text))) = stream.next().await else {
            break;
        };
        let message: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
        let now = Some(Instant::now());
        match message["type"].as_str() {
            Some("user_transcript") => transcript = now,
            Some("agent_response") => reply = now,
            Some("audio") => audio = now,
            _ => {}
        }
    }
    sender.abort();
    let send_lag = lag.lock().map_or(f64::NAN, |l| *l);
    let Some(&end) = spoke_until.get() else {
        return Turn {
            transcript: f64::NAN,
            reply: f64::NAN,
            first_audio: f64::NAN,
            send_lag,
        };
    };
    let after = |t: Option<Instant>| t.map_or(f64::NAN, |t| t.duration_since(end).as_secs_f64());
    Turn {
        transcript: after(transcript),
        reply: after(reply),
        first_audio: after(audio),
        send_lag,
    }
}
