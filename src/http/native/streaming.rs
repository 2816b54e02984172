//! Streamed synthesis on the wire: each encoded chunk (`ops::stream`) sent at once as a chunked body.

use axum::body::Bytes;
use futures_util::Stream;

use crate::ops::stream::Chunk;

/// The audio alone: each chunk's bytes.
pub fn audio(
    chunks: impl Stream<Item = Result<Chunk, std::io::Error>> + Send + 'static,
) -> axum::body::Body {
    use futures_util::StreamExt as _;
    axum::body::Body::from_stream(chunks.map(|chunk| chunk.map(|c| Bytes::from(c.bytes))))
}
