//! The end of a call the agent decides: a transfer to people once the reply that announces it has been heard
//! (after the caller's chance to decline, where the scenario gives one), a hang-up after a farewell, the
//! re-prompts and goodbyes of the call's clock, and the session's own limits. A transfer runs beside the
//! session; one that fails is tried once more, then the caller is told and the call goes on.

use std::time::{Duration, Instant};

use super::actor::State;
use super::call::{Due, EndReason};
use super::turn::Said;
use super::{Outbound, ToSession};
use crate::dialogue::transfer::TransferPlan;
use crate::telephony::CallInfo;

/// How often the client is pinged.
const PING_EVERY: Duration = Duration::from_secs(15);

/// A transfer the call is to make.
pub(super) struct Pending {
    pub(super) plan: TransferPlan,
    /// Until when the caller may decline it, once the reply has been heard.
    pub(super) declinable_until: Option<Instant>,
    /// The transfer is under way.
    pub(super) running: Option<crate::actors::work::OwnedTask>,
}

/// What the session knows of its call and the transfer it is to make.
#[derive(Default)]
pub(super) struct Handover {
    pub(super) call: CallInfo,
    pub(super) pending: Option<Pending>,
}

impl Handover {
    /// Whether the caller may decline the transfer now (they are asked and the reply has been heard).
    pub(super) fn declinable(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|p| p.running.is_none() && p.plan.decline_seconds > 0)
    }
}

impl State {
    /// A reply led to a transfer: it is made once the reply has been heard.
    pub(super) fn plan_transfer(&mut self, plan: TransferPlan) {
        self.handover.pending = Some(Pending {
            plan,
            declinable_until: None,
            running: None,
        });
    }

    /// The caller declined the transfer they were offered.
    pub(super) fn declined(&mut self) {
        if let Some(pending) = self.handover.pending.take() {
            tracing::info!(to = pending.plan.to, "the caller declined the transfer");
        }
        let line = self.args.options.call.transfer_declined.clone();
        self.begin(Said::Agent(line), None);
    }

    /// A transfer's outcome, after its tries.
    pub(super) fn transferred(&mut self, outcome: Result<(), String>) {
        let Some(pending) = self.handover.pending.take() else {
            return;
        };
        let to = pending.plan.to.clone();
        self.record.transfer(crate::records::RecordTransfer {
            to: to.clone(),
            at_secs: 0.0,
            ok: outcome.is_ok(),
            detail: outcome.as_ref().err().cloned(),
            summary: pending.plan.summary.clone(),
        });
        match outcome {
            Ok(()) => {
                tracing::info!(to, "the call was transferred");
                metrics::counter!(crate::telemetry::metrics::CALL_TRANSFERS, "outcome" => "transferred")
                    .increment(1);
                self.send(Outbound::Transfer {
                    to,
                    summary: pending.plan.summary,
                });
                self.end(EndReason::Transferred);
            }
            Err(error) => {
                tracing::warn!(to, %error, "the call could not be transferred");
                metrics::counter!(crate::telemetry::metrics::CALL_TRANSFERS, "outcome" => "failed")
                    .increment(1);
                let line = self.args.options.call.transfer_failed.clone();
                self.begin(Said::Agent(line), None);
            }
        }
    }

    /// The call is over: the client is told, the carrier's call hung up (when the session carries one and a
    /// transfer did not already take it), and the socket closed.
    pub(super) fn end(&mut self, reason: EndReason) {
        tracing::info!(end_reason = reason.as_str(), "the agent ended the call");
        self.send(Outbound::EndCall {
            reason: reason.as_str().to_string(),
        });
        let calls = &self.args.services.calls;
        if reason != EndReason::Transferred && calls.reaches(&self.handover.call) {
            let (calls, call) = (std::sync::Arc::clone(calls), self.handover.call.clone());
            // The hang-up outlives the session, which closes now; it is bounded by the client's timeout.
            tokio::spawn(async move {
                for _ in 0..2 {
                    match calls.hang_up(&call).await {
                        Ok(()) => return,
                        Err(error) => tracing::warn!(%error, "the call could not be hung up"),
                    }
                }
            });
        }
        self.close(
            1000,
            format!("the agent ended the call ({})", reason.as_str()),
        );
    }

    /// Start the pending transfer if its time has come: the reply heard, and the caller's time to decline over.
    fn transfer_due(&mut self, busy: bool) {
        let Some(pending) = self.handover.pending.as_mut() else {
            return;
        };
        if busy || pending.running.is_some() {
            return;
        }
        let wait = Duration::from_secs(pending.plan.decline_seconds);
        let until = *pending
            .declinable_until
            .get_or_insert_with(|| Instant::now() + wait);
        if Instant::now() < until {
            return;
        }
        let (calls, call, to) = (
            std::sync::Arc::clone(&self.args.services.calls),
            self.handover.call.clone(),
            pending.plan.to.clone(),
        );
        let session = self.myself.clone();
        pending.running = Some(crate::actors::work::OwnedTask::spawn(
            "realtime",
            async move {
                // A call on the phone network is put through by the carrier; a socket's client does it itself
                // when it hears the transfer event.
                let mut outcome = Ok(());
                if calls.reaches(&call) {
                    for _ in 0..2 {
                        outcome = calls.transfer(&call, &to).await;
                        if outcome.is_ok() {
                            break;
                        }
                    }
                }
                let _ = session.send_message(ToSession::Transferred(outcome));
            },
        ));
    }

    /// Time passes: a transfer or a hang-up whose moment has come, re-prompts, the idle and length limits, pings.
    pub(super) fn tick(&mut self) {
        let busy = self.current.is_some()
            || self.vad.in_speech()
            || !self.keyed.is_empty()
            || self.playing.as_ref().is_some_and(|p| p.audible(false));
        if let Some(reason) = self.clock.ending.filter(|_| !busy) {
            // The goodbye has been heard: the agent hangs up.
            return self.end(reason);
        }
        self.transfer_due(busy);
        let quiet = busy || self.handover.pending.is_some();
        match self.clock.due(quiet) {
            Some(Due::Reprompt(text) | Due::Goodbye(text, _)) => {
                self.begin(Said::Agent(text), None)
            }
            None => {}
        }
        let options = &self.args.options;
        if self.last_heard.elapsed() >= options.idle {
            let seconds = options.idle.as_secs();
            self.record.end("idle");
            return self.close(
                1000,
                format!("nothing was received for {seconds} s; the session is closed"),
            );
        }
        if self.started.elapsed() >= options.max_duration {
            let seconds = options.max_duration.as_secs();
            self.record.end("session_limit");
            return self.close(
                1000,
                format!("the session reached its longest allowed length, {seconds} s"),
            );
        }
        if self.last_ping.elapsed() >= PING_EVERY {
            self.last_ping = Instant::now();
            self.events += 1;
            let event_id = self.events;
            self.send(Outbound::Ping { event_id });
        }
    }
}
