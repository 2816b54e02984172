//! Streamed synthesis: the request is checked, the synthesis opened and its first piece
//! awaited (so every refusal, including a text with nothing to say, is still a problem answer with its
//! status); then each piece is encoded as it arrives and sent at once. A failure after the first bytes can
//! only end the body early, which the client sees as an incomplete chunked answer; it is logged.

use std::sync::Arc;

use futures_util::Stream;

use super::Service;
use crate::actors::tts::stream::Piece;
use crate::actors::tts::{SpeechStream, SynthesisError};
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
    first: Option<Piece>,
    rest: SpeechStream,
}

/// Start synthesising and wait for the first piece: what fails before it is the request's error.
pub async fn open(service: &Service, request: StreamRequest<'_>) -> Result<Opened, ApiError> {
    opening(service, &request).await.map_err(ApiError::from)
}

/// [`open`] with word times where the voice can tell them (the request's `timed` is the wish): the stream,
/// and whether its pieces carry times.
pub async fn open_timed_if_possible(
    service: &Service,
    request: StreamRequest<'_>,
) -> Result<(Opened, bool), ApiError> {
    if request.timed {
        match opening(service, &request).await {
            Ok(opened) => return Ok((opened, true)),
            Err(SynthesisError::Untimed(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let untimed = StreamRequest {
        timed: false,
        lexicon: request.lexicon.clone(),
        ..request
    };
    Ok((open(service, untimed).await?, false))
}

async fn opening(service: &Service, request: &StreamRequest<'_>) -> Result<Opened, SynthesisError> {
    let mut rest = service
        .graph
        .tts
        .stream(
            request.owner,
            request.voice_id,
            request.text,
            request.settings,
            request.lexicon.clone(),
            request.timed,
        )
        .await?;
    match rest.next().await {
        Some(Ok(first)) => Ok(Opened {
            first: Some(first),
            rest,
        }),
        Some(Err(error)) => Err(error),
        None => Err(SynthesisError::Engine(
            "it ended before any audio was made".into(),
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
    encoder: PieceEncoder,
    first: Option<Piece>,
    rest: SpeechStream,
}

/// The stream encoded in `format`, chunk by chunk as each piece is made.
pub fn encoded(
    service: &Service,
    format: OutputFormat,
    opened: Opened,
) -> Result<impl Stream<Item = Result<Chunk, std::io::Error>> + Send, ApiError> {
    let start = Encoding {
        encoder: PieceEncoder::new(service, format)?,
        first: opened.first,
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
                Some(Ok(piece)) => match encoding.encoder.push(&piece.samples).await {
                    Ok(bytes) => Ok((
                        Chunk {
                            bytes,
                            piece: Some(piece),
                        },
                        Some(encoding),
                    )),
                    Err(error) => Err(error),
                },
                Some(Err(error)) => Err(error.to_string()),
                None => encoding
                    .encoder
                    .finish()
                    .await
                    .map(|bytes| (Chunk { bytes, piece: None }, None)),
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

impl Opened {
    /// The next piece of speech (the first one first); `None` after the last.
    pub async fn next(&mut self) -> Option<Result<Piece, ApiError>> {
        match self.first.take() {
            Some(first) => Some(Ok(first)),
            None => self
                .rest
                .next()
                .await
                .map(|piece| piece.map_err(ApiError::from)),
        }
    }
}

/// One encoder fed piece by piece: cheap formats encode on the async threads, costly ones off them within
/// the codec permits.
pub struct PieceEncoder {
    decoders: Arc<tokio::sync::Semaphore>,
    encoder: Option<StreamEncoder>,
    format: OutputFormat,
}

impl PieceEncoder {
    /// An encoder of `format`.
    pub fn new(service: &Service, format: OutputFormat) -> Result<Self, ApiError> {
        let encoder =
            StreamEncoder::new(format).map_err(|e| ApiError::new(ErrorCode::InternalError, e))?;
        Ok(Self {
            decoders: Arc::clone(&service.decoders),
            encoder: Some(encoder),
            format,
        })
    }

    /// The bytes of `samples` (16 kHz mono), following those before.
    pub async fn push(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        let mut encoder = self
            .encoder
            .take()
            .ok_or_else(|| "the encoder failed earlier".to_string())?;
        if !self.format.costly() {
            let bytes = encoder.push(samples);
            self.encoder = Some(encoder);
            return bytes;
        }
        let samples = samples.to_vec();
        let (encoder, bytes) = blocking(&self.decoders, move || {
            let bytes = encoder.push(&samples)?;
            Ok((encoder, bytes))
        })
        .await?;
        self.encoder = Some(encoder);
        Ok(bytes)
    }

    /// Whatever the format writes at its end.
    pub async fn finish(mut self) -> Result<Vec<u8>, String> {
        let encoder = self
            .encoder
            .take()
            .ok_or_else(|| "the encoder failed earlier".to_string())?;
        match self.format.costly() {
            false => encoder.finish(),
            true => blocking(&self.decoders, move || encoder.finish()).await,
        }
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
