//! The spec §2.4 body of `POST /v1/text-to-speech`, encoded as the connection sends it.
//!
//! Most of the body is the base64 text of the WAV. The synthesis worker hands over the samples once; the
//! connection then converts them to 16-bit PCM and base64 one chunk at a time as it asks for the next bytes to
//! send, so each chunk is written to the socket from the cache of the core that encoded it, and the connection
//! is woken once per response rather than once per chunk. The length is known from the sample count before
//! the first byte, so the response still carries an exact `Content-Length`.

use axum::body::{Body, Bytes};
use base64::Engine as _;
use serde::Serialize;

use crate::audio;

/// WAV bytes per chunk: a multiple of 3 (base64 groups) and of 2 (samples), so chunks join without padding.
/// A chunk's 256 KiB of text stays in the core's L2 cache between being encoded and being copied to the socket.
const CHUNK: usize = 3 * 65536;
const PREFIX: &str = "{\"audio_base64\":\"";

/// The spec §2.4 synthesis result, as documented; the body is written by [`SynthesisBody`] in this order.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SynthesisResult {
    /// Base64 of a 16 kHz mono 16-bit WAV.
    audio_base64: String,
    /// Always `audio/wav`.
    #[schema(example = "audio/wav")]
    content_type: String,
    /// Seconds of audio.
    #[schema(example = 2.48)]
    duration_seconds: f64,
    /// Characters of the text.
    #[schema(example = 42)]
    characters_synthesized: usize,
    /// The voice used.
    #[schema(example = "zuri")]
    voice_id: String,
}

/// Spec §2.4 members other than the audio.
#[derive(Debug, Serialize)]
struct Tail<'a> {
    content_type: &'a str,
    duration_seconds: f64,
    characters_synthesized: usize,
    voice_id: &'a str,
}

/// The body for a synthesis of `samples` samples: everything but the audio is known before encoding starts.
#[derive(Debug)]
pub struct SynthesisBody {
    samples: usize,
    /// `","content_type":…}`: closes the base64 string and carries the other members.
    tail: String,
}

impl SynthesisBody {
    /// The body of `samples` samples of `voice_id` made from `chars` characters.
    pub fn new(samples: usize, chars: usize, voice_id: &str) -> Self {
        let seconds = samples as f64 / f64::from(audio::SAMPLE_RATE);
        let tail = Tail {
            content_type: "audio/wav",
            duration_seconds: (seconds * 1000.0).round() / 1000.0,
            characters_synthesized: chars,
            voice_id,
        };
        let members = serde_json::to_string(&tail).unwrap_or_else(|_| "{}".into());
        Self {
            samples,
            tail: format!("\",{}", members.strip_prefix('{').unwrap_or(&members)),
        }
    }

    /// The whole body for audio already encoded in another format (`output_format`): `audio` as base64 and
    /// `content_type` its media type; `samples` 16 kHz samples give the duration.
    pub fn encoded(
        audio: &[u8],
        content_type: &str,
        samples: usize,
        chars: usize,
        voice_id: &str,
    ) -> Vec<u8> {
        let seconds = samples as f64 / f64::from(audio::SAMPLE_RATE);
        let tail = Tail {
            content_type,
            duration_seconds: (seconds * 1000.0).round() / 1000.0,
            characters_synthesized: chars,
            voice_id,
        };
        let members = serde_json::to_string(&tail).unwrap_or_else(|_| "{}".into());
        let encoded = base64::engine::general_purpose::STANDARD.encode(audio);
        let mut body = Vec::with_capacity(PREFIX.len() + encoded.len() + members.len() + 2);
        body.extend_from_slice(PREFIX.as_bytes());
        body.extend_from_slice(encoded.as_bytes());
        body.extend_from_slice(b"\",");
        body.extend_from_slice(members.strip_prefix('{').unwrap_or(&members).as_bytes());
        body
    }

    /// Exact length of the body in bytes.
    pub fn content_length(&self) -> usize {
        let wav = audio::wav_len_16k(self.samples);
        PREFIX.len() + wav.div_ceil(3) * 4 + self.tail.len()
    }

    /// The body's bytes for `samples` (as many as given to [`SynthesisBody::new`]), encoded a chunk at a
    /// time as they are taken.
    pub fn chunks<S: AsRef<[f32]>>(self, samples: S) -> impl Iterator<Item = Bytes> {
        Chunks::new(self, samples)
    }

    /// The response body: a stream that encodes each chunk when the connection asks for it. hyper lets other
    /// tasks run after 16 rounds of reading and writing a connection, so even a 2,000-character answer holds the
    /// runtime thread for at most 16 chunks' encoding (~1.6 ms) at a time. (Yielding after every chunk as well
    /// only added scheduling: 4.5 instead of 3.8 context switches per request under load.)
    pub fn into_body(self, samples: Vec<f32>) -> Body {
        let chunks = self.chunks(samples).map(Ok::<_, std::convert::Infallible>);
        Body::from_stream(futures_util::stream::iter(chunks))
    }
}

/// The chunks of a body, encoded one at a time.
struct Chunks<S> {
    body: SynthesisBody,
    samples: S,
    /// Samples encoded so far.
    done: usize,
    /// WAV bytes not yet base64-encoded: the header at first, then at most 2 (the rest of a 3-byte group).
    wav: Vec<u8>,
    ended: bool,
}

impl<S: AsRef<[f32]>> Chunks<S> {
    fn new(body: SynthesisBody, samples: S) -> Self {
        let mut wav = Vec::with_capacity(CHUNK + 2);
        wav.extend_from_slice(&audio::wav_header_16k(body.samples));
        Self {
            body,
            samples,
            done: 0,
            wav,
            ended: false,
        }
    }
}

impl<S: AsRef<[f32]>> Iterator for Chunks<S> {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        // Every chunk but a last one takes samples, so nothing is done only before the first.
        let first = self.done == 0;
        let rest = &self.samples.as_ref()[self.done..];
        let room = CHUNK.saturating_sub(self.wav.len()) / 2;
        let now = &rest[..room.min(rest.len())];
        audio::extend_pcm16(&mut self.wav, now);
        self.done += now.len();
        let last = now.len() == rest.len();
        let whole = if last {
            self.wav.len()
        } else {
            self.wav.len() / 3 * 3
        };
        let tail = &self.body.tail;
        let mut text = String::with_capacity(whole.div_ceil(3) * 4 + PREFIX.len() + tail.len());
        if first {
            text.push_str(PREFIX);
        }
        base64::engine::general_purpose::STANDARD.encode_string(&self.wav[..whole], &mut text);
        self.wav.drain(..whole);
        if last {
            text.push_str(tail);
            self.ended = true;
        }
        Some(Bytes::from(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(samples: &[f32], chars: usize, voice: &str) -> (usize, Vec<u8>) {
        let body = SynthesisBody::new(samples.len(), chars, voice);
        let len = body.content_length();
        let out = body
            .chunks(samples)
            .flat_map(|chunk| chunk.to_vec())
            .collect();
        (len, out)
    }

    #[test]
    fn chunks_join_into_the_json_with_the_exact_length() {
        for n in [0, 1, 2, 3, 12_265, 12_266, 12_267, 40_000, 100_001] {
            let samples: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.01).sin() * 0.5).collect();
            let (len, out) = whole(&samples, 42, "zuri");
            assert_eq!(out.len(), len, "{n} samples");
            let json: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
            let wav = base64::engine::general_purpose::STANDARD
                .decode(json["audio_base64"].as_str().expect("string"))
                .expect("base64");
            assert_eq!(wav, audio::encode_wav_16k(&samples), "{n} samples");
            assert_eq!(json["content_type"], "audio/wav");
            assert_eq!(json["characters_synthesized"], 42);
            assert_eq!(json["voice_id"], "zuri");
            let seconds = json["duration_seconds"].as_f64().expect("number");
            assert!((seconds - n as f64 / 16_000.0).abs() < 0.001);
        }
    }

    #[test]
    fn chunks_are_encoded_as_they_are_taken() {
        let samples = vec![0.1; 3 * CHUNK];
        let body = SynthesisBody::new(samples.len(), 1, "zuri");
        let mut chunks = body.chunks(&samples[..]);
        let first = chunks.next().expect("a first chunk");
        assert!(first.starts_with(PREFIX.as_bytes()));
        assert_eq!(first.len(), PREFIX.len() + CHUNK / 3 * 4);
        assert_eq!(
            chunks.count(),
            6,
            "the rest of 6 × CHUNK bytes of PCM and the tail"
        );
    }
}
