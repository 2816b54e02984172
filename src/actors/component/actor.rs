use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::Component;
use crate::actors::ActorError;

/// Messages to a component actor.
pub enum ToComponentActor {
    /// Can the component serve requests?
    Availability(RpcReplyPort<Result<(), ActorError>>),
}

/// A component whose engine is not built: it answers every request with [`ActorError::NotAvailable`].
pub struct ComponentActor;

impl Actor for ComponentActor {
    type Msg = ToComponentActor;
    type State = Component;
    type Arguments = Component;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        component: Component,
    ) -> Result<Component, ActorProcessingErr> {
        Ok(component)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        component: &mut Component,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ToComponentActor::Availability(reply) => {
                // The caller may have given up already; nothing to do then.
                let _ = reply.send(Err(ActorError::NotAvailable(
                    component.unavailable_detail().to_string(),
                )));
            }
        }
        Ok(())
    }
}
