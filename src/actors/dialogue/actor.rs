use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::{DialogueTurn, SessionError, Sessions, TurnError, TurnRequest};
use crate::actors::work::WorkSet;
use crate::dialogue::library::ScenarioLibrary;
use crate::dialogue::DialogueBackend;

/// Longest a turn may run (a little under what its caller waits).
const TURN_BUDGET: Duration = Duration::from_secs(80);

/// How often scenario files are checked for changes.
const RELOAD_EVERY: Duration = Duration::from_secs(2);

/// Messages to the DialogueActor.
pub enum ToDialogueActor {
    /// Answer a turn.
    Turn {
        /// The turn.
        request: TurnRequest,
        /// Where the answer goes.
        reply: RpcReplyPort<Result<DialogueTurn, TurnError>>,
    },
    /// Check a turn's scenario and session before any costly work is done for it (recognition, say).
    Check {
        /// The turn (its text is not looked at).
        request: TurnRequest,
        /// The scenario a turn with these would be answered by, or why it would not be taken.
        reply: RpcReplyPort<Result<Arc<crate::dialogue::Scenario>, TurnError>>,
    },
    /// The caller talked over the agent's last reply in a session: the history keeps only what was heard.
    Interrupted {
        /// The session's owner.
        owner: String,
        /// The session.
        session_id: String,
        /// The part of the reply the caller heard.
        heard: String,
    },
    /// Reload scenario files that changed.
    Reload,
}

/// What the DialogueActor is started with; shared across restarts, so sessions survive a restart of the actor.
#[derive(Clone)]
pub struct DialogueArgs {
    /// The scenarios.
    pub library: ScenarioLibrary,
    /// The configured backend.
    pub backend: Arc<dyn DialogueBackend>,
    /// Answers when the backend fails (the scenario engine, when configured).
    pub fallback: Option<Arc<dyn DialogueBackend>>,
    /// Conversations.
    pub sessions: Sessions,
    /// Where HTTP conversations are recorded (calls record their own).
    pub records: crate::records::Records,
}

/// Dispatches turns; each turn runs as the actor's own work so a slow backend never stalls the mailbox.
pub struct DialogueActor;

/// The DialogueActor's state: what it was started with, and the turns it has running.
pub struct DialogueState {
    args: DialogueArgs,
    work: WorkSet,
}

impl Actor for DialogueActor {
    type Msg = ToDialogueActor;
    type State = DialogueState;
    type Arguments = DialogueArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: DialogueArgs,
    ) -> Result<DialogueState, ActorProcessingErr> {
        myself.send_interval(RELOAD_EVERY, || ToDialogueActor::Reload);
        Ok(DialogueState {
            args,
            work: WorkSet::new("dialogue"),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut DialogueState,
    ) -> Result<(), ActorProcessingErr> {
        let DialogueState { args: state, work } = state;
        #[cfg(feature = "fault-injection")]
        crate::actors::faults::maybe_panic("dialogue");
        match message {
            ToDialogueActor::Reload => {
                let library = state.library.clone();
                // File reads are blocking; the outcome is logged by the library.
                let _ = tokio::task::spawn_blocking(move || library.reload_changed()).await;
            }
            ToDialogueActor::Check { request, reply } => {
                let state = state.clone();
                work.answer(reply, async move { resolve(&state, &request).await });
            }
            ToDialogueActor::Interrupted {
                owner,
                session_id,
                heard,
            } => {
                let sessions = Arc::clone(&state.sessions);
                work.run(async move {
                    let Ok(Some(scenario)) = sessions.scenario_of(&owner, &session_id).await else {
                        return;
                    };
                    if let Ok(mut turn) = sessions.open(&owner, &scenario, Some(&session_id)).await
                    {
                        turn.session.interrupted(&heard);
                        if let Err(error) = turn.commit().await {
                            tracing::warn!(%error, "an interruption could not be kept");
                        }
                    }
                });
            }
            ToDialogueActor::Turn { request, reply } => {
                let state = state.clone();
                work.answer(reply, async move {
                    #[cfg(feature = "fault-injection")]
                    crate::actors::faults::maybe_panic("turn");
                    // The turn stops (its session lock released, no further tool calls) before the caller
                    // gives up on it.
                    match tokio::time::timeout(TURN_BUDGET, answer(&state, request)).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(TurnError::Backend(
                            crate::dialogue::DialogueError::Backend {
                                backend: state.backend.name(),
                                detail: format!(
                                    "the turn took longer than {} s",
                                    TURN_BUDGET.as_secs()
                                ),
                            },
                        )),
                    }
                });
            }
        }
        Ok(())
    }
}

/// The scenario a turn is for, once its session (if any) is known to be the caller's and of that scenario. An
/// absent scenario means the session's own when one is continued, else the default.
async fn resolve(
    state: &DialogueArgs,
    request: &TurnRequest,
) -> Result<Arc<crate::dialogue::Scenario>, TurnError> {
    let session_scenario = match &request.session_id {
        Some(id) => Some(
            state
                .sessions
                .scenario_of(&request.owner, id)
                .await?
                .ok_or_else(|| SessionError::NotFound(id.clone()))?,
        ),
        None => None,
    };
    let asked = request
        .scenario
        .clone()
        .or_else(|| session_scenario.clone())
        .unwrap_or_else(|| crate::dialogue::library::DEFAULT_SCENARIO.to_string());
    let scenario = state
        .library
        .get(&asked)
        .ok_or_else(|| TurnError::UnknownScenario(asked.clone(), state.library.ids().join(", ")))?;
    if let (Some(id), Some(own)) = (&request.session_id, session_scenario) {
        if own != scenario.id {
            return Err(SessionError::OtherScenario {
                id: id.clone(),
                scenario: own,
            }
            .into());
        }
    }
    Ok(scenario)
}

async fn answer(state: &DialogueArgs, request: TurnRequest) -> Result<DialogueTurn, TurnError> {
    let scenario = resolve(state, &request).await?;
    let mut turn = state
        .sessions
        .open(&request.owner, &scenario.id, request.session_id.as_deref())
        .await?;
    if let Some(heard) = &request.heard_before {
        turn.session.interrupted(heard);
    }
    turn.session.keypad |= request.keypad;
    turn.session.variables = request.variables.clone();
    let fallback = state.fallback.as_deref();
    let reply = crate::dialogue::keypad::answer(
        &scenario,
        &mut turn.session,
        &request.text,
        request.keys,
        &*state.backend,
        fallback,
    )
    .await?;
    let mut reply = reply;
    let (transfer, end_call) = match request.keypad {
        true => on_call(&scenario, &mut turn.session, &mut reply),
        false => (None, false),
    };
    let session_id = turn.id.clone();
    let summary = crate::dialogue::transfer::summary(&scenario, &turn.session, &reply);
    if !request.keypad {
        // Recorded while the conversation's turn is held: two turns of it never write its record at once.
        let said = crate::dialogue::shareable(&scenario.safety.current(), &request.text);
        let http = crate::records::HttpTurn {
            scenario: &scenario.id,
            call: &scenario.call,
            said: &said,
            reply: &reply,
            summary: &summary,
        };
        state
            .records
            .http_turn(&request.owner, &session_id, http)
            .await;
    }
    turn.commit().await?;
    tracing::info!(
        scenario = scenario.id,
        outcome = reply.outcome,
        backend = state.backend.name(),
        "turn answered"
    );
    metrics::counter!(
        crate::telemetry::metrics::DIALOGUE_TURNS,
        "scenario" => scenario.id.clone(),
        "outcome" => reply.outcome.clone()
    )
    .increment(1);
    Ok(DialogueTurn {
        session_id,
        scenario: scenario.id.clone(),
        reply,
        backend: state.backend.name(),
        transfer,
        end_call,
        summary,
    })
}

/// On a call: the transfer the reply leads to (the reply then said as the call says it, and kept so in the
/// session's history), and whether the agent hangs up once it has been heard.
fn on_call(
    scenario: &crate::dialogue::Scenario,
    session: &mut crate::dialogue::Session,
    reply: &mut crate::dialogue::Reply,
) -> (Option<crate::dialogue::transfer::TransferPlan>, bool) {
    let before = reply.text.clone();
    let transfer = crate::dialogue::transfer::on_call(scenario, session, reply);
    if reply.text != before {
        let last = session
            .history
            .iter_mut()
            .rev()
            .find(|(role, _)| *role == crate::dialogue::Role::Agent);
        if let Some((_, text)) = last {
            *text = reply.text.clone();
        }
    }
    let end_call = transfer.is_none() && scenario.call.end_after.contains(&reply.outcome);
    (transfer, end_call)
}
