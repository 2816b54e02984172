//! Uploads that declare more than they hold: decoders allocate what a header, tag, chunk or lace declares before
//! reading it, so sauti refuses such files first (tests of the cases the fuzz targets found).

mod common;

use sauti::audio::{self, AudioError, DecodeLimits};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixture(&format!("audio/{name}"))).expect("fixture")
}

fn limits() -> DecodeLimits {
    DecodeLimits::default()
}

#[test]
fn id3_tags_are_skipped_and_an_overrunning_one_is_refused() {
    // A real MP3 with its ID3 tag and zero padding in front decodes as before.
    let mp3 = fixture("tone-mp3-22050-1ch-1000ms.mp3");
    let mut padded = b"ID3\x04\0\0\0\0\0\x04\0\0\0\0".to_vec();
    padded.extend_from_slice(&mp3);
    let decoded = audio::load_16k(&padded, &limits()).expect("decodes");
    assert_eq!(decoded.source.format, "mp3");
    assert!((decoded.duration_seconds() - 1.0).abs() < 0.05);

    // The fuzzer's 51-byte upload whose ID3 frame claims 2.4 GB: refused as truncated, nothing allocated for it.
    let bomb: &[u8] = b"\x49\x44\x33\x03\xfa\x00\x04\x00\x00\x23\x54\x53\x53\x45\x92\x9c\x08\x0c\x00\x00\x00\x0f\x00\x00\x01\x39\x03\x2e\x32\x37\xff\xff\xff\x01\x00\x00\x00\x00\x00\x00\x04\x2e\xff\xff\xff\x63\x61\x66\x66\xff\xfa";
    assert_eq!(bomb.len(), 51);
    let error = audio::decode(bomb, &limits()).unwrap_err();
    assert!(
        matches!(error, AudioError::Truncated { format: "mp3", .. }),
        "{error}"
    );
    assert!(error.to_string().contains("ID3 tag declares"), "{error}");
}

#[test]
fn a_webm_whose_laced_frames_overrun_their_block_is_refused() {
    // Found by the audio_decode fuzz target: a 6.5 KB WebM whose block declares a frame of ~109 TB, which the
    // demuxer would try to allocate (and abort the process when it cannot).
    let bytes = fixture("damaged-lace-overrun.webm");
    let error = audio::decode(&bytes, &limits()).unwrap_err();
    assert!(
        matches!(error, AudioError::Truncated { format: "webm", .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("runs past what holds it"),
        "{error}"
    );
}
