//! Format detection from the bytes alone: clients mislabel files, so names and MIME types are never trusted.

use super::AudioError;

/// A container we can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// RIFF WAVE (PCM integer or float).
    Wav,
    /// MPEG-1/2 Layer III, with or without an ID3v2 tag.
    Mp3,
    /// Native FLAC.
    Flac,
    /// Ogg carrying Vorbis or Opus.
    Ogg,
    /// WebM (the Matroska profile browsers record), carrying Opus or Vorbis.
    WebM,
    /// Matroska (`.mka`) carrying Opus, Vorbis or FLAC.
    Matroska,
}

impl Container {
    /// The short lowercase name reported to users (`sauti audio info`, logs).
    pub fn name(self) -> &'static str {
        match self {
            Container::Wav => "wav",
            Container::Mp3 => "mp3",
            Container::Flac => "flac",
            Container::Ogg => "ogg",
            Container::WebM => "webm",
            Container::Matroska => "matroska",
        }
    }

    /// The file extension symphonia's probe is hinted with.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Container::Wav => "wav",
            Container::Mp3 => "mp3",
            Container::Flac => "flac",
            Container::Ogg => "ogg",
            Container::WebM => "webm",
            Container::Matroska => "mka",
        }
    }
}

/// Tell the container from the first bytes of an upload.
///
/// Recognised formats that sauti cannot decode are named in [`AudioError::Unsupported`] so the client
/// learns what to send instead.
pub fn sniff(bytes: &[u8]) -> Result<Container, AudioError> {
    if bytes.is_empty() {
        return Err(AudioError::Empty("zero bytes were sent"));
    }
    let at = |offset: usize, magic: &[u8]| bytes.get(offset..offset + magic.len()) == Some(magic);

    if at(0, b"RIFF") && at(8, b"WAVE") {
        return Ok(Container::Wav);
    }
    if (at(0, b"RF64") || at(0, b"BW64")) && at(8, b"WAVE") {
        return Err(AudioError::Unsupported("RF64/BW64 WAV".into()));
    }
    if at(0, b"fLaC") {
        return Ok(Container::Flac);
    }
    if at(0, b"OggS") {
        return ogg_codec_check(bytes).map(|()| Container::Ogg);
    }
    if at(0, &[0x1A, 0x45, 0xDF, 0xA3]) {
        return Ok(match matroska_doctype(bytes) {
            Some(doctype) if doctype == b"webm" => Container::WebM,
            _ => Container::Matroska,
        });
    }
    if at(0, b"ID3") || mpeg_audio_layer(bytes) == Some(3) {
        return Ok(Container::Mp3);
    }
    Err(
        unsupported_kind(bytes).map_or(AudioError::Unrecognised, |kind| {
            AudioError::Unsupported(kind.into())
        }),
    )
}

/// Formats people do send that we recognise but do not decode.
fn unsupported_kind(bytes: &[u8]) -> Option<&'static str> {
    let at = |offset: usize, magic: &[u8]| bytes.get(offset..offset + magic.len()) == Some(magic);
    if at(4, b"ftyp") {
        Some("MP4/M4A/3GP (AAC)")
    } else if at(0, b"#!AMR") {
        Some("AMR")
    } else if at(0, b"FORM") && (at(8, b"AIFF") || at(8, b"AIFC")) {
        Some("AIFF")
    } else if at(0, b"caff") {
        Some("Core Audio (CAF)")
    } else if at(0, b".snd") {
        Some("Sun/NeXT AU")
    } else if at(0, &[0x30, 0x26, 0xB2, 0x75]) {
        Some("Windows Media (ASF/WMA)")
    } else if mpeg_audio_layer(bytes) == Some(0) {
        Some("AAC (ADTS)")
    } else if matches!(mpeg_audio_layer(bytes), Some(1 | 2)) {
        Some("MPEG audio layer I/II")
    } else {
        None
    }
}

/// Ogg is a wrapper: reject the codecs inside it that we cannot decode before starting the decoder. Every
/// logical stream is checked (the demuxer reads the headers of all of them): their first pages come first.
fn ogg_codec_check(bytes: &[u8]) -> Result<(), AudioError> {
    const BEGINNING_OF_STREAM: u8 = 0x02;
    let mut pos = 0;
    loop {
        // The first page of a logical stream holds the codec's identification header after the segment table.
        let page = bytes.get(pos..).unwrap_or(&[]);
        let segments = usize::from(*page.get(26).unwrap_or(&0));
        let payload = page.get(27 + segments..).unwrap_or(&[]);
        ogg_stream_codec(payload)?;
        let body: usize = page
            .get(27..27 + segments)
            .map_or(0, |table| table.iter().map(|&s| usize::from(s)).sum());
        pos += 27 + segments + body;
        let next = bytes.get(pos..pos + 6).unwrap_or(&[]);
        if !(next.starts_with(b"OggS") && next[5] & BEGINNING_OF_STREAM != 0) {
            return Ok(());
        }
    }
}

/// Whether sauti decodes the codec whose identification header starts `payload`.
fn ogg_stream_codec(payload: &[u8]) -> Result<(), AudioError> {
    let starts = |magic: &[u8]| payload.starts_with(magic);
    if starts(b"OpusHead") || starts(b"\x01vorbis") || payload.is_empty() {
        Ok(())
    } else if starts(b"Speex   ") {
        Err(AudioError::Unsupported("Ogg Speex".into()))
    } else if starts(b"\x7FFLAC") {
        Err(AudioError::Unsupported(
            "Ogg FLAC (send native .flac instead)".into(),
        ))
    } else {
        Err(AudioError::Unsupported("Ogg with an unknown codec".into()))
    }
}

/// The MPEG audio layer (1–3) of a frame header at the start, or 0 for an ADTS (AAC) header.
fn mpeg_audio_layer(bytes: &[u8]) -> Option<u8> {
    let [b0, b1, b2, ..] = *bytes else {
        return None;
    };
    if b0 != 0xFF || b1 & 0xE0 != 0xE0 {
        return None;
    }
    let version = (b1 >> 3) & 0b11;
    let layer_bits = (b1 >> 1) & 0b11;
    if layer_bits == 0 {
        // ADTS: 12-bit sync, layer always 00, and a sampling-frequency index below 13.
        return (b1 & 0xF0 == 0xF0 && (b2 >> 2) & 0x0F < 13).then_some(0);
    }
    let bitrate_index = b2 >> 4;
    let rate_index = (b2 >> 2) & 0b11;
    if version == 0b01 || bitrate_index == 0x0F || rate_index == 0b11 {
        return None;
    }
    Some(4 - layer_bits)
}

/// Read the EBML header's DocType (`webm` or `matroska`) without a full parser.
fn matroska_doctype(bytes: &[u8]) -> Option<&[u8]> {
    // The header is small; the DocType element (ID 0x4282) sits in its first few dozen bytes.
    let window = &bytes[..bytes.len().min(64)];
    let pos = window.windows(2).position(|w| w == [0x42, 0x82])?;
    let size_byte = *window.get(pos + 2)?;
    // A one-byte EBML size has its top bit set; DocType strings are short.
    if size_byte & 0x80 == 0 {
        return None;
    }
    let len = usize::from(size_byte & 0x7F);
    window.get(pos + 3..pos + 3 + len)
}

/// Walk the RIFF chunks of a WAV file and return the seconds of audio its `fmt ` and `data` chunks declare.
///
/// `None` when the header is incomplete or the length is unknown: recorders that stream write `0` or
/// `0xFFFF_FFFF` as the data size.
pub(crate) fn wav_declared_seconds(bytes: &[u8]) -> Option<f64> {
    let mut pos = 12usize;
    let mut bytes_per_second = None;
    while let Some(header) = bytes.get(pos..pos + 8) {
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        match &header[..4] {
            b"fmt " => {
                // WAVEFORMAT: tag(2) channels(2) rate(4) byte_rate(4) block_align(2) bits(2).
                let fmt = bytes.get(pos + 8..pos + 24)?;
                let byte_rate = u32::from_le_bytes([fmt[8], fmt[9], fmt[10], fmt[11]]);
                bytes_per_second = (byte_rate > 0).then_some(f64::from(byte_rate));
            }
            b"data" => {
                let streaming = size == 0 || size == u32::MAX;
                return (!streaming)
                    .then(|| bytes_per_second.map(|bps| f64::from(size) / bps))
                    .flatten();
            }
            _ => {}
        }
        pos = pos.checked_add(8 + size as usize + (size as usize & 1))?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ogg page of one segment: `flags` (0x02 begins a stream), `serial`, `payload` (< 255 bytes).
    fn ogg_page(flags: u8, serial: u32, payload: &[u8]) -> Vec<u8> {
        let mut page = b"OggS\0".to_vec();
        page.push(flags);
        page.extend_from_slice(&[0; 8]); // granule position
        page.extend_from_slice(&serial.to_le_bytes());
        page.extend_from_slice(&[0; 8]); // sequence number, checksum
        page.push(1);
        page.push(payload.len() as u8);
        page.extend_from_slice(payload);
        page
    }

    #[test]
    fn every_logical_ogg_stream_must_be_a_codec_sauti_decodes() {
        let opus = ogg_page(0x02, 1, b"OpusHead\x01\x01\x38\x01\x80\xbb\0\0\0\0\0");
        let tags = ogg_page(0, 1, b"OpusTags\0\0\0\0\0\0\0\0");
        assert_eq!(
            sniff(&[opus.clone(), tags.clone()].concat()),
            Ok(Container::Ogg)
        );
        let flac = ogg_page(0x02, 2, b"\x7FFLAC\x01\0\0\x01fLaC");
        let error = sniff(&[opus.clone(), flac, tags.clone()].concat()).unwrap_err();
        assert!(error.to_string().contains("Ogg FLAC"), "{error}");
        let speex = ogg_page(0x02, 3, b"Speex   1.2");
        assert!(sniff(&[opus, speex, tags].concat()).is_err());
    }

    #[test]
    fn magic_numbers_decide_the_container() {
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), Ok(Container::Wav));
        assert_eq!(sniff(b"fLaC\0\0\0\x22"), Ok(Container::Flac));
        assert_eq!(sniff(b"ID3\x04\0\0\0\0\0\0"), Ok(Container::Mp3));
        assert_eq!(sniff(&[0xFF, 0xFB, 0x90, 0x64]), Ok(Container::Mp3));
        assert_eq!(sniff(&[]), Err(AudioError::Empty("zero bytes were sent")));
        assert_eq!(sniff(b"hello world"), Err(AudioError::Unrecognised));
        assert!(matches!(
            sniff(b"\0\0\0\x20ftypM4A "),
            Err(AudioError::Unsupported(_))
        ));
        assert!(matches!(sniff(b"#!AMR\n"), Err(AudioError::Unsupported(_))));
        assert!(
            matches!(sniff(&[0xFF, 0xF1, 0x50, 0x80]), Err(AudioError::Unsupported(k)) if k.contains("AAC"))
        );
    }

    #[test]
    fn webm_and_matroska_are_told_apart_by_doctype() {
        let webm = [
            0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84, b'w', b'e',
            b'b', b'm',
        ];
        assert_eq!(sniff(&webm), Ok(Container::WebM));
        let mut mka = webm.to_vec();
        mka.truncate(11);
        mka.extend_from_slice(&[0x88]);
        mka.extend_from_slice(b"matroska");
        assert_eq!(sniff(&mka), Ok(Container::Matroska));
    }

    #[test]
    fn streaming_wav_sizes_mean_unknown_length() {
        let mut wav = b"RIFF\xff\xff\xff\xffWAVEfmt \x10\0\0\0\x01\0\x01\0".to_vec();
        wav.extend_from_slice(&16_000u32.to_le_bytes());
        wav.extend_from_slice(&32_000u32.to_le_bytes());
        wav.extend_from_slice(b"\x02\0\x10\0data\xff\xff\xff\xff");
        assert_eq!(wav_declared_seconds(&wav), None);
        let n = wav.len();
        wav[n - 4..].copy_from_slice(&64_000u32.to_le_bytes());
        assert_eq!(wav_declared_seconds(&wav), Some(2.0));
    }
}
