//! Every output format a caller can name, through `POST /v1/text-to-speech/{voice}?output_format=`: decoded back
//! by sauti's own decoder (where the format has a container) and by ffmpeg (`tools/ffmpeg.sh` installs a static
//! one from PyPI), each with the rate, channel count and duration (within 50 ms) the answer promises.

use crate::common;

use base64::Engine as _;
use common::ffmpeg::probe;
use common::*;

const TEXT: &str =
    "Daktari atakuona saa nne asubuhi. Tafadhali fika dakika kumi mapema na kadi yako ya bima.";

fn synthesise(server: &Server, format: &str) -> (Vec<u8>, String, f64) {
    let reply = post_json(
        &server.url(&format!("/v1/text-to-speech/zuri?output_format={format}")),
        Some(KEY_A),
        &serde_json::json!({ "text": TEXT }),
    );
    assert_eq!(
        reply.status,
        200,
        "{format}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    let body = reply.json();
    let audio = base64::engine::general_purpose::STANDARD
        .decode(body["audio_base64"].as_str().unwrap())
        .unwrap();
    let kind = body["content_type"].as_str().unwrap().to_string();
    (audio, kind, body["duration_seconds"].as_f64().unwrap())
}

#[test]
fn every_format_decodes_to_the_promised_rate_channels_and_length() {
    let data = temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000")],
    );
    let cases: &[(&str, &str, u32, &[&str], bool)] = &[
        // name, media type, rate, ffmpeg input options, whether sauti's decoder reads it
        ("wav_8000", "audio/wav", 8_000, &[], true),
        ("wav_16000", "audio/wav", 16_000, &[], true),
        ("wav_22050", "audio/wav", 22_050, &[], true),
        ("wav_24000", "audio/wav", 24_000, &[], true),
        ("wav_44100", "audio/wav", 44_100, &[], true),
        ("wav_48000", "audio/wav", 48_000, &[], true),
        (
            "pcm_8000",
            "audio/pcm",
            8_000,
            &["-f", "s16le", "-ar", "8000", "-ac", "1"],
            false,
        ),
        (
            "pcm_16000",
            "audio/pcm",
            16_000,
            &["-f", "s16le", "-ar", "16000", "-ac", "1"],
            false,
        ),
        (
            "pcm_22050",
            "audio/pcm",
            22_050,
            &["-f", "s16le", "-ar", "22050", "-ac", "1"],
            false,
        ),
        (
            "pcm_24000",
            "audio/pcm",
            24_000,
            &["-f", "s16le", "-ar", "24000", "-ac", "1"],
            false,
        ),
        (
            "pcm_44100",
            "audio/pcm",
            44_100,
            &["-f", "s16le", "-ar", "44100", "-ac", "1"],
            false,
        ),
        (
            "ulaw_8000",
            "audio/basic",
            8_000,
            &["-f", "mulaw", "-ar", "8000", "-ac", "1"],
            false,
        ),
        (
            "alaw_8000",
            "audio/x-alaw-basic",
            8_000,
            &["-f", "alaw", "-ar", "8000", "-ac", "1"],
            false,
        ),
        ("mp3_22050_32", "audio/mpeg", 22_050, &[], true),
        ("mp3_24000_48", "audio/mpeg", 24_000, &[], true),
        ("mp3_44100_32", "audio/mpeg", 44_100, &[], true),
        ("mp3_44100_64", "audio/mpeg", 44_100, &[], true),
        ("mp3_44100_128", "audio/mpeg", 44_100, &[], true),
        ("mp3_44100_192", "audio/mpeg", 44_100, &[], true),
        ("opus_48000_32", "audio/ogg", 48_000, &[], true),
        ("opus_48000_64", "audio/ogg", 48_000, &[], true),
        ("opus_48000_192", "audio/ogg", 48_000, &[], true),
        ("flac_16000", "audio/flac", 16_000, &[], true),
        ("flac_24000", "audio/flac", 24_000, &[], true),
        ("flac_44100", "audio/flac", 44_100, &[], true),
    ];
    let mut failures = Vec::new();
    for &(name, media, rate, input, ours) in cases {
        let (audio, kind, promised) = synthesise(&server, name);
        assert!(promised > 2.0, "{name}: {promised} s");
        assert_eq!(kind, media, "{name}");
        let (got_rate, channels, seconds) = probe(&audio, input);
        eprintln!("{name}: ffmpeg {got_rate} Hz, {channels} ch, {seconds:.3} s (promised {promised:.3} s)");
        if got_rate != rate || channels != 1 || (seconds - promised).abs() > 0.05 {
            failures.push(format!(
                "{name} by ffmpeg: {got_rate} Hz {channels} ch {seconds:.3} s"
            ));
        }
        if ours {
            let decoded = sauti::audio::decode(&audio, &Default::default())
                .unwrap_or_else(|e| panic!("{name}: sauti cannot decode it: {e}"));
            let seconds = decoded.samples.len() as f64 / f64::from(decoded.sample_rate);
            eprintln!("{name}: sauti {} Hz, {seconds:.3} s", decoded.sample_rate);
            if decoded.sample_rate != rate
                || decoded.source.channels != 1
                || (seconds - promised).abs() > 0.05
            {
                failures.push(format!(
                    "{name} by sauti: {} Hz {seconds:.3} s",
                    decoded.sample_rate
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn an_unknown_format_is_refused_before_synthesis_naming_the_known_ones() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    for name in ["mp3_48000_320", "aac", "wav", "MP3_44100_128"] {
        let reply = post_json(
            &server.url(&format!("/v1/text-to-speech/zuri?output_format={name}")),
            Some(KEY_A),
            &serde_json::json!({ "text": TEXT }),
        );
        let detail = problem_body(&reply, 422)["detail"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            detail.contains("ulaw_8000") && detail.contains("mp3_44100_128"),
            "{detail}"
        );
    }
    // Without the query, the seed answer is unchanged: a 16 kHz WAV.
    let reply = post_json(
        &server.url("/v1/text-to-speech/zuri"),
        Some(KEY_A),
        &serde_json::json!({ "text": TEXT }),
    );
    assert_eq!(reply.json()["content_type"], "audio/wav");
}

#[test]
fn a_jobs_audio_downloads_in_any_format() {
    let data = temp_dir();
    let server = Server::start(data.path(), &[]);
    let created = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &serde_json::json!({ "text": TEXT, "voice_id": "baraka" }),
    );
    assert_eq!(created.status, 202);
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let done = wait_for_job(&server, KEY_A, &id, std::time::Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    let audio = |format: &str| {
        get(
            &server.url(&format!("/v1/tts/jobs/{id}/audio{format}")),
            Some(KEY_A),
        )
    };
    let wav = audio("");
    assert_eq!(wav.header("content-type"), Some("audio/wav"));
    let (_, _, seconds) = probe(&wav.body, &[]);
    for (name, media, rate, extension) in [
        ("mp3_44100_128", "audio/mpeg", 44_100, "mp3"),
        ("opus_48000_32", "audio/ogg", 48_000, "ogg"),
        ("wav_8000", "audio/wav", 8_000, "wav"),
    ] {
        let reply = audio(&format!("?output_format={name}"));
        assert_eq!(reply.status, 200, "{name}");
        assert_eq!(reply.header("content-type"), Some(media));
        assert!(reply
            .header("content-disposition")
            .unwrap()
            .ends_with(&format!("{id}.{extension}\"")));
        let (got, channels, length) = probe(&reply.body, &[]);
        assert_eq!((got, channels), (rate, 1), "{name}");
        assert!(
            (length - seconds).abs() < 0.05,
            "{name}: {length} vs {seconds}"
        );
    }
    // A text long enough to become a job names where its audio will be in the format asked for.
    let long = TEXT.repeat(2_100 / TEXT.len() + 1);
    let queued = post_json(
        &server.url("/v1/text-to-speech/zuri?output_format=opus_48000_32"),
        Some(KEY_A),
        &serde_json::json!({ "text": long }),
    );
    assert_eq!(queued.status, 202);
    let queued = queued.json();
    let long_id = queued["job_id"].as_str().unwrap();
    let url = queued["audio_url"].as_str().unwrap();
    assert_eq!(
        url,
        format!("/v1/tts/jobs/{long_id}/audio?output_format=opus_48000_32")
    );
    let done = wait_for_job(&server, KEY_A, long_id, std::time::Duration::from_secs(120));
    assert_eq!(done["status"], "succeeded", "{done}");
    let encoded = get(&server.url(url), Some(KEY_A));
    assert_eq!(encoded.header("content-type"), Some("audio/ogg"));
    let (rate, _, length) = probe(&encoded.body, &[]);
    assert_eq!(rate, 48_000);
    assert!((length - done["duration_seconds"].as_f64().unwrap()).abs() < 0.05);
    let refused = audio("?output_format=ogg");
    assert!(problem_body(&refused, 422)["detail"]
        .as_str()
        .unwrap()
        .contains("opus_48000_64"));
}
