//! Components whose engines are not built yet: voice cloning. Each is a real, supervised actor; its handle
//! answers a typed "not available" error (503).

mod actor;

pub use actor::{ComponentActor, ToComponentActor};

use std::time::Duration;

use super::{ActorError, ActorSlot};

/// A component of the graph: its name for logs and the words a client sees when it is not available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    /// CloneActor.
    Clone,
}

impl Component {
    /// The actor's name.
    pub fn actor_name(self) -> &'static str {
        match self {
            Component::Clone => "clone",
        }
    }

    /// What a client is told while the component has no engine.
    pub fn unavailable_detail(self) -> &'static str {
        match self {
            Component::Clone => {
                "voice cloning is not available: this server cannot build cloned voices yet"
            }
        }
    }
}

/// The handle of a component actor.
#[derive(Clone)]
pub struct ComponentHandle {
    component: Component,
    slot: ActorSlot<ToComponentActor>,
}

impl ComponentHandle {
    /// A handle reading the given slot.
    pub fn new(component: Component, slot: ActorSlot<ToComponentActor>) -> Self {
        Self { component, slot }
    }

    /// Ask the component whether it can serve requests.
    pub async fn ensure_available(&self) -> Result<(), ActorError> {
        self.slot
            .call(
                self.component.actor_name(),
                ToComponentActor::Availability,
                Duration::from_secs(10),
            )
            .await?
    }

    /// Whether the actor is running (readiness).
    pub fn is_up(&self) -> bool {
        self.slot.get().is_some()
    }
}
