//! Streamed synthesis: the request is checked, the synthesis opened and its first piece
//! awaited (so every refusal, including a text with nothing to say, is still a problem answer with its
//! status); then each piece is encoded as it arrives and sent at once. A failure after the first bytes can
//! only end the body early, which the client sees as an incomplete chunked answer; it is logged.

use std::sync::Arc;

use futures_util::Stream;

use super::Service;
use crate::actors::tts::stream::Piece;
use crate::actors::tts::SpeechStream;
use crate::audio::output::{OutputFormat, StreamEncoder};
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;
use crate::tts::lexicon::Lexicon;
use crate::tts::VoiceSettings;

/// What to synthesise as a stream.
pub struct StreamRequest<'a> {
    /// The API key whose share of the workers it uses.
    pub owner: &'a str,
    /// The voice.
    pub voice_id: &'a str,
    /// The text.
    pub text: &'a str,
    /// How to speak.
    pub settings: VoiceSettings,
    /// The request's pronunciation dictionaries, laid over the server's lexicon.
    pub lexicon: Option<Arc<Lexicon>>,
    /// Whether the pieces carry word times.
    pub timed: bool,
}

/// A synthesis whose first piece is made.
pub struct Opened {
    first: Piece,
    rest: SpeechStream,
}

/// Start synthesising and wait for the first piece: what fails before it is the request's error.
pub async fn open(service: &Service, request: StreamRequest<'_>) -> Result<Opened, ApiError> {
    let mut rest = service
        .graph
        .tts
        .stream(
            request.owner,
            request.voice_id,
            request.text,
            request.settings,
            request.lexicon,
            request.timed,
        )
        .await?;
    match rest.next().await {
        Some(Ok(first)) => Ok(Opened { first, rest }),
        Some(Err(error)) => Err(error.into()),
        None => Err(ApiError::new(
            ErrorCode::SynthesisFailed,
            "synthesis ended before any audio was made",
        )),
    }
}

/// Encoded bytes of the stream: one chunk for each piece of speech (`piece` is `Some`) and a last one with
/// whatever the format writes at its end (`piece` is `None`).
pub struct Chunk {
    /// The encoded bytes.
    pub bytes: Vec<u8>,
    /// The piece they encode.
    pub piece: Option<Piece>,
}

struct Encoding {
    decoders: Arc<tokio::sync::Semaphore>,
    encoder: StreamEncoder,
    format: OutputFormat,
    first: Option<Piece>,
    rest: SpeechStream,
}

/// The stream encoded in `format`, chunk by chunk as each piece is made.
pub fn encoded(
    service: &Service,
    format: OutputFormat,
    opened: Opened,
) -> Result<impl Stream<Item = Result<Chunk, std::io::Error>> + Send, ApiError> {
    let encoder =
        StreamEncoder::new(format).map_err(|e| ApiError::new(ErrorCode::InternalError, e))?;
    let start = Encoding {
        decoders: Arc::clone(&service.decoders),
        encoder,
        format,
        first: Some(opened.first),
        rest: opened.rest,
    };
    Ok(futures_util::stream::unfold(
        Some(start),
        |encoding| async move {
            let mut encoding = encoding?;
            let next = match encoding.first.take() {
                Some(first) => Some(Ok(first)),
                None => encoding.rest.next().await,
            };
            let outcome = match next {
                Some(Ok(piece)) => encoding
                    .piece(piece)
                    .await
                    .map(|(chunk, encoding)| (chunk, Some(encoding))),
                Some(Err(error)) => Err(error.to_string()),
                None => encoding.finish().await.map(|chunk| (chunk, None)),
            };
            Some(match outcome {
                Ok((chunk, encoding)) => (Ok(chunk), encoding),
                Err(error) => {
                    tracing::warn!(%error, "a streamed synthesis ended early");
                    (Err(std::io::Error::other(error)), None)
                }
            })
        },
    ))
}

impl Encoding {
    async fn piece(mut self, piece: Piece) -> Result<(Chunk, Self), String> {
        let (encoder, bytes) = match self.format.costly() {
            false => {
                let bytes = self.encoder.push(&piece.samples)?;
                (self.encoder, bytes)
            }
            true => {
                let samples = piece.samples.clone();
                let encoder = self.encoder;
                blocking(&self.decoders, move || {
                    let mut encoder = encoder;
                    let bytes = encoder.push(&samples)?;
                    Ok((encoder, bytes))
                })
                .await?
            }
        };
        self.encoder = encoder;
        let chunk = Chunk {
            bytes,
            piece: Some(piece),
        };
        Ok((chunk, self))
    }

    async fn finish(self) -> Result<Chunk, String> {
        let encoder = self.encoder;
        let bytes = match self.format.costly() {
            false => encoder.finish()?,
            true => blocking(&self.decoders, move || encoder.finish()).await?,
        };
        Ok(Chunk { bytes, piece: None })
    }
}

/// Run codec work off the async threads, within the codec permits.
async fn blocking<T: Send + 'static>(
    decoders: &Arc<tokio::sync::Semaphore>,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let permit = super::audio::permit(decoders, "every audio encoder is busy")
        .await
        .map_err(|_| "every audio encoder stayed busy".to_string())?;
    tokio::task::spawn_blocking(move || {
        let _admitted = permit;
        work()
    })
    .await
    .map_err(|_| "the audio encoder stopped unexpectedly".to_string())?
}
