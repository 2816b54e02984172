//! One realtime turn, run as a task beside its session: recognition (for a spoken turn), the dialogue turn with
//! its safety checks, then the reply's speech streamed and encoded piece by piece. Everything it learns goes
//! back to the session actor as a message, so the session decides what reaches the client: a turn that is
//! talked over is aborted, and anything it had still on its way is dropped.

use crate::telemetry::usage::{self, Usage};
use std::sync::Arc;

use ractor::ActorRef;

use super::{Services, SessionOptions, ToSession};
use crate::actors::asr::RecognitionError;
use crate::actors::dialogue::TurnRequest;
use crate::actors::tts::{SpeechStream, SynthesisError};
use crate::actors::ActorError;
use crate::audio::output::{OutputFormat, StreamEncoder};
use crate::tts::{SpokenWord, VoiceSettings};

/// What the caller said: audio to recognise, or typed text; or what the agent goes on to say.
pub enum Said {
    /// 16 kHz mono samples of the turn, its recognition if it began when the caller fell quiet, and what
    /// recognition while the caller spoke settled of it.
    Audio(
        Arc<Vec<f32>>,
        Option<super::early::Early>,
        Option<super::interim::Settled>,
    ),
    /// A typed message.
    Text(String),
    /// Keys pressed on the call's keypad (digits and `*`, the closing `#` left off).
    Keys(String),
    /// The rest of a reply the caller only murmured over ("eeh", "sawa"): spoken without a new turn.
    Agent(String),
}

/// What a turn reports to its session.
#[derive(Debug)]
pub enum TurnEvent {
    /// The caller's words (secrets masked).
    Heard(String),
    /// Nothing was recognised in the audio: no reply.
    Nothing,
    /// The caller only murmured over the reply ("eeh", "mhm, sawa"): no turn, and the reply goes on.
    Backchannel,
    /// The dialogue layer's reply, before its speech.
    Answered {
        /// The reply.
        text: String,
        /// The dialogue session it belongs to.
        session_id: String,
        /// The transfer it leads to, once heard.
        transfer: Option<crate::dialogue::transfer::TransferPlan>,
        /// The agent hangs up once it has been heard.
        end_call: bool,
        /// The reply as the call's record keeps it (intent, slots, actions, safety class).
        record: Box<crate::records::RecordTurn>,
    },
    /// The caller declined the transfer they were offered ("hapana"): no turn.
    Declined,
    /// A piece of the reply's speech, encoded.
    Piece {
        /// The encoded audio (the format's closing bytes when `seconds` is 0).
        audio: Vec<u8>,
        /// The written text it speaks.
        text: String,
        /// Seconds of speech in it.
        seconds: f64,
        /// When each word in it is spoken, from the start of the reply (empty when the voice cannot tell).
        words: Vec<SpokenWord>,
        /// The piece at 8 kHz for the call's recording (empty when the call is not recorded).
        recorded: Vec<i16>,
    },
    /// The whole reply has been sent.
    Done,
    /// The turn failed; the session goes on.
    Failed(String),
}

/// When a spoken turn's stages ended, logged once its first audio is out.
struct Stages {
    started: std::time::Instant,
    /// Recognition (waiting for a worker included), and the wait alone.
    recognised: Option<(std::time::Duration, std::time::Duration)>,
    answered: std::time::Duration,
}

impl Stages {
    fn log(&self) {
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        let (recognise_ms, queued_ms) = self
            .recognised
            .map_or((0, 0), |(took, queued)| (ms(took), ms(queued)));
        tracing::info!(
            recognise_ms,
            queued_ms,
            dialogue_ms = ms(self.answered) - recognise_ms,
            first_audio_ms = ms(self.started.elapsed()),
            "realtime turn answered"
        );
    }
}

/// Where a turn stands in its call.
pub struct Context {
    /// Set when the turn was spoken over the last reply and cut it: what the caller had heard of it.
    pub heard_before: Option<String>,
    /// The caller was offered a transfer they may decline.
    pub declinable: bool,
    /// The call's variables.
    pub variables: std::collections::BTreeMap<String, String>,
}

/// Run turn `id` of a session, reporting to `session`.
pub async fn run(
    services: Services,
    options: SessionOptions,
    said: Said,
    context: Context,
    id: u64,
    session: ActorRef<ToSession>,
) {
    let report = |event| {
        let _ = session.send_message(ToSession::Turn { turn: id, event });
    };
    // A panic in the turn's work fails this turn alone; the session goes on.
    let work = steps(&services, &options, said, context, &report);
    match crate::actors::work::caught("realtime", work).await {
        Ok(Ok(())) => report(TurnEvent::Done),
        Ok(Err(error)) => report(TurnEvent::Failed(error)),
        Err(fault) => report(TurnEvent::Failed(fault.to_string())),
    }
}

async fn steps(
    services: &Services,
    options: &SessionOptions,
    said: Said,
    context: Context,
    report: &impl Fn(TurnEvent),
) -> Result<(), String> {
    let Context {
        heard_before,
        declinable,
        variables,
    } = context;
    let mut keyed = false;
    let started = std::time::Instant::now();
    let mut recognised = None;
    let text = match said {
        Said::Keys(keys) => {
            keyed = true;
            keys
        }
        Said::Agent(rest) => {
            let said = crate::dialogue::Reply {
                text: rest.clone(),
                ..Default::default()
            };
            report(TurnEvent::Answered {
                text: rest.clone(),
                session_id: options.session_id.clone().unwrap_or_default(),
                transfer: None,
                end_call: false,
                record: Box::new(crate::records::agent_turn(&said, &Default::default(), 0.0)),
            });
            return speak(services, options, &rest, report, None).await;
        }
        Said::Text(text) => text,
        Said::Audio(audio, early, settled) => {
            let seconds = audio.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
            usage::record(Usage::RecognisedSeconds(seconds));
            let early = match early {
                Some(early) => early.text().await.ok(),
                None => None,
            };
            let (text, queued) = match early {
                Some(heard) => heard,
                None => recognise(services, options, audio, settled).await?,
            };
            recognised = Some((started.elapsed(), queued));
            if text.is_empty() {
                report(TurnEvent::Nothing);
                return Ok(());
            }
            text
        }
    };
    if !keyed && heard_before.is_some() && crate::dialogue::repair::is_backchannel(&text) {
        report(TurnEvent::Backchannel);
        return Ok(());
    }
    if !keyed && declinable && crate::dialogue::transfer::declines(&text) {
        report(TurnEvent::Heard(services.dialogue.shareable(&text)));
        report(TurnEvent::Declined);
        return Ok(());
    }
    // Keys are never written as digits: a PIN is keyed the same way as a menu choice.
    report(TurnEvent::Heard(match keyed {
        true => crate::dialogue::keypad::masked(&text),
        false => services.dialogue.shareable(&text),
    }));
    let answered = services
        .dialogue
        .turn(TurnRequest {
            owner: options.owner.clone(),
            scenario: options.scenario.clone(),
            session_id: options.session_id.clone(),
            text,
            heard_before,
            keys: keyed,
            keypad: true,
            variables,
        })
        .await
        .map_err(|e| e.to_string())?;
    let record = crate::records::agent_turn(&answered.reply, &answered.summary, 0.0);
    let reply = answered.reply.text;
    usage::record(Usage::AgentTurn);
    usage::record(Usage::Characters(reply.chars().count()));
    report(TurnEvent::Answered {
        text: reply.clone(),
        session_id: answered.session_id,
        transfer: answered.transfer,
        end_call: answered.end_call,
        record: Box::new(record),
    });
    let stages = Stages {
        started,
        recognised,
        answered: started.elapsed(),
    };
    speak(services, options, &reply, report, Some(stages)).await
}

/// Speak `reply`, piece by piece as it is synthesised and encoded.
async fn speak(
    services: &Services,
    options: &SessionOptions,
    reply: &str,
    report: &impl Fn(TurnEvent),
    stages: Option<Stages>,
) -> Result<(), String> {
    let (mut stream, first) = open(services, options, reply).await?;
    if let Some(stages) = stages {
        stages.log();
    }
    let mut encoder = Encoder::new(options.format)?;
    let mut next = Some(Ok(first));
    while let Some(piece) = next {
        let piece = piece.map_err(|e: SynthesisError| e.to_string())?;
        let seconds = piece.samples.len() as f64 / f64::from(crate::audio::SAMPLE_RATE);
        let recorded = match options.recording {
            true => crate::records::recording::telephone(&piece.samples),
            false => Vec::new(),
        };
        let audio = encoder.push(piece.samples).await?;
        report(TurnEvent::Piece {
            audio,
            text: piece.text,
            seconds,
            words: piece.words,
            recorded,
        });
        next = stream.next().await;
    }
    let closing = encoder.finish().await?;
    if !closing.is_empty() {
        report(TurnEvent::Piece {
            audio: closing,
            text: String::new(),
            seconds: 0.0,
            words: Vec::new(),
            recorded: Vec::new(),
        });
    }
    Ok(())
}

/// The words of a turn's audio (only the part past what was `settled` while the caller spoke is recognised), and
/// how long it waited for a recognition worker.
async fn recognise(
    services: &Services,
    options: &SessionOptions,
    audio: Arc<Vec<f32>>,
    settled: Option<super::interim::Settled>,
) -> Result<(String, std::time::Duration), String> {
    patiently(
        || {
            super::interim::hear_rest(
                &services.asr,
                &options.owner,
                Arc::clone(&audio),
                settled.clone(),
            )
        },
        |e| matches!(e, RecognitionError::Actor(ActorError::Busy { .. })),
    )
    .await
    .map_err(|e| e.to_string())
}

/// A conversation waits for a busy stage rather than failing: the call again every quarter second, for up to
/// ten seconds, while `busy` says the refusal was a full queue.
async fn patiently<T, E, F>(call: impl Fn() -> F, busy: impl Fn(&E) -> bool) -> Result<T, E>
where
    F: std::future::Future<Output = Result<T, E>>,
{
    let mut attempts = 0;
    loop {
        match call().await {
            Err(error) if busy(&error) && attempts < 40 => {
                attempts += 1;
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            outcome => return outcome,
        }
    }
}

/// The reply's speech as a stream and its first piece: with word times where the voice can tell them.
async fn open(
    services: &Services,
    options: &SessionOptions,
    reply: &str,
) -> Result<(SpeechStream, crate::actors::tts::stream::Piece), String> {
    for timed in [true, false] {
        let mut stream = patiently(
            || {
                services.tts.stream(
                    &options.owner,
                    &options.voice_id,
                    reply,
                    VoiceSettings::default(),
                    None,
                    timed,
                )
            },
            |e| matches!(e, SynthesisError::Actor(ActorError::Busy { .. })),
        )
        .await
        .map_err(|e| e.to_string())?;
        match stream.next().await {
            Some(Ok(first)) => return Ok((stream, first)),
            Some(Err(SynthesisError::Untimed(_))) if timed => continue,
            Some(Err(error)) => return Err(error.to_string()),
            None => return Err("synthesis ended before any audio was made".into()),
        }
    }
    Err("synthesis gave no audio".into())
}

/// The reply's encoder; codecs that cost anything run off the async threads.
struct Encoder {
    encoder: Option<StreamEncoder>,
    heavy: bool,
}

impl Encoder {
    fn new(format: OutputFormat) -> Result<Self, String> {
        Ok(Self {
            encoder: Some(StreamEncoder::new(format)?),
            heavy: format.costly(),
        })
    }

    async fn push(&mut self, samples: Vec<f32>) -> Result<Vec<u8>, String> {
        let mut encoder = self.encoder.take().ok_or("the encoder has finished")?;
        let (encoder, bytes) = match self.heavy {
            false => {
                let bytes = encoder.push(&samples)?;
                (encoder, bytes)
            }
            true => tokio::task::spawn_blocking(move || {
                let bytes = encoder.push(&samples);
                bytes.map(|bytes| (encoder, bytes))
            })
            .await
            .map_err(|_| "the reply's encoder stopped".to_string())??,
        };
        self.encoder = Some(encoder);
        Ok(bytes)
    }

    async fn finish(mut self) -> Result<Vec<u8>, String> {
        let encoder = self.encoder.take().ok_or("the encoder has finished")?;
        match self.heavy {
            false => encoder.finish(),
            true => tokio::task::spawn_blocking(move || encoder.finish())
                .await
                .map_err(|_| "the reply's encoder stopped".to_string())?,
        }
    }
}
