//! The spec §2.4 body of `POST /v1/text-to-speech`, streamed as it is encoded.
//!
//! Most of the body is the base64 text of the WAV. The synthesis worker converts the samples to 16-bit PCM and
//! base64 a chunk at a time and hands each chunk to the connection as soon as it is ready, so the encoding of
//! one chunk overlaps the sending of the one before. The length is known from the sample count before the first
//! byte, so the response still carries an exact `Content-Length`.

use axum::body::{Body, Bytes};
use base64::Engine as _;
use serde::Serialize;

use crate::audio;

/// WAV bytes per chunk: a multiple of 3 (base64 groups) and of 2 (samples), so chunks join without padding.
/// 192 KiB wakes the connection three times for a 200-character answer and keeps a chunk within a core's L2
/// cache; smaller chunks cost more wake-ups, larger ones more cache misses (bench/README.md).
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
    content_type: &'static str,
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

    /// Exact length of the body in bytes.
    pub fn len(&self) -> usize {
        let wav = audio::wav_len_16k(self.samples);
        PREFIX.len() + wav.div_ceil(3) * 4 + self.tail.len()
    }

    /// Encode `samples` (as many as given to [`SynthesisBody::new`]) chunk by chunk into `sink`; stops early
    /// when `sink` returns `false` (the client went away).
    pub fn encode(self, samples: &[f32], mut sink: impl FnMut(Bytes) -> bool) {
        let mut wav = Vec::with_capacity(CHUNK + 2);
        wav.extend_from_slice(&audio::wav_header_16k(self.samples));
        let mut rest = samples;
        let mut first = true;
        loop {
            let room = CHUNK.saturating_sub(wav.len()) / 2;
            let (now, later) = rest.split_at(room.min(rest.len()));
            audio::extend_pcm16(&mut wav, now);
            rest = later;
            let last = rest.is_empty();
            let whole = if last { wav.len() } else { wav.len() / 3 * 3 };
            let mut text =
                String::with_capacity(whole.div_ceil(3) * 4 + PREFIX.len() + self.tail.len());
            if first {
                text.push_str(PREFIX);
                first = false;
            }
            base64::engine::general_purpose::STANDARD.encode_string(&wav[..whole], &mut text);
            wav.drain(..whole);
            if last {
                text.push_str(&self.tail);
            }
            if !sink(Bytes::from(text)) || last {
                return;
            }
        }
    }
}

/// A response body fed by a channel of chunks.
pub fn channel_body(chunks: tokio::sync::mpsc::UnboundedReceiver<Bytes>) -> Body {
    let stream = futures_util::stream::unfold(chunks, |mut chunks| async move {
        let chunk = chunks.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(chunk), chunks))
    });
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(samples: &[f32], chars: usize, voice: &str) -> (usize, Vec<u8>) {
        let body = SynthesisBody::new(samples.len(), chars, voice);
        let len = body.len();
        let mut out = Vec::new();
        body.encode(samples, |chunk| {
            out.extend_from_slice(&chunk);
            true
        });
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
    fn a_refusing_sink_stops_the_encoding() {
        let samples = vec![0.1; 100_000];
        let body = SynthesisBody::new(samples.len(), 1, "zuri");
        let mut calls = 0;
        body.encode(&samples, |_| {
            calls += 1;
            false
        });
        assert_eq!(calls, 1);
    }
}
