//! Metadata that sauti does not use but demuxers would read: ID3v2 tags in front of MP3 (and some FLAC)
//! files are skipped, and FLAC's metadata blocks must hold what they declare. Demuxers allocate a declared
//! length before reading it, so a few bytes claiming gigabytes could exhaust memory and abort the process.

use super::AudioError;

/// The bytes after any ID3v2 tags at the start. Tags carry only metadata, which sauti does not use; skipping
/// them here means no decoder ever trusts the sizes their frames declare (a 51-byte upload whose frame claims
/// 2.4 GB made the demuxer allocate that much before finding the bytes missing).
pub(crate) fn skip_id3v2(mut bytes: &[u8]) -> Result<&[u8], AudioError> {
    const HEADER: usize = 10;
    const FOOTER_PRESENT: u8 = 0x10;
    let mut tagged = false;
    while let Some(header) = bytes.get(..HEADER).filter(|h| h.starts_with(b"ID3")) {
        let corrupt = |reason: String| AudioError::Corrupt {
            format: "mp3",
            reason,
        };
        let version = header[3];
        if !(2..=4).contains(&version) {
            return Err(corrupt(format!("unknown ID3 tag version 2.{version}")));
        }
        if header[6..10].iter().any(|&b| b & 0x80 != 0) {
            return Err(corrupt("the ID3 tag's size is malformed".into()));
        }
        let size = header[6..10]
            .iter()
            .fold(0usize, |size, &b| (size << 7) | usize::from(b));
        let footer = if version == 4 && header[5] & FOOTER_PRESENT != 0 {
            HEADER
        } else {
            0
        };
        let end = HEADER + size + footer;
        if end > bytes.len() {
            return Err(AudioError::Truncated {
                format: "mp3",
                detail: format!(
                    "the ID3 tag declares {end} bytes but the file has {}",
                    bytes.len()
                ),
            });
        }
        bytes = &bytes[end..];
        tagged = true;
        // Some taggers pad after the tag rather than inside it.
        let padding = bytes.iter().take_while(|&&b| b == 0).count();
        bytes = &bytes[padding..];
    }
    if tagged && bytes.is_empty() {
        return Err(AudioError::Corrupt {
            format: "mp3",
            reason: "the file holds an ID3 tag and no audio".into(),
        });
    }
    Ok(bytes)
}

/// FLAC metadata blocks: each must fit in the file, and the lengths inside a picture or a Vorbis comment
/// block must fit in the block (a 44-byte upload whose picture claimed a 2.2 GB media type made the demuxer
/// allocate that much). Nothing is checked after the last metadata block: the frames are checked as decoded.
pub(crate) fn check_flac(bytes: &[u8]) -> Result<(), AudioError> {
    const PICTURE: u8 = 6;
    const VORBIS_COMMENT: u8 = 4;
    let mut pos = 4; // after "fLaC"
    loop {
        let Some(header) = bytes.get(pos..pos + 4) else {
            return Err(flac_truncated(format!(
                "the file ends inside its metadata, at byte {pos}"
            )));
        };
        let len =
            usize::from(header[1]) << 16 | usize::from(header[2]) << 8 | usize::from(header[3]);
        let Some(block) = bytes.get(pos + 4..pos + 4 + len) else {
            return Err(flac_truncated(format!(
                "the metadata block at byte {pos} declares {len} bytes but the file has {}",
                bytes.len() - pos - 4
            )));
        };
        let fits = match header[0] & 0x7F {
            PICTURE => picture_fits(block),
            VORBIS_COMMENT => comments_fit(block),
            _ => true,
        };
        if !fits {
            return Err(AudioError::Corrupt {
                format: "flac",
                reason: format!(
                    "a length inside the metadata block at byte {pos} runs past the block"
                ),
            });
        }
        if header[0] & 0x80 != 0 {
            return Ok(());
        }
        pos += 4 + len;
    }
}

fn flac_truncated(detail: String) -> AudioError {
    AudioError::Truncated {
        format: "flac",
        detail,
    }
}

/// The comment headers of Ogg Opus and Vorbis streams (each stream's second packet, reassembled across pages),
/// fed the pages one by one: the Vorbis comment lengths must fit in the packet, which the demuxer allocates
/// before reading.
#[derive(Default)]
pub(crate) struct OggComments {
    /// Per logical stream (by serial number): packets completed so far, and the one being assembled.
    streams: Vec<(u32, usize, Vec<u8>)>,
}

impl OggComments {
    /// Take one whole page (its serial number, lacing table and body); false when it completes a comment header
    /// whose lengths run past the packet.
    pub(crate) fn page(&mut self, serial: u32, lacing: &[u8], body: &[u8]) -> bool {
        let index = match self.streams.iter().position(|(s, _, _)| *s == serial) {
            Some(index) => index,
            None => {
                self.streams.push((serial, 0, Vec::new()));
                self.streams.len() - 1
            }
        };
        let (_, done, packet) = &mut self.streams[index];
        let mut at = 0;
        for &lace in lacing {
            let segment = body.get(at..at + usize::from(lace)).unwrap_or(&[]);
            at += usize::from(lace);
            if *done == 1 {
                packet.extend_from_slice(segment);
            }
            if lace < 255 {
                if *done == 1 && !comment_header_fits(packet) {
                    return false;
                }
                *done += 1;
                packet.clear();
            }
        }
        true
    }
}

/// An Opus or Vorbis comment header packet holds the comments it declares; other packets pass.
fn comment_header_fits(packet: &[u8]) -> bool {
    if let Some(comments) = packet.strip_prefix(b"OpusTags") {
        comments_fit(comments)
    } else if let Some(comments) = packet.strip_prefix(b"\x03vorbis") {
        comments_fit(comments)
    } else {
        true
    }
}

/// A FLAC picture block: type, media type, description, four numbers, then the data, each length-prefixed
/// string or data inside the block.
fn picture_fits(block: &[u8]) -> bool {
    let mut reader = Lengths {
        bytes: block,
        pos: 4,
    };
    reader.skip_be().is_some()
        && reader.skip_be().is_some()
        && reader.advance(16).is_some()
        && reader.skip_be().is_some()
}

/// A Vorbis comment block (little-endian lengths): the vendor string, a count, then that many strings.
fn comments_fit(block: &[u8]) -> bool {
    let mut reader = Lengths {
        bytes: block,
        pos: 0,
    };
    if reader.skip_le().is_none() {
        return false;
    }
    let Some(count) = reader.le() else {
        return false;
    };
    (0..count).all(|_| reader.skip_le().is_some())
}

/// Reads 32-bit lengths and skips what they announce, failing at the end of `bytes`.
struct Lengths<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Lengths<'_> {
    fn advance(&mut self, n: usize) -> Option<()> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())?;
        self.pos = end;
        Some(())
    }

    fn word(&mut self) -> Option<[u8; 4]> {
        let word = self.bytes.get(self.pos..self.pos + 4)?.try_into().ok()?;
        self.pos += 4;
        Some(word)
    }

    fn le(&mut self) -> Option<u32> {
        self.word().map(u32::from_le_bytes)
    }

    fn skip_le(&mut self) -> Option<()> {
        let len = self.le()?;
        self.advance(len as usize)
    }

    fn skip_be(&mut self) -> Option<()> {
        let len = u32::from_be_bytes(self.word()?);
        self.advance(len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id3(version: u8, flags: u8, size: [u8; 4]) -> Vec<u8> {
        let mut tag = b"ID3".to_vec();
        tag.extend_from_slice(&[version, 0, flags]);
        tag.extend_from_slice(&size);
        tag
    }

    #[test]
    fn id3_tags_are_skipped_whole() {
        let mut file = id3(3, 0, [0, 0, 1, 0]); // 128 bytes of frames
        file.extend_from_slice(&[0; 128]);
        file.extend_from_slice(&id3(4, 0x10, [0, 0, 0, 2])); // stacked, with a footer
        file.extend_from_slice(&[0; 12]);
        file.extend_from_slice(&[0xFF, 0xFB, 0x90, 0x44]);
        assert_eq!(skip_id3v2(&file).unwrap(), &[0xFF, 0xFB, 0x90, 0x44]);
        assert_eq!(skip_id3v2(b"fLaC").unwrap(), b"fLaC");
    }

    #[test]
    fn id3_tags_that_overrun_the_file_are_refused() {
        // A tag declaring 64 KiB in a 51-byte file (the fuzzer's out-of-memory input had this shape).
        let mut file = id3(3, 0, [0, 4, 0, 0]);
        file.extend_from_slice(b"TSSE\x92\x9c\x08\x0c");
        assert!(skip_id3v2(&file)
            .unwrap_err()
            .to_string()
            .contains("declares 65546 bytes"));
        assert!(skip_id3v2(&id3(3, 0, [0, 0x80, 0, 0])).is_err());
        assert!(skip_id3v2(&id3(9, 0, [0, 0, 0, 0])).is_err());
        assert!(skip_id3v2(&id3(3, 0, [0, 0, 0, 0]))
            .unwrap_err()
            .to_string()
            .contains("no audio"));
    }

    fn flac(blocks: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut file = b"fLaC".to_vec();
        for (i, (kind, block)) in blocks.iter().enumerate() {
            let last = if i + 1 == blocks.len() { 0x80 } else { 0 };
            file.push(kind | last);
            file.extend_from_slice(&(block.len() as u32).to_be_bytes()[1..]);
            file.extend_from_slice(block);
        }
        file
    }

    fn picture(media_type_len: u32) -> Vec<u8> {
        let mut block = 3u32.to_be_bytes().to_vec();
        block.extend_from_slice(&media_type_len.to_be_bytes());
        block.extend_from_slice(b"image/png");
        block.extend_from_slice(&0u32.to_be_bytes()); // no description
        block.extend_from_slice(&[0; 16]);
        block.extend_from_slice(&2u32.to_be_bytes());
        block.extend_from_slice(&[0x89, 0x50]);
        block
    }

    fn comments(lengths: &[u32], count: u32) -> Vec<u8> {
        let mut block = 5u32.to_le_bytes().to_vec();
        block.extend_from_slice(b"sauti");
        block.extend_from_slice(&count.to_le_bytes());
        for &len in lengths {
            block.extend_from_slice(&len.to_le_bytes());
            block.extend_from_slice(&vec![b'a'; len.min(8) as usize]);
        }
        block
    }

    #[test]
    fn flac_metadata_that_fits_passes() {
        let file = flac(&[
            (0, vec![0; 34]),
            (6, picture(9)),
            (4, comments(&[8, 3], 2)),
            (1, vec![0; 10]),
        ]);
        assert!(check_flac(&file).is_ok());
    }

    #[test]
    fn flac_metadata_declaring_more_than_it_holds_is_refused() {
        // The fuzzer's input: a picture block past the end of a 44-byte file.
        let found = [
            0x66, 0x4c, 0x61, 0x43, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86,
            0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86,
            0x86, 0x1, 0x1, 0x1, 0x1, 0x1, 0x1, 0x1, 0x2e, 0x73, 0x6e, 0x64, 0x31, 0x49, 0x2, 0x43,
        ];
        let error = check_flac(&found).unwrap_err().to_string();
        assert!(error.contains("declares 8816262 bytes"), "{error}");
        // Lengths inside blocks that fit the file.
        for block in [
            (6, picture(0x8686_8686)),
            (4, comments(&[8, u32::MAX], 2)),
            (4, comments(&[8], 1 << 30)),
        ] {
            let error = check_flac(&flac(&[(0, vec![0; 34]), block]))
                .unwrap_err()
                .to_string();
            assert!(error.contains("runs past the block"), "{error}");
        }
        assert!(
            check_flac(b"fLaC\x00\x00\x00\x22").is_err(),
            "no last block"
        );
    }
}
