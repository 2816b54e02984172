//! OpenAI's server-sent events for speech (`stream_format: "sse"`): a `speech.audio.delta` event with the base64
//! of each encoded piece as it is made, then `speech.audio.done` with the usage. A failure after the first event
//! ends the stream there, without `speech.audio.done`, so a client never takes a cut stream for a whole one.

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::{Stream, StreamExt as _};
use serde_json::json;

use crate::ops::stream::Chunk;

/// The event stream of a streamed synthesis of `chars` characters.
pub fn speech(
    chunks: impl Stream<Item = Result<Chunk, std::io::Error>> + Send + 'static,
    chars: usize,
) -> Response {
    let deltas = chunks.filter_map(|chunk| {
        std::future::ready(match chunk {
            Ok(chunk) if chunk.bytes.is_empty() => None,
            Ok(chunk) => Some(Ok(delta(&chunk.bytes))),
            Err(error) => Some(Err(error)),
        })
    });
    let done = futures_util::stream::once(std::future::ready(Ok(done(chars))));
    let events = deltas
        .chain(done)
        .scan(false, |failed, event: Result<Bytes, std::io::Error>| {
            let next = (!*failed).then(|| {
                *failed = event.is_err();
                event
            });
            std::future::ready(next)
        });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(events),
    )
        .into_response()
}

/// `speech.audio.delta`: the next bytes of the audio.
fn delta(bytes: &[u8]) -> Bytes {
    let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
    event(&json!({ "type": "speech.audio.delta", "audio": audio }))
}

/// `speech.audio.done`: sauti counts characters, so `input_tokens` is the characters synthesised.
fn done(chars: usize) -> Bytes {
    event(&json!({
        "type": "speech.audio.done",
        "usage": { "input_tokens": chars, "output_tokens": 0, "total_tokens": chars },
    }))
}

/// One event on the wire.
fn event(data: &serde_json::Value) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(bytes: &[u8]) -> Result<Chunk, std::io::Error> {
        Ok(Chunk {
            bytes: bytes.to_vec(),
            piece: None,
        })
    }

    async fn body(response: Response) -> (String, bool) {
        use http_body_util::BodyExt as _;
        let mut body = response.into_body();
        let mut text = String::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => {
                    if let Ok(data) = frame.into_data() {
                        text.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
                Err(_) => return (text, true),
            }
        }
        (text, false)
    }

    #[tokio::test]
    async fn each_piece_is_a_delta_and_the_stream_ends_with_done() {
        let chunks = futures_util::stream::iter(vec![chunk(b"ab"), chunk(b""), chunk(b"c")]);
        let response = speech(chunks, 7);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        let (text, failed) = body(response).await;
        assert!(!failed);
        let events: Vec<serde_json::Value> = text
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
            .collect();
        assert_eq!(events.len(), 3, "{text}");
        assert_eq!(events[0]["type"], "speech.audio.delta");
        assert_eq!(events[0]["audio"], "YWI=");
        assert_eq!(events[1]["audio"], "Yw==");
        assert_eq!(events[2]["type"], "speech.audio.done");
        assert_eq!(events[2]["usage"]["input_tokens"], 7);
        assert_eq!(events[2]["usage"]["total_tokens"], 7);
    }

    #[tokio::test]
    async fn a_failure_ends_the_stream_without_done() {
        let chunks = futures_util::stream::iter(vec![
            chunk(b"ab"),
            Err(std::io::Error::other("the voice stopped")),
            chunk(b"c"),
        ]);
        let (text, failed) = body(speech(chunks, 3)).await;
        assert!(failed);
        assert!(text.contains("speech.audio.delta"));
        assert!(!text.contains("speech.audio.done"), "{text}");
    }
}
