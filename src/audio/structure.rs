//! Structural checks for the streaming containers (Ogg, Matroska/WebM), whose headers declare no length:
//! a cut-off upload is recognised by its last page or element running past the end of the bytes.

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
        }),
        Container::WebM | Container::Matroska => check_matroska(bytes)
            .map_err(|offset| truncated(format!("the element at byte {offset} is cut off"))),
        Container::Wav | Container::Mp3 | Container::Flac => Ok(()),
    }
}

enum OggCut {
    At(usize),
    NoEnd,
    Garbage(usize),
}

/// Walk the Ogg pages: each must be whole, and some logical stream must end with an end-of-stream page.
fn check_ogg(bytes: &[u8]) -> Result<(), OggCut> {
    const END_OF_STREAM: u8 = 0x04;
    let mut pos = 0;
    let mut ended = false;
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
        pos = end;
    }
    if ended {
        Ok(())
    } else {
        Err(OggCut::NoEnd)
    }
}

/// Walk the EBML elements, stepping into the Segment and its Clusters (which live recorders write with
/// unknown sizes) and over everything else; every skipped element must fit in the bytes.
fn check_matroska(bytes: &[u8]) -> Result<(), usize> {
    const SEGMENT: u32 = 0x1853_8067;
    const CLUSTER: u32 = 0x1F43_B675;
    let mut pos = 0;
    while pos < bytes.len() {
        let (id, id_len) = read_id(&bytes[pos..]).ok_or(pos)?;
        let (size, size_len) = read_size(&bytes[pos + id_len..]).ok_or(pos)?;
        let data = pos + id_len + size_len;
        if id == SEGMENT || id == CLUSTER {
            pos = data;
            continue;
        }
        let size = size.ok_or(pos)?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| data.checked_add(s))
            .ok_or(pos)?;
        if end > bytes.len() {
            return Err(pos);
        }
        pos = end;
    }
    Ok(())
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
        // EBML header of 3 bytes' payload, then a Void element claiming 16 bytes but holding 2.
        let bytes = [0x1A, 0x45, 0xDF, 0xA3, 0x83, 1, 2, 3, 0xEC, 0x90, 0, 0];
        assert_eq!(check_matroska(&bytes), Err(8));
        assert_eq!(check_matroska(&bytes[..8]), Ok(()));
    }
}
