//! The TtsActor: owns the voices and admits synthesis requests to a bounded pool of blocking workers.

mod actor;
pub mod spread;
pub mod stream;

pub use actor::{ToTtsActor, TtsActor, TtsArgs};

use std::time::Duration;

use super::{ActorError, ActorSlot};
use std::sync::Arc;

use crate::cancel::Cancel;
use crate::tts::lexicon::Lexicon;
use crate::tts::{TtsError, VoiceSettings};

/// Longest a caller waits for synthesis (queueing included).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// Why synthesis gave no audio.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SynthesisError {
    /// The text or settings were refused (422).
    #[error(transparent)]
    Invalid(#[from] TtsError),
    /// No such voice (404).
    #[error("voice {0:?} not found")]
    UnknownVoice(String),
    /// The voice is listed but cannot synthesise (503).
    #[error("voice {voice:?} is inactive: {reason}")]
    InactiveVoice {
        /// The voice asked for.
        voice: String,
        /// What is missing and how to install it.
        reason: String,
    },
    /// Word timings were asked of a voice that cannot give them (422).
    #[error("voice {0:?} cannot tell when each word is spoken: its model is one graph that gives no durations (an MMS voice exported by tools/export_mms_tts.py comes with split graphs that do, Piper voices do not); use a split MMS voice or the embedded voices zuri or baraka for timestamps")]
    Untimed(String),
    /// The synthesizer failed on this input (a bug; 503 so the client may retry).
    #[error("synthesis failed: {0}")]
    Engine(String),
    /// Busy, restarting, crashed or timed out (503).
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// Work a caller hands the synthesis worker to do with the samples after the reply (stream them out, say).
pub type Then = Box<dyn FnOnce(Vec<f32>) + Send>;

/// What the caller wants back.
pub enum Delivery {
    /// The samples ([`Synthesised::Samples`]).
    Samples,
    /// The sample count, then `Then` runs with the samples on the worker ([`Synthesised::Delivering`]).
    Then(Then),
    /// The samples and when each word was spoken ([`Synthesised::Timed`]; pieces in order on one worker).
    Timed,
    /// Each piece into the sender as soon as it and those before it are made (with word times when `timed`);
    /// the answer ([`Synthesised::Streaming`]) comes when the work starts.
    Stream {
        /// Whether each piece carries when its words were spoken.
        timed: bool,
        /// Where the pieces go.
        out: stream::PieceSender,
    },
}

/// What a synthesis worker hands back.
#[derive(Debug)]
pub enum Synthesised {
    /// 16 kHz mono samples.
    Samples(Vec<f32>),
    /// Synthesis succeeded with this many samples; the caller's `then` is running with them.
    Delivering {
        /// The sample count (16 kHz).
        samples: usize,
    },
    /// 16 kHz mono samples and when each word was spoken.
    Timed(Vec<f32>, Vec<crate::tts::SpokenWord>),
    /// The work has started; its pieces are on their way.
    Streaming,
}

/// A synthesis streamed piece by piece ([`TtsHandle::stream`]). Dropping it stops the work at its next piece.
pub struct SpeechStream {
    pieces: tokio::sync::mpsc::UnboundedReceiver<Result<stream::Piece, SynthesisError>>,
    _stop_when_dropped: crate::cancel::CancelOnDrop,
}

impl SpeechStream {
    /// The next piece, in order; `None` once the whole text is spoken. An error ends the stream.
    pub async fn next(&mut self) -> Option<Result<stream::Piece, SynthesisError>> {
        self.pieces.recv().await
    }
}

/// The public face of the TtsActor.
#[derive(Clone)]
pub struct TtsHandle {
    slot: ActorSlot<ToTtsActor>,
}

impl TtsHandle {
    /// A handle reading the given slot.
    pub fn new(slot: ActorSlot<ToTtsActor>) -> Self {
        Self { slot }
    }

    /// Synthesise `text` with a voice for `owner` (the API key whose share of the workers it uses), read with
    /// `lexicon` in place of the voice's own when given; 16 kHz mono samples.
    pub async fn synthesize(
        &self,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
    ) -> Result<Vec<f32>, SynthesisError> {
        match self
            .call(owner, voice_id, text, settings, lexicon, Delivery::Samples)
            .await?
        {
            Synthesised::Samples(samples) => Ok(samples),
            _ => Err(mismatch()),
        }
    }

    /// [`TtsHandle::synthesize`], with when each word was spoken (pieces in order on one worker); voices that
    /// cannot tell give [`SynthesisError::Untimed`].
    pub async fn synthesize_timed(
        &self,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
    ) -> Result<(Vec<f32>, Vec<crate::tts::SpokenWord>), SynthesisError> {
        match self
            .call(owner, voice_id, text, settings, lexicon, Delivery::Timed)
            .await?
        {
            Synthesised::Timed(samples, words) => Ok((samples, words)),
            _ => Err(mismatch()),
        }
    }

    /// Synthesise (read with `lexicon` when given), answer with the sample count as soon as synthesis
    /// succeeds, then run `then` with the samples on the synthesis worker (which keeps its permit until `then`
    /// returns).
    pub async fn synthesize_then(
        &self,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
        then: impl FnOnce(Vec<f32>) + Send + 'static,
    ) -> Result<usize, SynthesisError> {
        match self
            .call(
                owner,
                voice_id,
                text,
                settings,
                lexicon,
                Delivery::Then(Box::new(then)),
            )
            .await?
        {
            Synthesised::Delivering { samples } => Ok(samples),
            _ => Err(mismatch()),
        }
    }

    /// Synthesise piece by piece: the stream of pieces once the work has started (errors that come before
    /// it, such as an unknown voice or a busy service, are this call's). The pieces carry word times when
    /// `timed` (voices that cannot tell end the stream with [`SynthesisError::Untimed`]).
    pub async fn stream(
        &self,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
        timed: bool,
    ) -> Result<SpeechStream, SynthesisError> {
        let (out, pieces) = tokio::sync::mpsc::unbounded_channel();
        // The stream, not this call, decides how long the work may go on: it stops when the stream is dropped.
        let cancel = Cancel::new();
        let stop = cancel.on_drop();
        let delivery = Delivery::Stream { timed, out };
        match self
            .call_with(cancel, owner, voice_id, text, settings, lexicon, delivery)
            .await?
        {
            Synthesised::Streaming => Ok(SpeechStream {
                pieces,
                _stop_when_dropped: stop,
            }),
            _ => Err(mismatch()),
        }
    }

    async fn call(
        &self,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
        delivery: Delivery,
    ) -> Result<Synthesised, SynthesisError> {
        // Dropped when this call ends however it ends: an answer, the deadline, or the caller's future dropped
        // because its client disconnected. Unfinished work then stops at its next piece.
        let cancel = Cancel::new();
        let _stop_when_gone = cancel.on_drop();
        self.call_with(cancel, owner, voice_id, text, settings, lexicon, delivery)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn call_with(
        &self,
        cancel: Cancel,
        owner: &str,
        voice_id: &str,
        text: &str,
        settings: VoiceSettings,
        lexicon: Option<Arc<Lexicon>>,
        delivery: Delivery,
    ) -> Result<Synthesised, SynthesisError> {
        let (owner, voice_id, text) = (owner.to_string(), voice_id.to_string(), text.to_string());
        self.slot
            .call(
                "tts",
                |reply| ToTtsActor::Synthesize {
                    owner,
                    voice_id,
                    text,
                    settings,
                    lexicon,
                    delivery,
                    cancel,
                    reply,
                },
                CALL_TIMEOUT,
            )
            .await?
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}

/// The worker answered with the other kind of output than asked for (a bug, never expected).
fn mismatch() -> SynthesisError {
    SynthesisError::Engine("the synthesis worker returned an unexpected output".into())
}
