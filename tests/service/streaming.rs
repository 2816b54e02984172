//! Streamed synthesis from outside: `POST /v1/text-to-speech/{voice}/stream` sends each sentence's audio as its
//! own chunk as soon as it is made (the first chunk is exactly the first sentence), in every output format,
//! decodable by ffmpeg and by sauti to the length of the whole; refusals come before any audio, as problems;
//! a client that goes away stops the work. `/with-timestamps` times every word and character of the text.

use crate::common;

use std::time::Duration;

use base64::Engine as _;
use common::chunked::post_chunked;
use common::ffmpeg::probe;
use common::*;

const SENTENCES: [&str; 4] = [
    "Karibu kwenye kituo cha afya cha Mwembeni.",
    "Miadi yako ni Jumanne tarehe 14 saa tatu asubuhi.",
    "Tafadhali leta kadi ya bima na dawa unazotumia sasa.",
    "Ukichelewa zaidi ya dakika 15, piga simu 0712 345 678.",
];

fn text() -> String {
    SENTENCES.join(" ")
}

#[test]
fn the_first_chunk_is_the_first_sentence_and_the_whole_is_the_seed_audio() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let seed_samples = |text: &str| {
        let reply = post_json(
            &server.url("/v1/text-to-speech/baraka"),
            Some(KEY_A),
            &serde_json::json!({ "text": text }),
        );
        let wav = base64::engine::general_purpose::STANDARD
            .decode(reply.json()["audio_base64"].as_str().unwrap())
            .unwrap();
        wav[44..].to_vec()
    };
    let streamed = post_chunked(
        &server,
        "/v1/text-to-speech/baraka/stream",
        &serde_json::json!({ "text": text() }),
        usize::MAX,
    );
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.header("content-type"), Some("audio/wav"));
    // A streaming WAV header (sizes unknown), then the first sentence alone, then each of the others.
    let first = &streamed.chunks[0];
    assert_eq!(&first[..4], b"RIFF");
    assert_eq!(&first[4..8], &u32::MAX.to_le_bytes());
    assert_eq!(&first[40..44], &u32::MAX.to_le_bytes());
    assert_eq!(first[44..], seed_samples(SENTENCES[0])[..]);
    assert_eq!(streamed.chunks.len(), SENTENCES.len());
    // Joined, the stream is exactly the seed path's audio of the whole text.
    assert_eq!(streamed.joined()[44..], seed_samples(&text())[..]);
    let (rate, channels, seconds) = probe(&streamed.joined(), &[]);
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 8.0, "{seconds}");
}

#[test]
fn every_codec_streams_and_decodes_to_the_length_of_the_whole() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let whole = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &serde_json::json!({ "text": text() }),
    );
    let promised = whole.json()["duration_seconds"].as_f64().unwrap();
    let cases: &[(&str, &str, u32, &[&str], bool)] = &[
        ("mp3_44100_128", "audio/mpeg", 44_100, &[], true),
        ("mp3_22050_32", "audio/mpeg", 22_050, &[], true),
        ("opus_48000_64", "audio/ogg", 48_000, &[], true),
        ("flac_24000", "audio/flac", 24_000, &[], true),
        ("wav_44100", "audio/wav", 44_100, &[], true),
        (
            "pcm_24000",
            "audio/pcm",
            24_000,
            &["-f", "s16le", "-ar", "24000", "-ac", "1"],
            false,
        ),
        (
            "ulaw_8000",
            "audio/basic",
            8_000,
            &["-f", "mulaw", "-ar", "8000", "-ac", "1"],
            false,
        ),
    ];
    let mut failures = Vec::new();
    for &(name, media, rate, input, ours) in cases {
        let streamed = post_chunked(
            &server,
            &format!("/v1/text-to-speech/zuri/stream?output_format={name}"),
            &serde_json::json!({ "text": text() }),
            usize::MAX,
        );
        assert_eq!(streamed.status, 200, "{name}");
        assert_eq!(streamed.header("content-type"), Some(media), "{name}");
        assert!(streamed.chunks.len() >= SENTENCES.len(), "{name}");
        let audio = streamed.joined();
        let (got, channels, seconds) = probe(&audio, input);
        eprintln!("{name}: ffmpeg {got} Hz {channels} ch {seconds:.3} s of {promised:.3} s");
        if (got, channels) != (rate, 1) || (seconds - promised).abs() > 0.05 {
            failures.push(format!(
                "{name} by ffmpeg: {got} Hz {channels} ch {seconds:.3} s"
            ));
        }
        if ours {
            let decoded = sauti::audio::decode(&audio, &Default::default())
                .unwrap_or_else(|e| panic!("{name}: sauti cannot decode it: {e}"));
            let seconds = decoded.samples.len() as f64 / f64::from(decoded.sample_rate);
            if decoded.sample_rate != rate || (seconds - promised).abs() > 0.05 {
                failures.push(format!(
                    "{name} by sauti: {} Hz {seconds:.3} s",
                    decoded.sample_rate
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The ElevenLabs-compatible stream is the same stream: a chunk per sentence, MP3 by default.
    let eleven = post_chunked(
        &server,
        "/elevenlabs/v1/text-to-speech/zuri/stream",
        &serde_json::json!({ "text": text(), "model_id": "eleven_multilingual_v2" }),
        usize::MAX,
    );
    assert_eq!(eleven.header("content-type"), Some("audio/mpeg"));
    assert!(eleven.chunks.len() >= SENTENCES.len());
    let (_, _, seconds) = probe(&eleven.joined(), &[]);
    assert!((seconds - promised).abs() < 0.05, "{seconds}");
}

#[test]
fn refusals_come_before_any_audio_and_a_client_that_leaves_stops_the_work() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let refused = |path: &str, body: serde_json::Value, status: u16| {
        let reply = post_json(&server.url(path), Some(KEY_A), &body);
        assert_eq!(
            reply.header("content-type"),
            Some("application/problem+json"),
            "{path}"
        );
        problem_body(&reply, status)
    };
    refused(
        "/v1/text-to-speech/hakuna/stream",
        serde_json::json!({ "text": "Habari" }),
        404,
    );
    refused(
        "/v1/text-to-speech/zuri/stream?output_format=mp3_8000_8",
        serde_json::json!({ "text": "Habari" }),
        422,
    );
    refused(
        "/v1/text-to-speech/zuri/stream",
        serde_json::json!({ "text": "Habari", "voice_settings": { "speaking_rate": 9.0 } }),
        422,
    );
    refused(
        "/v1/text-to-speech/zuri/stream",
        serde_json::json!({ "text": "a".repeat(5_001) }),
        422,
    );
    // Over the seed path's 2,000 characters, a stream is still one answer (no job).
    let long: String = format!("{} ", text())
        .repeat(40)
        .chars()
        .take(4_900)
        .collect();
    let first = post_chunked(
        &server,
        "/v1/text-to-speech/zuri/stream",
        &serde_json::json!({ "text": long }),
        1,
    );
    assert_eq!(first.status, 200);
    assert_eq!(first.chunks.len(), 1);
    drop(first);
    // The connection is gone after one sentence of about 80: the rest is never made.
    let cancelled = || {
        let metrics = get(&server.url("/metrics"), Some(KEY_A));
        String::from_utf8_lossy(&metrics.body)
            .lines()
            .find(|l| l.starts_with("sauti_cancelled_work_total{actor=\"tts\"}"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while cancelled() < 1.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the abandoned stream was never stopped"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The service goes on.
    let after = post_chunked(
        &server,
        "/v1/text-to-speech/zuri/stream?output_format=pcm_16000",
        &serde_json::json!({ "text": SENTENCES[1] }),
        usize::MAX,
    );
    assert_eq!(after.status, 200);
    assert!(after.joined().len() > 16_000);
}

#[test]
fn with_timestamps_times_every_word_and_character() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let text = text();
    let reply = post_json(
        &server.url("/v1/text-to-speech/zuri/with-timestamps"),
        Some(KEY_A),
        &serde_json::json!({ "text": text }),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    assert_eq!(body["content_type"], "audio/wav");
    assert_eq!(body["voice_id"], "zuri");
    assert_eq!(
        body["characters_synthesized"].as_u64(),
        Some(text.chars().count() as u64)
    );
    let wav = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().unwrap())
        .unwrap();
    let samples: Vec<f32> = wav[44..]
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect();
    let duration = samples.len() as f64 / 16_000.0;
    assert!((body["duration_seconds"].as_f64().unwrap() - duration).abs() < 0.001);
    let words = body["words"].as_array().unwrap();
    let spoken: Vec<&str> = words.iter().map(|w| w["text"].as_str().unwrap()).collect();
    for expected in ["karibu", "jumanne", "kumi", "nne", "bima", "dakika"] {
        assert!(spoken.contains(&expected), "{expected} not in {spoken:?}");
    }
    let times: Vec<(f64, f64)> = words
        .iter()
        .map(|w| (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap()))
        .collect();
    assert!(times.iter().all(|(s, e)| s < e));
    assert!(times.windows(2).all(|w| w[0].1 <= w[1].0 + 1e-9));
    assert!(times.last().unwrap().1 <= duration + 0.02);
    // Each word is sound; the pause between two sentences is quiet.
    let rms = |from: f64, to: f64| {
        let part =
            &samples[(from * 16_000.0) as usize..((to * 16_000.0) as usize).min(samples.len())];
        (part.iter().map(|s| s * s).sum::<f32>() / part.len().max(1) as f32).sqrt()
    };
    for (start, end) in &times {
        assert!(rms(*start, *end) > 0.01, "silent word at {start}..{end}");
    }
    let gaps: Vec<(f64, f64)> = times
        .windows(2)
        .map(|w| (w[0].1, w[1].0))
        .filter(|(a, b)| b - a > 0.15)
        .collect();
    assert!(gaps.len() >= SENTENCES.len() - 1, "{gaps:?}");
    for (a, b) in gaps {
        assert!(
            rms(a + 0.02, b - 0.02) < 0.01,
            "sound in the pause {a}..{b}"
        );
    }
    for name in ["alignment", "normalized_alignment"] {
        let alignment = &body[name];
        let characters = alignment["characters"].as_array().unwrap();
        let starts = alignment["character_start_times_seconds"]
            .as_array()
            .unwrap();
        let ends = alignment["character_end_times_seconds"].as_array().unwrap();
        assert_eq!(characters.len(), starts.len());
        assert_eq!(characters.len(), ends.len());
        let starts: Vec<f64> = starts.iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{name}");
        if name == "alignment" {
            let joined: String = characters.iter().map(|c| c.as_str().unwrap()).collect();
            assert_eq!(joined, text);
        }
    }
}
