//! Barge-in: the caller speaking over a reply stops it once they have spoken for the session's
//! `min_interruption`; a shorter sound is no turn, and a turn that is only "eeh", "mhm" or "sawa" lets the reply
//! go on from where it was cut.

use std::sync::atomic::Ordering;

use super::actor::State;
use super::playing::Playing;
use super::turn::Said;
use super::Outbound;

impl State {
    /// The caller began to speak (or typed): an audible reply stops at once for typing, and for speech once it
    /// has gone on for the session's `min_interruption`.
    pub(super) fn caller_started(&mut self, spoken: bool) {
        self.clock.caller_spoke();
        let producing = |p: &Playing| self.current.as_ref().is_some_and(|c| c.id == p.turn);
        if self
            .playing
            .as_ref()
            .is_some_and(|p| p.audible(producing(p)))
        {
            match spoken && !self.args.options.min_interruption.is_zero() {
                true => self.barge = true,
                false => self.interrupt(),
            }
        }
    }

    /// More of the caller's audio: speech over a reply that has gone on long enough (its pauses left out)
    /// stops it.
    pub(super) fn speaking_over(&mut self) {
        if self.barge && self.vad.voiced() >= self.args.options.min_interruption {
            self.barge = false;
            self.interrupt();
        }
    }

    /// Stop the reply being played: the client is told to drop what it has not played, the session's history
    /// keeps what was heard.
    pub(super) fn interrupt(&mut self) {
        let Some(playing) = self.playing.take() else {
            return;
        };
        if let Some(current) = self.current.take_if(|c| c.id == playing.turn) {
            current.task.abort();
        }
        self.args.cut.store(playing.last_event, Ordering::Release);
        metrics::counter!(crate::telemetry::metrics::REALTIME_INTERRUPTIONS).increment(1);
        self.send(Outbound::Interruption {
            event_id: playing.last_event,
        });
        let heard = playing.heard();
        // The turn that cut it keeps this much of it in the history, unless it was only a murmur.
        self.cut_reply = Some((playing.reply.clone(), heard.clone()));
        self.send(Outbound::Correction {
            original: playing.reply,
            corrected: heard,
        });
    }

    /// The caller only murmured over the reply they cut ("eeh", "sawa"): it goes on from where it was cut.
    pub(super) fn resume(&mut self) {
        metrics::counter!(crate::telemetry::metrics::REALTIME_BACKCHANNELS, "kind" => "words")
            .increment(1);
        let Some((reply, heard)) = self.cut_reply.take() else {
            return;
        };
        let rest = reply.strip_prefix(heard.as_str()).unwrap_or(&reply).trim();
        if !rest.is_empty() {
            let rest = rest.to_string();
            self.begin(Said::Agent(rest), None);
            if let Some(current) = self.current.as_mut() {
                current.before = heard;
            }
        }
    }

    /// The dialogue session's last reply is kept only as far as it was heard.
    pub(super) fn forget_unheard(&self, heard: &str) {
        if let Some(session) = &self.args.options.session_id {
            self.args
                .services
                .dialogue
                .interrupted(&self.args.options.owner, session, heard);
        }
    }
}
