//! The SessionActor: turn-taking and barge-in for one realtime conversation.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc;

use super::call::CallClock;
use super::handover::Handover;
use super::keys::Keyed;
use super::playing::Playing;
use super::turn::{self, Said, TurnEvent};
use super::{Inbound, Outbound, Services, SessionOptions};
use crate::audio::vad::{StreamingVad, MAX_TURN_SAMPLES};
use crate::records::live::LiveRecord;

/// Messages to a session.
pub enum ToSession {
    /// From the client.
    Inbound(Inbound),
    /// From one of the session's turns.
    Turn {
        /// Which turn.
        turn: u64,
        /// What happened.
        event: TurnEvent,
    },
    /// Time passes: idle and length limits, pings.
    Tick,
    /// A transfer has been made, or failed twice.
    Transferred(Result<(), String>),
    /// A piece of the turn under way was recognised: the words settled in it.
    Interim {
        /// Which stretch of speech it belongs to.
        speech: u64,
        /// Samples of the turn it settled; `None` when it could not be recognised.
        settled: Option<usize>,
        /// Its words.
        heard: String,
    },
    /// Whether the caller's pause `pause` ends a complete turn (the end-of-turn model's judgement).
    Judged {
        /// Which pause.
        pause: u64,
        /// The turn sounds complete.
        complete: bool,
    },
}

/// What a session starts with.
pub struct SessionArgs {
    pub(super) services: Services,
    pub(super) options: SessionOptions,
    pub(super) out: mpsc::Sender<Outbound>,
    pub(super) cut: Arc<AtomicU64>,
}

/// One realtime conversation.
pub struct SessionActor;

/// How often the session looks at the clock.
const TICK: Duration = Duration::from_millis(250);

/// A turn in progress.
pub(super) struct Current {
    pub(super) id: u64,
    pub(super) task: crate::actors::work::OwnedTask,
    /// The turn's audio, until it is recognised (a turn that continues after a pause is recognised whole).
    pub(super) audio: Option<Arc<Vec<f32>>>,
    /// The reply, once the dialogue layer has given it.
    pub(super) reply: Option<String>,
    /// When the caller stopped speaking.
    pub(super) ended_speaking: Instant,
    /// What the caller had already heard of a reply this turn goes on with (a resumed reply).
    pub(super) before: String,
}

/// A session's state.
pub struct State {
    pub(super) args: SessionArgs,
    pub(super) myself: ActorRef<ToSession>,
    pub(super) vad: StreamingVad,
    /// The turn's recognition, started when the caller fell quiet.
    pub(super) early: Option<super::early::Early>,
    /// Interim transcripts of the turn under way.
    pub(super) interim: super::interim::Interim,
    pub(super) current: Option<Current>,
    pub(super) playing: Option<Playing>,
    /// The caller is speaking over an audible reply that has not stopped for it (yet).
    pub(super) barge: bool,
    /// The reply the caller last cut, and what they had heard of it, until the turn that cut it is heard.
    pub(super) cut_reply: Option<(String, String)>,
    /// Re-prompts for a silent caller, and the polite end of a call.
    pub(super) clock: CallClock,
    /// Keys pressed for the entry under way.
    pub(super) keyed: Keyed,
    /// The call the session carries, and a transfer it is to make.
    pub(super) handover: Handover,
    /// The call's record, kept as it goes.
    pub(super) record: LiveRecord,
    pub(super) turns: u64,
    pub(super) events: u64,
    pub(super) started: Instant,
    /// The last message from the client or from a turn.
    pub(super) last_heard: Instant,
    pub(super) last_ping: Instant,
}

impl Actor for SessionActor {
    type Msg = ToSession;
    type State = State;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: SessionArgs,
    ) -> Result<State, ActorProcessingErr> {
        myself.send_interval(TICK, || ToSession::Tick);
        let conversation_id = format!("conv_{}", uuid::Uuid::new_v4().simple());
        let options = &args.options;
        let record = LiveRecord::start(
            &args.services.records,
            &options.owner,
            &conversation_id,
            &options.scenario_id,
            options.channel,
            options.call.clone(),
        );
        let started = Outbound::Started {
            conversation_id,
            format: args.options.format,
        };
        let _ = args.out.try_send(started);
        let call = args.options.call.clone();
        Ok(State {
            vad: args.services.turns.stream(args.options.end_of_turn),
            early: None,
            interim: Default::default(),
            args,
            myself,
            current: None,
            playing: None,
            barge: false,
            cut_reply: None,
            clock: CallClock::new(call),
            keyed: Keyed::default(),
            handover: Handover::default(),
            record,
            turns: 0,
            events: 0,
            started: Instant::now(),
            last_heard: Instant::now(),
            last_ping: Instant::now(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        #[cfg(feature = "fault-injection")]
        if matches!(message, ToSession::Inbound(_)) {
            crate::actors::faults::maybe_panic("realtime");
        }
        match message {
            ToSession::Inbound(Inbound::Audio(samples)) => {
                state.last_heard = Instant::now();
                state.record.caller_audio(&samples);
                let events = state.vad.push(&samples);
                state.detected(events).await;
            }
            ToSession::Interim {
                speech,
                settled,
                heard,
            } => state.interim_heard(speech, settled, heard),
            ToSession::Judged { pause, complete } => {
                let events = state.vad.decide(pause, complete);
                state.detected(events).await;
            }
            ToSession::Inbound(Inbound::UserMessage(text)) => {
                state.last_heard = Instant::now();
                if state.admit().await {
                    state.caller_started(false);
                    state.begin(Said::Text(text), None);
                }
            }
            ToSession::Inbound(Inbound::Keys(pressed)) => {
                state.last_heard = Instant::now();
                // A key stops the reply at once, as a typed message does.
                state.caller_started(false);
                if let Some(entry) = state.keyed.push(&pressed) {
                    if state.admit().await {
                        state.begin(Said::Keys(entry), None);
                    }
                }
            }
            ToSession::Inbound(Inbound::Alive) => state.last_heard = Instant::now(),
            ToSession::Inbound(Inbound::Call(call)) => {
                state.last_heard = Instant::now();
                state.record.call(&call);
                state.handover.call = call;
            }
            ToSession::Transferred(outcome) => state.transferred(outcome),
            ToSession::Turn { turn, event } => {
                // A conversation waiting on its agent is not idle.
                state.last_heard = Instant::now();
                state.turn_event(turn, event);
            }
            ToSession::Tick => {
                if let Some(entry) = state.keyed.due() {
                    if state.admit().await {
                        state.begin(Said::Keys(entry), None);
                    }
                }
                state.tick();
            }
        }
        if state.args.out.is_closed() {
            myself.stop(None);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(current) = state.current.take() {
            current.task.abort();
        }
        Ok(())
    }
}

impl State {
    /// Queue an event for the client; a client too slow to take them ends the session. What the caller said,
    /// a reply they cut and the end of the call go into the call's record on their way.
    pub(super) fn send(&mut self, event: Outbound) {
        match &event {
            Outbound::UserTranscript(text) => self.record.heard(text),
            Outbound::Correction { corrected, .. } => self.record.cut(corrected),
            Outbound::EndCall { reason } => self.record.end(reason),
            Outbound::Interruption { .. } => self.record.agent_cut(),
            _ => {}
        }
        if let Err(mpsc::error::TrySendError::Full(_)) = self.args.out.try_send(event) {
            tracing::info!("realtime client stopped reading; the session ends");
            self.myself.stop(Some("the client stopped reading".into()));
        }
    }

    pub(super) fn close(&mut self, code: u16, reason: String) {
        self.send(Outbound::Close { code, reason });
        self.myself.stop(None);
    }

    /// Count a turn against the key's limit; a refused turn is told to the client and not taken.
    pub(super) async fn admit(&mut self) -> bool {
        let owner = &self.args.options.owner;
        match self.args.services.gate.admit(owner).await {
            Ok(()) => true,
            Err(refused) => {
                metrics::counter!(crate::telemetry::metrics::REALTIME_TURNS_DROPPED, "reason" => "rate_limited")
                    .increment(1);
                self.send(Outbound::Refused {
                    detail: refused.detail,
                    retry_after_seconds: refused.retry_after.map(|d| d.as_secs().max(1)),
                });
                false
            }
        }
    }

    /// The caller's turn is over: recognise and answer it. A turn still being recognised is recognised again
    /// with this audio after it, as long as the two together are no longer than one turn may be; otherwise
    /// the older is dropped (and counted). A reply not yet spoken is dropped. So a session holds at most one
    /// turn's audio, and one recognition, at a time. What was `settled` of the turn while the caller spoke is
    /// not recognised again.
    pub(super) fn turn_ended(&mut self, audio: Vec<f32>, settled: super::interim::Settled) {
        let mut early = self.early_for(&audio);
        let mut settled = Some(settled);
        let mut said = audio;
        if let Some(current) = self.current.take() {
            current.task.abort();
            match (current.audio, current.reply) {
                (Some(earlier), _) if earlier.len() + said.len() <= MAX_TURN_SAMPLES => {
                    let mut whole = Arc::unwrap_or_clone(earlier);
                    whole.extend_from_slice(&said);
                    said = whole;
                    // Heard again with the turn before it: what was recognised of this one alone is no use.
                    early = None;
                    settled = None;
                }
                (Some(_), _) => {
                    metrics::counter!(crate::telemetry::metrics::REALTIME_TURNS_DROPPED, "reason" => "superseded")
                        .increment(1);
                }
                (None, Some(reply))
                    if self.playing.as_ref().is_none_or(|p| p.turn != current.id) =>
                {
                    self.forget_unheard("");
                    self.send(Outbound::Correction {
                        original: reply,
                        corrected: String::new(),
                    });
                }
                _ => {}
            }
        }
        // The turn's task and the session share the audio: it is copied only if the turn is heard again.
        let said = Arc::new(said);
        self.begin(Said::Audio(Arc::clone(&said), early, settled), Some(said));
    }

    pub(super) fn begin(&mut self, said: Said, audio: Option<Arc<Vec<f32>>>) {
        if let Some(current) = self.current.take() {
            current.task.abort();
        }
        self.turns += 1;
        let id = self.turns;
        let heard_before = match said {
            Said::Agent(_) => None,
            _ => self.cut_reply.as_ref().map(|(_, heard)| heard.clone()),
        };
        let context = turn::Context {
            heard_before,
            declinable: self.handover.declinable(),
            variables: self.handover.call.template_variables(),
        };
        let task = crate::actors::work::OwnedTask::spawn(
            "realtime",
            turn::run(
                self.args.services.clone(),
                self.args.options.clone(),
                said,
                context,
                id,
                self.myself.clone(),
            ),
        );
        self.current = Some(Current {
            id,
            task,
            audio,
            reply: None,
            ended_speaking: Instant::now(),
            before: String::new(),
        });
    }

    fn turn_event(&mut self, turn: u64, event: TurnEvent) {
        let Some(current) = self.current.as_mut().filter(|c| c.id == turn) else {
            return;
        };
        match event {
            TurnEvent::Heard(text) => {
                current.audio = None;
                // The dialogue keeps what was heard of the cut reply with this turn.
                self.cut_reply = None;
                self.send(Outbound::UserTranscript(text));
            }
            TurnEvent::Nothing => {
                self.current = None;
                if let Some((_, heard)) = self.cut_reply.take() {
                    self.forget_unheard(&heard);
                }
            }
            TurnEvent::Backchannel => {
                self.current = None;
                self.resume();
            }
            TurnEvent::Answered {
                text,
                session_id,
                transfer,
                end_call,
                record,
            } => {
                self.record.answered(*record);
                current.reply = Some(text.clone());
                self.args.options.session_id = Some(session_id.clone());
                self.send(Outbound::AgentResponse { text, session_id });
                if let Some(plan) = transfer {
                    self.plan_transfer(plan);
                }
                if end_call {
                    self.clock.ending = Some(super::call::EndReason::Farewell);
                }
            }
            TurnEvent::Declined => {
                self.current = None;
                self.declined();
            }
            TurnEvent::Piece {
                audio,
                text,
                seconds,
                words,
                recorded,
            } => {
                self.record.agent_audio(&recorded);
                self.piece(turn, audio, text, seconds, words)
            }
            TurnEvent::Done => self.current = None,
            TurnEvent::Failed(error) => {
                tracing::warn!(%error, "a realtime turn failed");
                self.record.end("failed");
                self.current = None;
                self.send(Outbound::Close {
                    code: 1011,
                    reason: format!("the turn failed: {error}"),
                });
                self.myself.stop(None);
            }
        }
    }
}
