//! Uploads that declare more than they hold: decoders allocate what a header, tag, chunk or lace declares before
//! reading it, so sauti refuses such files first (tests of the cases the fuzz targets found).

use crate::common;

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

/// `flac` with a picture block inserted after STREAMINFO whose media type declares `media_type_len` bytes.
fn with_picture(flac: &[u8], media_type_len: u32) -> Vec<u8> {
    let mut block = 3u32.to_be_bytes().to_vec();
    block.extend_from_slice(&media_type_len.to_be_bytes());
    block.extend_from_slice(b"image/png");
    block.extend_from_slice(&[0; 4 + 16 + 4]); // no description, four numbers, no data
    let mut file = flac[..4 + 4 + 34].to_vec();
    file[4] &= 0x7F; // STREAMINFO is no longer the last block
    file.push(6 | (flac[4] & 0x80));
    file.extend_from_slice(&(block.len() as u32).to_be_bytes()[1..]);
    file.extend_from_slice(&block);
    file.extend_from_slice(&flac[4 + 4 + 34..]);
    file
}

#[test]
fn flac_metadata_must_hold_what_it_declares() {
    let flac = fixture("tone-flac-16000-1ch-1000ms.flac");
    let decoded =
        audio::load_16k(&with_picture(&flac, 9), &limits()).expect("a well-formed picture");
    assert!((decoded.duration_seconds() - 1.0).abs() < 0.01);

    // A picture whose media type claims 2.2 GB inside a block that fits the file.
    let error = audio::decode(&with_picture(&flac, 0x8686_8686), &limits()).unwrap_err();
    assert!(
        matches!(error, AudioError::Corrupt { format: "flac", .. }),
        "{error}"
    );

    // Found by the audio_decode fuzz target: 44 bytes whose picture block runs 8.8 MB past the end.
    let found: &[u8] = b"fLaC\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x86\x01\x01\x01\x01\x01\x01\x01.snd1I\x02C";
    assert_eq!(found.len(), 44);
    let error = audio::decode(found, &limits()).unwrap_err();
    assert!(
        matches!(error, AudioError::Truncated { format: "flac", .. }),
        "{error}"
    );
}

#[test]
fn ogg_comment_headers_must_hold_the_comments_they_declare() {
    for (name, magic) in [
        ("tone-opus-16000-1ch-1000ms.ogg", &b"OpusTags"[..]),
        ("tone-vorbis-16000-1ch-1000ms.ogg", &b"\x03vorbis"[..]),
    ] {
        let file = fixture(name);
        assert!(audio::decode(&file, &limits()).is_ok(), "{name}");
        // The comment count, after the vendor string: claim a billion comments in a packet of a few bytes
        // (the demuxer allocates each comment's declared length before reading it).
        let tags = file
            .windows(magic.len())
            .position(|w| w == magic)
            .expect("comment header")
            + magic.len();
        let vendor = u32::from_le_bytes(file[tags..tags + 4].try_into().unwrap()) as usize;
        let mut bomb = file.clone();
        bomb[tags + 4 + vendor..tags + 8 + vendor].copy_from_slice(&(1u32 << 30).to_le_bytes());
        let error = audio::decode(&bomb, &limits()).unwrap_err();
        assert!(
            matches!(error, AudioError::Corrupt { format: "ogg", .. }),
            "{name}: {error}"
        );
        assert!(
            error.to_string().contains("comment header"),
            "{name}: {error}"
        );
    }
}
