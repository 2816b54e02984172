//! The audio layer as a user of the service meets it: real files from real encoders (made by
//! `tools/make_audio_fixtures.sh`) decode to the right length at 16 kHz, and damaged files give the right error.

use std::path::PathBuf;
use std::time::Duration;

use sauti::audio::{self, AudioError, DecodeLimits, SAMPLE_RATE};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn limits() -> DecodeLimits {
    DecodeLimits::default()
}

/// (file, container, codec, native rate, channels, true duration in seconds)
const FIXTURES: &[(&str, &str, &str, u32, u16, f64)] = &[
    (
        "tone-pcm8-8000-1ch-1000ms.wav",
        "wav",
        "pcm_u8",
        8_000,
        1,
        1.0,
    ),
    (
        "tone-pcm16-16000-1ch-1000ms.wav",
        "wav",
        "pcm_s16le",
        16_000,
        1,
        1.0,
    ),
    (
        "tone-pcm16-44100-2ch-750ms.wav",
        "wav",
        "pcm_s16le",
        44_100,
        2,
        0.75,
    ),
    (
        "tone-pcm24-48000-2ch-500ms.wav",
        "wav",
        "pcm_s24le",
        48_000,
        2,
        0.5,
    ),
    (
        "tone-pcm32-22050-1ch-600ms.wav",
        "wav",
        "pcm_s32le",
        22_050,
        1,
        0.6,
    ),
    (
        "tone-f32-48000-1ch-500ms.wav",
        "wav",
        "pcm_f32le",
        48_000,
        1,
        0.5,
    ),
    (
        "tone-pcm16-96000-1ch-250ms.wav",
        "wav",
        "pcm_s16le",
        96_000,
        1,
        0.25,
    ),
    (
        "tone-pcm16-16000-4ch-500ms.wav",
        "wav",
        "pcm_s16le",
        16_000,
        4,
        0.5,
    ),
    (
        "tone-mp3-44100-2ch-1000ms.mp3",
        "mp3",
        "mp3",
        44_100,
        2,
        1.0,
    ),
    (
        "tone-mp3-22050-1ch-1000ms.mp3",
        "mp3",
        "mp3",
        22_050,
        1,
        1.0,
    ),
    (
        "tone-flac-48000-2ch-1000ms.flac",
        "flac",
        "flac",
        48_000,
        2,
        1.0,
    ),
    (
        "tone-flac-16000-1ch-1000ms.flac",
        "flac",
        "flac",
        16_000,
        1,
        1.0,
    ),
    (
        "tone-vorbis-44100-2ch-1000ms.ogg",
        "ogg",
        "vorbis",
        44_100,
        2,
        1.0,
    ),
    (
        "tone-vorbis-16000-1ch-1000ms.ogg",
        "ogg",
        "vorbis",
        16_000,
        1,
        1.0,
    ),
    (
        "tone-opus-16000-1ch-1000ms.ogg",
        "ogg",
        "opus",
        48_000,
        1,
        1.0,
    ),
    (
        "tone-opus-48000-2ch-1000ms.opus",
        "ogg",
        "opus",
        48_000,
        2,
        1.0,
    ),
    (
        "tone-opus-48000-1ch-1000ms.webm",
        "webm",
        "opus",
        48_000,
        1,
        1.0,
    ),
    (
        "tone-opus-48000-2ch-1000ms-stereo.webm",
        "webm",
        "opus",
        48_000,
        2,
        1.0,
    ),
    (
        "tone-vorbis-44100-2ch-1000ms.webm",
        "webm",
        "vorbis",
        44_100,
        2,
        1.0,
    ),
    (
        "tone-opus-48000-1ch-1000ms.mka",
        "matroska",
        "opus",
        48_000,
        1,
        1.0,
    ),
    (
        "speech-pcm16-16000-1ch-2500ms.wav",
        "wav",
        "pcm_s16le",
        16_000,
        1,
        2.5,
    ),
    (
        "speech-opus-48000-1ch-2500ms.ogg",
        "ogg",
        "opus",
        48_000,
        1,
        2.5,
    ),
    (
        "speech-opus-48000-1ch-2500ms.webm",
        "webm",
        "opus",
        48_000,
        1,
        2.5,
    ),
];

#[test]
fn every_format_decodes_to_its_true_duration_at_16k_mono() {
    for &(name, format, codec, rate, channels, seconds) in FIXTURES {
        let decoded =
            audio::load_16k(&fixture(name), &limits()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.source.format, format, "{name}");
        assert_eq!(decoded.source.codec, codec, "{name}");
        assert_eq!(decoded.source.sample_rate, rate, "{name}");
        assert_eq!(decoded.source.channels, channels, "{name}");
        let error = (decoded.duration_seconds() - seconds).abs();
        assert!(
            error <= 0.030,
            "{name}: decoded {:.4} s, truth {seconds} s",
            decoded.duration_seconds()
        );
        assert!(
            decoded
                .samples
                .iter()
                .all(|s| s.is_finite() && s.abs() <= 1.5),
            "{name}: wild samples"
        );
    }
}

/// Frequency (Hz) of the strongest component between 100 Hz and 7.9 kHz, by a fine DFT scan.
fn dominant_frequency(samples: &[f32]) -> f64 {
    let power = |hz: f64| {
        let w = 2.0 * std::f64::consts::PI * hz / f64::from(SAMPLE_RATE);
        let (mut re, mut im) = (0.0, 0.0);
        for (n, &x) in samples.iter().enumerate() {
            re += f64::from(x) * (w * n as f64).cos();
            im -= f64::from(x) * (w * n as f64).sin();
        }
        re * re + im * im
    };
    let coarse = (10..790)
        .map(|k| f64::from(k) * 10.0)
        .max_by(|a, b| power(*a).total_cmp(&power(*b)));
    let centre = coarse.unwrap_or(0.0);
    (-20..=20)
        .map(|k| centre + f64::from(k) * 0.5)
        .max_by(|a, b| power(*a).total_cmp(&power(*b)))
        .unwrap_or(centre)
}

#[test]
fn a_1khz_tone_is_still_1khz_after_resampling() {
    for &(name, ..) in FIXTURES.iter().filter(|f| f.0.starts_with("tone-")) {
        let decoded =
            audio::load_16k(&fixture(name), &limits()).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Skip codec start-up; a quarter second is plenty of resolution for ±2%.
        let body = &decoded.samples[800..800 + 2_400];
        let hz = dominant_frequency(body);
        assert!(
            (hz - 1000.0).abs() <= 20.0,
            "{name}: energy peak at {hz} Hz"
        );
    }
}

#[test]
fn speech_is_found_where_it_is_in_every_format() {
    for name in [
        "speech-pcm16-16000-1ch-2500ms.wav",
        "speech-opus-48000-1ch-2500ms.ogg",
        "speech-opus-48000-1ch-2500ms.webm",
    ] {
        let decoded =
            audio::load_16k(&fixture(name), &limits()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let stats = audio::analyse(&decoded.samples, SAMPLE_RATE);
        assert_eq!(stats.segments.len(), 2, "{name}: {:?}", stats.segments);
        assert!(
            (stats.speech_seconds - 1.4).abs() < 0.1,
            "{name}: {} s of speech",
            stats.speech_seconds
        );
        assert!(
            (stats.segments[0].start - 0.3).abs() < 0.06,
            "{name}: {:?}",
            stats.segments
        );
        assert!(
            (stats.segments[1].start - 1.6).abs() < 0.06,
            "{name}: {:?}",
            stats.segments
        );
        assert!(stats.peak_dbfs < 0.0 && stats.rms_dbfs < stats.peak_dbfs);
    }
}

#[test]
fn the_16k_wav_we_write_has_a_correct_header() {
    let decoded =
        audio::load_16k(&fixture("tone-mp3-44100-2ch-1000ms.mp3"), &limits()).expect("decodes");
    let wav = audio::encode_wav_16k(&decoded.samples);
    let reader =
        hound::WavReader::new(std::io::Cursor::new(&wav)).expect("a WAV reader accepts it");
    let spec = reader.spec();
    assert_eq!(
        (spec.sample_rate, spec.channels, spec.bits_per_sample),
        (16_000, 1, 16)
    );
    assert_eq!(reader.duration() as usize, decoded.samples.len());
    // And it decodes again through our own path to the same length.
    let again = audio::load_16k(&wav, &limits()).expect("re-decodes");
    assert_eq!(again.samples.len(), decoded.samples.len());
}

/// Does an error match what a case expects?
type Expectation = fn(&AudioError) -> bool;

#[test]
fn damaged_uploads_get_the_right_error() {
    let wav = fixture("tone-pcm16-16000-1ch-1000ms.wav");
    let cases: Vec<(&str, Vec<u8>, Expectation)> = vec![
        ("zero-length", Vec::new(), |e| {
            matches!(e, AudioError::Empty(_))
        }),
        (
            "random bytes",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
            |e| *e == AudioError::Unrecognised,
        ),
        (
            "text",
            b"<html><body>not audio</body></html>".to_vec(),
            |e| *e == AudioError::Unrecognised,
        ),
        (
            "wrong magic",
            [b"RIFX".as_slice(), &wav[4..]].concat(),
            |e| *e == AudioError::Unrecognised,
        ),
        ("header only", wav[..44].to_vec(), |e| {
            matches!(e, AudioError::Truncated { .. })
        }),
        ("truncated wav", wav[..wav.len() / 2].to_vec(), |e| {
            matches!(e, AudioError::Truncated { .. })
        }),
        (
            "aac in mp4",
            fixture("unsupported-aac.m4a"),
            |e| matches!(e, AudioError::Unsupported(k) if k.contains("AAC")),
        ),
    ];
    for (what, bytes, expected) in cases {
        let error = audio::decode(&bytes, &limits()).expect_err(what);
        assert!(expected(&error), "{what}: got {error:?}");
    }
    for name in [
        "tone-flac-48000-2ch-1000ms.flac",
        "tone-mp3-44100-2ch-1000ms.mp3",
        "tone-vorbis-44100-2ch-1000ms.ogg",
        "speech-opus-48000-1ch-2500ms.ogg",
        "speech-opus-48000-1ch-2500ms.webm",
        "tone-opus-48000-1ch-1000ms.mka",
    ] {
        let bytes = fixture(name);
        for cut in [bytes.len() / 2, bytes.len() * 9 / 10] {
            let error = audio::decode(&bytes[..cut], &limits()).expect_err(name);
            assert!(
                matches!(error, AudioError::Truncated { .. }),
                "{name} cut at {cut}: {error:?}"
            );
        }
    }
}

#[test]
fn a_wav_header_claiming_ten_hours_is_refused_before_decoding() {
    let mut wav = fixture("tone-pcm16-16000-1ch-1000ms.wav");
    let ten_hours_of_bytes: u32 = 10 * 3600 * 16_000 * 2;
    wav[40..44].copy_from_slice(&ten_hours_of_bytes.to_le_bytes());
    let error = audio::decode(&wav, &limits()).expect_err("too long");
    assert!(
        matches!(error, AudioError::TooLong { seconds, .. } if seconds >= 36_000.0),
        "{error:?}"
    );
}

#[test]
fn the_duration_cap_stops_streams_that_declare_no_length() {
    let short = DecodeLimits {
        max_duration: Duration::from_millis(1_000),
    };
    for name in [
        "speech-opus-48000-1ch-2500ms.ogg",
        "speech-opus-48000-1ch-2500ms.webm",
        "speech-pcm16-16000-1ch-2500ms.wav",
    ] {
        let error = audio::decode(&fixture(name), &short).expect_err(name);
        assert!(
            matches!(error, AudioError::TooLong { seconds, limit } if seconds > 1.0 && seconds <= 2.5 && limit == 1.0),
            "{name}: {error:?}"
        );
    }
}

#[test]
fn streaming_wav_sizes_are_read_to_the_end() {
    // Recorders that stream write 0xFFFFFFFF as the data size; that means "until the end", not 37 hours.
    let mut wav = fixture("tone-pcm16-16000-1ch-1000ms.wav");
    wav[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    wav[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let decoded = audio::decode(&wav, &limits()).expect("decodes");
    assert_eq!(decoded.samples.len(), 16_000);
}

#[test]
fn errors_explain_themselves() {
    let error = audio::decode(b"definitely not audio", &limits()).expect_err("not audio");
    assert!(error.to_string().contains("WAV, MP3, FLAC"), "{error}");
    assert_eq!(error.code(), "audio_unrecognised");
    let short = audio::analyse(&[0.0; 16_000], SAMPLE_RATE)
        .require_speech(3.0)
        .expect_err("silence");
    assert!(short.to_string().contains("0.00 s of speech"), "{short}");
}
