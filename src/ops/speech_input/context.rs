//! One context of a stream of speech: its text held by a [`TextBuffer`], its pieces spoken in order by a task
//! of its own, through one encoder (so the context's audio is one stream in its format), each piece's audio
//! sent with when each of its characters is spoken. The task ends after the context's last piece (with
//! [`Said::Final`]), at its first failure ([`Said::Failed`]), when the socket stops, or when nobody reads its
//! audio any more.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use super::buffer::TextBuffer;
use super::{InputVoice, MAX_WAITING_CHARS};
use crate::actors::tts::stream::Piece;
use crate::audio::output::OutputFormat;
use crate::ops::stream::PieceEncoder;
use crate::ops::Service;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;
use crate::tts::alignment::{self, CharacterTimes};

/// Something a context said, for the socket to send.
#[derive(Debug)]
pub struct Spoken {
    /// The context.
    pub context: Arc<str>,
    /// What it said.
    pub said: Said,
}

/// What a context says.
#[derive(Debug)]
pub enum Said {
    /// Audio in the context's format, with its characters' times where the voice gives them.
    Audio {
        /// The encoded bytes.
        bytes: Vec<u8>,
        /// When each character is spoken, from the start of these bytes.
        alignment: Option<Alignment>,
    },
    /// Every piece is spoken: the context is done.
    Final,
    /// The context failed and is done.
    Failed(ApiError),
}

/// When each character of a piece of audio is spoken, in seconds from the start of that audio.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    /// The written text's characters.
    pub written: CharacterTimes,
    /// The text as read (numbers and abbreviations written out).
    pub normalized: CharacterTimes,
}

impl Alignment {
    /// The times of `piece`, which starts `offset` seconds into the stream its word times count from, placed
    /// `at` seconds on the message's clock (0: the message's own start; or how much of the context was heard
    /// before it); with a space first when it follows other words (`after_words`), so a client joining the
    /// messages' characters gets the words apart.
    fn of(piece: &Piece, offset: f64, at: f64, after_words: bool) -> Option<Self> {
        if piece.text.is_empty() || piece.words.is_empty() {
            return None;
        }
        let shift = |mut times: CharacterTimes| {
            for t in times.starts.iter_mut().chain(times.ends.iter_mut()) {
                *t = (*t - offset).max(0.0) + at;
            }
            if after_words && times.characters.first().is_none_or(|c| c.trim() != "") {
                times.characters.insert(0, " ".into());
                times.starts.insert(0, at);
                times.ends.insert(0, at);
            }
            times
        };
        Some(Self {
            written: shift(alignment::written(&piece.text, &piece.words)),
            normalized: shift(alignment::normalized(&piece.words)),
        })
    }

    /// The space that ends the last word of a context, `at` seconds on the message's clock.
    fn closing_space(at: f64) -> Self {
        let space = CharacterTimes {
            characters: vec![" ".into()],
            starts: vec![at],
            ends: vec![at],
        };
        Self {
            written: space.clone(),
            normalized: space,
        }
    }
}

/// Where a context's speech stands.
struct Progress {
    /// Pieces are asked for with word times (until the voice turns out not to give them).
    timed: bool,
    /// Some message carried times already.
    aligned: bool,
    /// Seconds of audio sent so far.
    heard: f64,
}

/// How a context speaks.
pub struct Speaking<S> {
    /// The service (anything that reaches it and can be sent to the context's task).
    pub service: S,
    /// The voice, settings and dictionaries.
    pub voice: InputVoice,
    /// The audio's format.
    pub format: OutputFormat,
    /// Where what it says goes (bounded: a socket that does not write holds the synthesis back).
    pub events: mpsc::Sender<Spoken>,
    /// Cancelled when the socket ends: the task stops at once.
    pub stop: CancellationToken,
    /// Held while the task runs (the socket's bound on contexts still speaking).
    pub permit: OwnedSemaphorePermit,
    /// Times count from the start of the context's audio (else from the start of each message's).
    pub continuous: bool,
}

/// An open context: text goes in, pieces go to its task.
pub struct Context {
    buffer: TextBuffer,
    pieces: mpsc::UnboundedSender<String>,
    /// Characters handed to the task and not yet spoken.
    waiting: Arc<AtomicUsize>,
}

impl Context {
    /// Open context `id`: its task starts at once and waits for pieces.
    pub fn open<S>(id: Arc<str>, speaking: Speaking<S>, buffer: TextBuffer) -> Self
    where
        S: AsRef<Service> + Send + Sync + 'static,
    {
        let (pieces, queue) = mpsc::unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        tokio::spawn(speak(id, speaking, queue, Arc::clone(&waiting)));
        Self {
            buffer,
            pieces,
            waiting,
        }
    }

    /// Take text in; the pieces it completes go to be spoken. 422 when the context would hold more than
    /// [`MAX_WAITING_CHARS`] not yet spoken (the text is not taken).
    pub fn text(&mut self, text: &str) -> Result<(), ApiError> {
        let waiting = self.waiting.load(Ordering::Relaxed) + self.buffer.held_chars();
        if waiting + text.chars().count() > MAX_WAITING_CHARS {
            return Err(ApiError::unprocessable(format!(
                "this context already has {waiting} characters waiting to be spoken; at most \
                 {MAX_WAITING_CHARS} may wait: send more as the audio arrives"
            )));
        }
        for piece in self.buffer.push(text) {
            self.hand_on(piece);
        }
        Ok(())
    }

    /// Speak everything held now.
    pub fn flush(&mut self) {
        if let Some(piece) = self.buffer.flush() {
            self.hand_on(piece);
        }
    }

    /// No more text: what is held is spoken, then the context says [`Said::Final`].
    pub fn end(mut self) {
        self.flush();
    }

    fn hand_on(&self, piece: String) {
        self.waiting
            .fetch_add(piece.chars().count(), Ordering::Relaxed);
        let _ = self.pieces.send(piece);
    }
}

async fn speak<S>(
    id: Arc<str>,
    speaking: Speaking<S>,
    queue: mpsc::UnboundedReceiver<String>,
    waiting: Arc<AtomicUsize>,
) where
    S: AsRef<Service> + Send + Sync + 'static,
{
    let Speaking {
        service,
        voice,
        format,
        events,
        stop,
        permit,
        continuous,
    } = speaking;
    let _held = permit;
    let task = Task {
        service: service.as_ref(),
        voice: &voice,
        events: &events,
        id: &id,
        continuous,
    };
    let outcome = tokio::select! {
        () = stop.cancelled() => return,
        outcome = task.run(format, queue, &waiting) => outcome,
    };
    let said = match outcome {
        Ok(true) => Said::Final,
        // Nobody reads any more.
        Ok(false) => return,
        Err(error) => Said::Failed(error),
    };
    let _ = events.send(Spoken { context: id, said }).await;
}

struct Task<'a> {
    service: &'a Service,
    voice: &'a InputVoice,
    events: &'a mpsc::Sender<Spoken>,
    id: &'a Arc<str>,
    continuous: bool,
}

impl Task<'_> {
    /// Speak every piece until the context ends: `Ok(false)` when nobody reads any more.
    async fn run(
        &self,
        format: OutputFormat,
        mut queue: mpsc::UnboundedReceiver<String>,
        waiting: &AtomicUsize,
    ) -> Result<bool, ApiError> {
        let mut encoder = PieceEncoder::new(self.service, format)?;
        let mut progress = Progress {
            timed: true,
            aligned: false,
            heard: 0.0,
        };
        while let Some(text) = queue.recv().await {
            let chars = text.chars().count();
            let spoken = self.piece(&mut encoder, text, &mut progress).await;
            waiting.fetch_sub(chars, Ordering::Relaxed);
            if !spoken? {
                return Ok(false);
            }
        }
        let tail = encoder.finish().await.map_err(failed)?;
        // The format's last bytes, and the space after the last word.
        if tail.is_empty() && !progress.aligned {
            return Ok(true);
        }
        let space = Alignment::closing_space(self.clock(&progress));
        Ok(self.say(tail, progress.aligned.then_some(space)).await)
    }

    /// Where a message starts on the clock its times count on.
    fn clock(&self, progress: &Progress) -> f64 {
        match self.continuous {
            true => progress.heard,
            false => 0.0,
        }
    }

    /// Speak one piece; `Ok(false)` when nobody reads any more. Once the voice turns out not to time its
    /// words, the rest of the context is asked for without them.
    async fn piece(
        &self,
        encoder: &mut PieceEncoder,
        text: String,
        progress: &mut Progress,
    ) -> Result<bool, ApiError> {
        let Some(prepared) = self.voice.piece(text)? else {
            return Ok(true);
        };
        let mut opened = match progress.timed {
            true => {
                let (opened, is_timed) = prepared.stream_timed_if_possible(self.service).await?;
                progress.timed = is_timed;
                opened
            }
            false => prepared.stream(self.service, false).await?,
        };
        // Word times count from the start of this synthesis; each message's from the start of its audio, or
        // of the context's.
        let mut offset = 0.0;
        while let Some(piece) = opened.next().await {
            let piece = piece?;
            let bytes = encoder.push(&piece.samples).await.map_err(failed)?;
            let at = self.clock(progress);
            let alignment = Alignment::of(&piece, offset, at, progress.aligned);
            progress.aligned |= alignment.is_some();
            let seconds = piece.samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
            offset += seconds;
            progress.heard += seconds;
            if !self.say(bytes, alignment).await {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Send audio; false when nobody reads any more.
    async fn say(&self, bytes: Vec<u8>, alignment: Option<Alignment>) -> bool {
        let said = Said::Audio { bytes, alignment };
        let spoken = Spoken {
            context: Arc::clone(self.id),
            said,
        };
        self.events.send(spoken).await.is_ok()
    }
}

fn failed(error: String) -> ApiError {
    ApiError::new(
        ErrorCode::SynthesisFailed,
        format!("the audio could not be encoded: {error}"),
    )
}
