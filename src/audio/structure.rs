//! Structural checks for the streaming containers (Ogg, Matroska/WebM), whose headers declare no length:
//! a cut-off upload is recognised by its last page or element running past the end of the bytes. Also the
//! declared sizes of WAV chunks and FLAC metadata (`tags`), which demuxers allocate before reading.

use super::sniff::Container;
use super::AudioError;

/// Fail with [`AudioError::Truncated`] or [`AudioError::Corrupt`] when a streaming container is cut off or
/// its framing is broken; other containers are checked against their declared length while decoding.
pub(crate) fn check_complete(container: Container, bytes: &[u8]) -> Result<(), AudioError> {
    let format = container.name();
    let truncated = |detail: String| AudioError::Truncated { format, detail };
    match container {
        Container::Ogg => check_ogg(bytes).map_err(|cut| match cut {
            OggCut::At(offset) => truncated(format!("the Ogg page at byte {offset} is cut off")),
            OggCut::NoEnd => {
                truncated("the stream ends without its final (end-of-stream) page".into())
            }
            OggCut::Garbage(offset) => AudioError::Corrupt {
                format,
                reason: format!("no Ogg page starts at byte {offset}"),
            },
            OggCut::Comments(offset) => AudioError::Corrupt {
                format,
                reason: format!(
                    "the comment header ending on the page at byte {offset} declares more than it holds"
                ),
            },
        }),
        Container::WebM | Container::Matroska => check_matroska(bytes).map_err(|offset| {
            truncated(format!(
                "the element at byte {offset} is cut off or runs past what holds it"
            ))
        }),
        Container::Wav => check_wav(bytes).map_err(|offset| {
            truncated(format!(
                "the chunk at byte {offset} declares more bytes than the file has"
            ))
        }),
        Container::Flac => super::tags::check_flac(bytes),
        Container::Mp3 => Ok(()),
    }
}

/// The chunks before the audio data must fit in the file: the demuxer allocates what a metadata chunk declares
/// (up to 4 GB) before reading it. The data chunk itself may run short (checked while decoding) or carry the
/// "unknown length" that streaming encoders write.
fn check_wav(bytes: &[u8]) -> Result<(), usize> {
    let mut pos = 12; // after "RIFF", the length and "WAVE"
    while let Some(header) = bytes.get(pos..pos + 8) {
        if &header[..4] == b"data" {
            return Ok(());
        }
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let end = pos + 8 + size + (size & 1);
        if end > bytes.len() {
            return Err(pos);
        }
        pos = end;
    }
    Ok(())
}

enum OggCut {
    At(usize),
    NoEnd,
    Garbage(usize),
    /// A comment header whose lengths run past its packet, ending on the page at this offset.
    Comments(usize),
}

/// Walk the Ogg pages: each must be whole, some logical stream must end with an end-of-stream page, and the
/// comment headers must hold what they declare (`tags::OggComments`).
fn check_ogg(bytes: &[u8]) -> Result<(), OggCut> {
    const END_OF_STREAM: u8 = 0x04;
    let mut pos = 0;
    let mut ended = false;
    let mut comments = super::tags::OggComments::default();
    // The first page completing a comment header that overruns its packet (reported once the pages are whole).
    let mut overrun = None;
    while pos < bytes.len() {
        let Some(header) = bytes.get(pos..pos + 27) else {
            return Err(OggCut::At(pos));
        };
        if &header[..4] != b"OggS" {
            return Err(OggCut::Garbage(pos));
        }
        let segments = usize::from(header[26]);
        let table = bytes
            .get(pos + 27..pos + 27 + segments)
            .ok_or(OggCut::At(pos))?;
        let body: usize = table.iter().map(|&s| usize::from(s)).sum();
        let end = pos + 27 + segments + body;
        if end > bytes.len() {
            return Err(OggCut::At(pos));
        }
        ended |= header[5] & END_OF_STREAM != 0;
        let serial = u32::from_le_bytes([header[14], header[15], header[16], header[17]]);
        if !comments.page(serial, table, &bytes[pos + 27 + segments..end]) {
            overrun.get_or_insert(pos);
        }
        pos = end;
    }
    if !ended {
        return Err(OggCut::NoEnd);
    }
    overrun.map_or(Ok(()), |page| Err(OggCut::Comments(page)))
}

/// Matroska master elements the demuxer reads children of (the rest it reads whole or skips).
const MATROSKA_MASTERS: [u32; 28] = [
    0x1A45_DFA3,
    0x114D_9B74,
    0x4DBB,
    0x1549_A966,
    0xA0,
    0x75A1,
    0xA6,
    0x1654_AE6B,
    0xAE,
    0xE0,
    0xE1,
    0x6D80,
    0x6240,
    0x5035,
    0x47E7,
    0x55B0,
    0x55D0,
    0x1C53_BB6B,
    0xBB,
    0xB7,
    0x1043_A770,
    0x45B9,
    0xB6,
    0x80,
    0x1254_C367,
    0x7373,
    0x63C0,
    0x67C8,
];
const SEGMENT: u32 = 0x1853_8067;
const CLUSTER: u32 = 0x1F43_B675;
const SIMPLE_BLOCK: u32 = 0xA3;
const BLOCK: u32 = 0xA1;
/// Deeper nesting than any real file has.
const MAX_DEPTH: usize = 16;

/// Walk the EBML elements: step into the Segment and its Clusters (which live recorders write with unknown
/// sizes), into every other master element within its bounds, and check the frame sizes inside each block.
/// Every element must fit in the element that holds it, and a block's laced frames in the block: the demuxer
/// allocates whatever size an element or lace declares before reading it, so one that overruns is refused here.
fn check_matroska(bytes: &[u8]) -> Result<(), usize> {
    check_elements(bytes, 0, bytes.len(), 0)
}

fn check_elements(bytes: &[u8], mut pos: usize, end: usize, depth: usize) -> Result<(), usize> {
    while pos < end {
        let (id, id_len) = read_id(&bytes[pos..end]).ok_or(pos)?;
        let (size, size_len) = read_size(&bytes[pos + id_len..end]).ok_or(pos)?;
        let data = pos + id_len + size_len;
        if id == SEGMENT || id == CLUSTER {
            pos = data;
            continue;
        }
        let stop = size
            .and_then(|size| usize::try_from(size).ok())
            .and_then(|size| data.checked_add(size))
            .filter(|&stop| stop <= end)
            .ok_or(pos)?;
        if MATROSKA_MASTERS.contains(&id) {
            if depth == MAX_DEPTH {
                return Err(pos);
            }
            check_elements(bytes, data, stop, depth + 1)?;
        } else if id == SIMPLE_BLOCK || id == BLOCK {
            check_lacing(&bytes[data..stop]).ok_or(pos)?;
        }
        pos = stop;
    }
    Ok(())
}

/// A block's header and, when it holds several frames, that their declared sizes fit in it.
fn check_lacing(block: &[u8]) -> Option<()> {
    const XIPH: u8 = 0b01;
    const EBML: u8 = 0b11;
    let (_, track_len) = read_size(block)?;
    let flags = *block.get(track_len + 2)?; // after the track number and the 16-bit timecode
    let lacing = (flags >> 1) & 0b11;
    if lacing != XIPH && lacing != EBML {
        return Some(()); // one frame, or equal frames dividing the block
    }
    let mut pos = track_len + 3;
    let sized = usize::from(*block.get(pos)?); // frames - 1: the last one takes what is left
    pos += 1;
    let mut total = 0u64;
    let mut previous = 0i64;
    for i in 0..sized {
        let size = if lacing == XIPH {
            let mut size = 0u64;
            loop {
                let byte = *block.get(pos)?;
                pos += 1;
                size += u64::from(byte);
                if byte != 255 {
                    break size;
                }
            }
        } else {
            let (raw, len) = read_size(block.get(pos..)?)?;
            pos += len;
            let raw = i64::try_from(raw?).ok()?;
            let size = if i == 0 {
                raw
            } else {
                // A signed difference from the previous size: the raw value less half its range.
                previous.checked_add(raw - ((1i64 << (7 * len - 1)) - 1))?
            };
            previous = size;
            u64::try_from(size).ok()?
        };
        total = total.checked_add(size)?;
    }
    (total <= (block.len() - pos) as u64).then_some(())
}

/// An EBML element ID (1–4 bytes, marker bits kept) and its length.
fn read_id(bytes: &[u8]) -> Option<(u32, usize)> {
    let first = *bytes.first()?;
    let len = first.leading_zeros() as usize + 1;
    if len > 4 {
        return None;
    }
    let raw = bytes.get(..len)?;
    Some((
        raw.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)),
        len,
    ))
}

/// An EBML size (1–8 bytes, marker bit removed; `None` when all value bits are set: "unknown size").
fn read_size(bytes: &[u8]) -> Option<(Option<u64>, usize)> {
    let first = *bytes.first()?;
    let len = first.leading_zeros() as usize + 1;
    if len > 8 {
        return None;
    }
    let raw = bytes.get(..len)?;
    let mask = if len == 8 { 0 } else { 0xFFu8 >> len };
    let value = raw[1..]
        .iter()
        .fold(u64::from(first & mask), |acc, &b| acc << 8 | u64::from(b));
    let all_ones = (1u64 << (7 * len)) - 1;
    Some(((value != all_ones).then_some(value), len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ebml_sizes_and_unknown_sizes() {
        assert_eq!(read_size(&[0x81]), Some((Some(1), 1)));
        assert_eq!(read_size(&[0x40, 0x02]), Some((Some(2), 2)));
        assert_eq!(read_size(&[0xFF]), Some((None, 1)));
        assert_eq!(
            read_size(&[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            Some((None, 8))
        );
        assert_eq!(read_size(&[0x00]), None);
        assert_eq!(read_id(&[0x1A, 0x45, 0xDF, 0xA3]), Some((0x1A45_DFA3, 4)));
    }

    #[test]
    fn a_cut_element_is_found() {
        // An EBML header holding a DocType, then a Void element claiming 16 bytes but holding 2.
        let bytes = [
            0x1A, 0x45, 0xDF, 0xA3, 0x84, 0x42, 0x82, 0x81, b'w', 0xEC, 0x90, 0, 0,
        ];
        assert_eq!(check_matroska(&bytes), Err(9));
        assert_eq!(check_matroska(&bytes[..9]), Ok(()));
        // A child running past its master (a DocType of 5 bytes in a header of 4).
        let bytes = [
            0x1A, 0x45, 0xDF, 0xA3, 0x84, 0x42, 0x82, 0x85, b'w', b'e', b'b', b'm', 0,
        ];
        assert_eq!(check_matroska(&bytes), Err(5));
    }

    /// A Cluster (unknown size) holding one SimpleBlock: track 1, timecode 0, the given flags and payload.
    fn cluster_with_block(flags: u8, payload: &[u8]) -> Vec<u8> {
        let mut block = vec![0x81, 0, 0, flags];
        block.extend_from_slice(payload);
        let mut bytes = vec![0x1F, 0x43, 0xB6, 0x75, 0xFF, 0xA3, 0x80 | block.len() as u8];
        bytes.extend_from_slice(&block);
        bytes
    }

    #[test]
    fn wav_chunks_before_the_data_must_fit() {
        let mut wav = b"RIFF\xff\xff\xff\xffWAVE".to_vec();
        wav.extend_from_slice(b"LIST\x04\0\0\0INFO");
        wav.extend_from_slice(b"data\xff\xff\xff\xff\0\0");
        assert_eq!(check_wav(&wav), Ok(()));
        let mut bomb = b"RIFF\xff\xff\xff\xffWAVE".to_vec();
        bomb.extend_from_slice(b"LIST\xf0\xff\xff\xffINFO");
        assert_eq!(check_wav(&bomb), Err(12));
    }

    #[test]
    fn laced_frames_must_fit_in_their_block() {
        // Xiph lacing, 3 frames: 2 sized (255 + 10 = 265 and 5) in a block with 20 bytes left: refused.
        let bytes = cluster_with_block(0b010, &[2, 255, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(check_matroska(&bytes), Err(5));
        // Xiph lacing, 2 frames: the first 3 bytes, the last what is left.
        assert_eq!(
            check_matroska(&cluster_with_block(0b010, &[1, 3, 1, 2, 3, 4])),
            Ok(())
        );
        // EBML lacing, 3 frames: 2, then a difference of 0 - 63 making the second size negative.
        let negative = cluster_with_block(0b110, &[2, 0x82, 0x80, 0, 0, 0, 0]);
        assert_eq!(check_matroska(&negative), Err(5));
        // EBML lacing, 3 frames of 2, 2 (difference 0 is 0xBF) and the rest.
        assert_eq!(
            check_matroska(&cluster_with_block(0b110, &[2, 0x82, 0xBF, 1, 2, 3, 4, 5])),
            Ok(())
        );
        // A first size of 2^40 bytes (the fuzzer's 109 TB allocation had this shape).
        let huge = cluster_with_block(0b110, &[1, 0x01, 0, 1, 0, 0, 0, 0, 0, 9, 9]);
        assert_eq!(check_matroska(&huge), Err(5));
    }
}
