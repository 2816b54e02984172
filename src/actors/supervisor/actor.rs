use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, SpawnErr, SupervisionEvent};

use crate::actors::agent::{AgentActor, AgentArgs, ToAgentActor};
use crate::actors::asr::{AsrActor, AsrArgs, AsrHandle, ToAsrActor};
use crate::actors::clone::{CloneActor, CloneArgs, ToCloneActor};
use crate::actors::dialogue::{DialogueActor, DialogueArgs, DialogueHandle, ToDialogueActor};
use crate::actors::jobs::{JobsActor, JobsArgs, ToJobsActor};
use crate::actors::tts::{ToTtsActor, TtsActor, TtsArgs, TtsHandle};
use crate::actors::ActorSlot;
use crate::config::{JobSettings, SupervisorSettings};
use crate::storage::{ArtifactStore, Storage};
use crate::tts::catalog::VoiceRegistry;

/// The supervisor takes no requests; it only reacts to its children's lifecycle.
pub enum ToSupervisor {}

/// Where each child's current incarnation is published.
#[derive(Clone, Default)]
pub struct Slots {
    pub tts: ActorSlot<ToTtsActor>,
    pub jobs: ActorSlot<ToJobsActor>,
    pub asr: ActorSlot<ToAsrActor>,
    pub dialogue: ActorSlot<ToDialogueActor>,
    pub agent: ActorSlot<ToAgentActor>,
    pub clone: ActorSlot<ToCloneActor>,
}

/// Everything needed to (re)start the children.
pub struct SupervisorArgs {
    pub slots: Slots,
    pub tts: TtsArgs,
    pub asr: AsrArgs,
    pub clone: CloneArgs,
    pub dialogue: DialogueArgs,
    pub voices: Arc<VoiceRegistry>,
    pub db: Storage,
    pub artifacts: ArtifactStore,
    pub jobs: JobSettings,
    pub budget: SupervisorSettings,
    pub restarts: Arc<AtomicU64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Child {
    Tts,
    Asr,
    Jobs,
    Dialogue,
    Agent,
    Clone,
}

impl Child {
    fn name(self) -> &'static str {
        match self {
            Child::Tts => "tts",
            Child::Asr => "asr",
            Child::Jobs => "jobs",
            Child::Dialogue => "dialogue",
            Child::Agent => "agent",
            Child::Clone => "clone",
        }
    }
}

const CHILDREN: [Child; 6] = [
    Child::Tts,
    Child::Asr,
    Child::Jobs,
    Child::Dialogue,
    Child::Agent,
    Child::Clone,
];

/// The root of the actor graph.
pub struct Supervisor;

pub struct SupervisorState {
    args: SupervisorArgs,
    children: HashMap<ActorId, (Child, ActorCell)>,
    history: HashMap<Child, VecDeque<Instant>>,
}

impl SupervisorState {
    async fn spawn(&mut self, child: Child, me: ActorCell, first: bool) -> Result<(), SpawnErr> {
        let a = &self.args;
        let cell = match child {
            Child::Tts => {
                let (actor, _) = Actor::spawn_linked(None, TtsActor, a.tts.clone(), me).await?;
                a.slots.tts.set(Some(actor.clone()));
                actor.get_cell()
            }
            Child::Asr => {
                let (actor, _) = Actor::spawn_linked(None, AsrActor, a.asr.clone(), me).await?;
                a.slots.asr.set(Some(actor.clone()));
                actor.get_cell()
            }
            Child::Jobs => {
                let args = JobsArgs {
                    db: a.db.clone(),
                    artifacts: a.artifacts.clone(),
                    tts: TtsHandle::new(a.slots.tts.clone()),
                    voices: Arc::clone(&a.voices),
                    settings: a.jobs.clone(),
                    slot: a.slots.jobs.clone(),
                    recover: first,
                };
                let (actor, _) = Actor::spawn_linked(None, JobsActor, args, me).await?;
                a.slots.jobs.set(Some(actor.clone()));
                actor.get_cell()
            }
            Child::Dialogue => {
                let (actor, _) =
                    Actor::spawn_linked(None, DialogueActor, a.dialogue.clone(), me).await?;
                a.slots.dialogue.set(Some(actor.clone()));
                actor.get_cell()
            }
            Child::Agent => {
                let args = AgentArgs {
                    dialogue: DialogueHandle::new(
                        a.slots.dialogue.clone(),
                        a.dialogue.library.safety(),
                    ),
                    tts: TtsHandle::new(a.slots.tts.clone()),
                    asr: AsrHandle::new(a.slots.asr.clone()),
                };
                let (actor, _) = Actor::spawn_linked(None, AgentActor, args, me).await?;
                a.slots.agent.set(Some(actor.clone()));
                actor.get_cell()
            }
            Child::Clone => {
                let (actor, _) = Actor::spawn_linked(None, CloneActor, a.clone.clone(), me).await?;
                a.slots.clone.set(Some(actor.clone()));
                actor.get_cell()
            }
        };
        self.children.insert(cell.get_id(), (child, cell));
        Ok(())
    }

    fn clear_slot(&self, child: Child) {
        match child {
            Child::Tts => self.args.slots.tts.set(None),
            Child::Asr => self.args.slots.asr.set(None),
            Child::Jobs => self.args.slots.jobs.set(None),
            Child::Dialogue => self.args.slots.dialogue.set(None),
            Child::Agent => self.args.slots.agent.set(None),
            Child::Clone => self.args.slots.clone.set(None),
        }
    }

    /// Record a restart; false when the budget for this child is spent.
    fn within_budget(&mut self, child: Child) -> bool {
        let window = Duration::from_secs(self.args.budget.restart_window_seconds);
        let history = self.history.entry(child).or_default();
        let now = Instant::now();
        while history
            .front()
            .is_some_and(|t| now.duration_since(*t) > window)
        {
            history.pop_front();
        }
        history.push_back(now);
        history.len() <= self.args.budget.max_restarts as usize
    }
}

impl Actor for Supervisor {
    type Msg = ToSupervisor;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let mut state = SupervisorState {
            args,
            children: HashMap::new(),
            history: HashMap::new(),
        };
        for child in CHILDREN {
            state.spawn(child, myself.get_cell(), true).await?;
        }
        tracing::info!(actors = CHILDREN.len(), "actor graph started");
        Ok(state)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match message {}
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, reason) = match event {
            SupervisionEvent::ActorFailed(cell, error) => (cell, error.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, reason.unwrap_or_else(|| "stopped".into()))
            }
            _ => return Ok(()),
        };
        let Some((child, _)) = state.children.remove(&cell.get_id()) else {
            return Ok(());
        };
        state.clear_slot(child);
        if !state.within_budget(child) {
            tracing::error!(actor = child.name(), %reason, "restart budget spent; stopping the service");
            myself.stop(Some(format!("{} failed too often", child.name())));
            return Ok(());
        }
        let total = state.args.restarts.fetch_add(1, Ordering::Relaxed) + 1;
        metrics::counter!(crate::telemetry::metrics::ACTOR_RESTARTS, "actor" => child.name())
            .increment(1);
        tracing::warn!(actor = child.name(), %reason, restarts = total, "actor stopped; restarting");
        state.spawn(child, myself.get_cell(), false).await?;
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        for (child, cell) in state.children.values() {
            state.clear_slot(*child);
            cell.stop(Some("shutdown".into()));
        }
        Ok(())
    }
}
