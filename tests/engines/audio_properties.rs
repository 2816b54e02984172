//! Property tests: random and mutated bytes never bring the decoder down, and whatever it accepts is sane; the
//! multipart upload path (form, audio part, sniffing, decoding) ends in a form or a client error whatever the body.

use std::path::PathBuf;
use std::time::Duration;

use axum::http::StatusCode;
use proptest::prelude::*;
use sauti::audio::{self, DecodeLimits};

#[path = "../common/upload_path.rs"]
mod upload_path;

use upload_path::read_upload;

const SEEDS: &[&str] = &[
    "tone-pcm16-16000-1ch-1000ms.wav",
    "tone-pcm24-48000-2ch-500ms.wav",
    "tone-mp3-22050-1ch-1000ms.mp3",
    "tone-flac-16000-1ch-1000ms.flac",
    "tone-vorbis-16000-1ch-1000ms.ogg",
    "tone-opus-16000-1ch-1000ms.ogg",
    "tone-opus-48000-1ch-1000ms.webm",
    "tone-vorbis-44100-2ch-1000ms.webm",
];

fn seed(index: usize) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio")
        .join(SEEDS[index]);
    std::fs::read(path).expect("fixture")
}

fn limits() -> DecodeLimits {
    DecodeLimits {
        max_duration: Duration::from_secs(30),
    }
}

/// Whatever the decoder accepts must be usable audio: finite samples, a sane rate, within the cap.
fn assert_sane(bytes: &[u8]) {
    if let Ok(decoded) = audio::decode(bytes, &limits()) {
        assert!(
            (1_000..=384_000).contains(&decoded.sample_rate),
            "rate {}",
            decoded.sample_rate
        );
        assert!(!decoded.samples.is_empty());
        assert!(decoded.samples.len() as f64 / f64::from(decoded.sample_rate) <= 30.0);
        assert!(
            decoded.samples.iter().all(|s| s.is_finite()),
            "non-finite samples"
        );
        let resampled = audio::to_16k(&decoded.samples, decoded.sample_rate);
        assert!(resampled.iter().all(|s| s.is_finite()));
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Truncate { at: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Overwrite { at: usize, bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..64)
        )
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(at, bytes)| Mutation::Overwrite { at, bytes }),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip { at, xor } => {
                if let Some(b) = bytes.get_mut(at % len) {
                    *b ^= xor;
                }
            }
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::Insert { at, bytes: extra } => {
                let at = (at % len).min(bytes.len());
                bytes.splice(at..at, extra.iter().copied());
            }
            Mutation::Overwrite { at, bytes: extra } => {
                let at = at % len;
                for (i, b) in extra.iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(at + i) {
                        *slot = *b;
                    }
                }
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_are_rejected_or_sane(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        assert_sane(&bytes);
    }

    #[test]
    fn random_bytes_behind_real_magic_are_rejected_or_sane(
        magic in prop::sample::select(vec![&b"RIFF\x24\0\0\0WAVEfmt "[..], b"fLaC", b"OggS", b"ID3\x03", &[0x1A, 0x45, 0xDF, 0xA3], &[0xFF, 0xFB, 0x90, 0x44]]),
        tail in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        assert_sane(&[magic, &tail[..]].concat());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_files_are_rejected_or_sane(index in 0..SEEDS.len(), mutations in proptest::collection::vec(mutation(), 1..6)) {
        assert_sane(&apply(seed(index), &mutations));
    }
}

const BOUNDARY: &str = "sauti-prop";
const AUDIO_LIMIT: usize = 16 * 1024;

/// A multipart body: a text field and the audio part.
fn form(audio: &[u8], language: &str) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\n{language}\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"a\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(audio);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn assert_client_error_or_audio(body: Vec<u8>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    upload_path::assert_audio_or_client_error(&runtime.block_on(read_upload(
        body,
        BOUNDARY,
        AUDIO_LIMIT,
    )));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_body_as_a_form_ends_in_audio_or_a_client_error(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        assert_client_error_or_audio(bytes);
    }

    #[test]
    fn mutated_forms_end_in_audio_or_a_client_error(
        index in 0..SEEDS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        assert_client_error_or_audio(apply(form(&seed(index), "sw"), &mutations));
    }

    #[test]
    fn a_well_formed_form_reaches_the_decoder(index in 0..SEEDS.len(), language in "\\PC{0,16}") {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let bytes = seed(index);
        let expected = if bytes.len() > AUDIO_LIMIT { None } else { Some(audio::load_16k(&bytes, &limits()).expect("fixture").samples.len()) };
        match (runtime.block_on(read_upload(form(&bytes, &language), BOUNDARY, AUDIO_LIMIT)), expected) {
            (Ok(samples), Some(expected)) => prop_assert_eq!(samples, expected),
            (Err(error), None) => prop_assert_eq!(error.status(), StatusCode::PAYLOAD_TOO_LARGE),
            (got, expected) => prop_assert!(false, "{:?} for a fixture of {} bytes (expected {:?})", got.map_err(|e| e.detail), bytes.len(), expected),
        }
    }
}
