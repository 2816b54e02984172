//! The call's own clock: a silent caller is re-prompted and, after the scenario's re-prompts, told goodbye and
//! hung up on; a call that runs past the scenario's longest is closed politely. Silence counts only while nobody
//! speaks and the agent has nothing under way.

use std::time::{Duration, Instant};

use crate::dialogue::call::CallSettings;

/// Why the agent ended a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The caller said nothing through every re-prompt.
    Silence,
    /// The call reached the scenario's `max_call_seconds`.
    MaxDuration,
    /// The agent said goodbye after the caller's farewell.
    Farewell,
    /// The call was put through to people.
    Transferred,
}

impl EndReason {
    /// Its name in events and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Silence => "silence",
            Self::MaxDuration => "max_duration",
            Self::Farewell => "farewell",
            Self::Transferred => "transferred",
        }
    }
}

/// What the agent should say now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Due {
    /// A re-prompt to a silent caller.
    Reprompt(String),
    /// The last words before the call ends.
    Goodbye(String, EndReason),
}

/// A call's silence and length.
pub(super) struct CallClock {
    settings: CallSettings,
    started: Instant,
    /// Since when nothing has been going on (none while someone speaks or the agent is at work).
    quiet_since: Option<Instant>,
    reprompts: u32,
    /// Set once the goodbye has been said: the call ends when it has been heard.
    pub(super) ending: Option<EndReason>,
}

impl CallClock {
    pub(super) fn new(settings: CallSettings) -> Self {
        Self {
            settings,
            started: Instant::now(),
            quiet_since: None,
            reprompts: 0,
            ending: None,
        }
    }

    /// The caller spoke or typed: the re-prompts start over.
    pub(super) fn caller_spoke(&mut self) {
        self.reprompts = 0;
        self.quiet_since = None;
    }

    /// What to say now, given whether anything is going on (the caller speaking, a turn or a reply under way).
    pub(super) fn due(&mut self, busy: bool) -> Option<Due> {
        if busy || self.ending.is_some() {
            self.quiet_since = None;
            return None;
        }
        let quiet = *self.quiet_since.get_or_insert_with(Instant::now);
        let max = Duration::from_secs(self.settings.max_call_seconds);
        if !max.is_zero() && self.started.elapsed() >= max {
            self.ending = Some(EndReason::MaxDuration);
            return Some(Due::Goodbye(
                self.settings.max_call_closing.clone(),
                EndReason::MaxDuration,
            ));
        }
        let wait = Duration::from_secs(self.settings.silence_reprompt_seconds);
        if wait.is_zero() || quiet.elapsed() < wait {
            return None;
        }
        self.quiet_since = None;
        if self.reprompts < self.settings.silence_reprompts {
            self.reprompts += 1;
            return Some(Due::Reprompt(self.settings.silence_reprompt.clone()));
        }
        self.ending = Some(EndReason::Silence);
        Some(Due::Goodbye(
            self.settings.silence_goodbye.clone(),
            EndReason::Silence,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(reprompt_seconds: u64, max: u64) -> CallClock {
        CallClock::new(CallSettings {
            silence_reprompt_seconds: reprompt_seconds,
            silence_reprompts: 2,
            max_call_seconds: max,
            ..CallSettings::default()
        })
    }

    fn after(clock: &mut CallClock, quiet_for: Duration) -> Option<Due> {
        clock.quiet_since = Some(Instant::now() - quiet_for);
        clock.due(false)
    }

    #[test]
    fn a_silent_caller_is_reprompted_then_told_goodbye() {
        let mut c = clock(5, 0);
        assert_eq!(c.due(false), None);
        assert_eq!(after(&mut c, Duration::from_secs(4)), None);
        assert!(matches!(
            after(&mut c, Duration::from_secs(6)),
            Some(Due::Reprompt(_))
        ));
        assert!(matches!(
            after(&mut c, Duration::from_secs(6)),
            Some(Due::Reprompt(_))
        ));
        assert_eq!(
            after(&mut c, Duration::from_secs(6))
                .map(|d| matches!(d, Due::Goodbye(_, EndReason::Silence))),
            Some(true)
        );
        assert_eq!(after(&mut c, Duration::from_secs(60)), None, "said once");

        // Speech starts the re-prompts over; nothing counts while something is going on.
        let mut c = clock(5, 0);
        assert!(matches!(
            after(&mut c, Duration::from_secs(6)),
            Some(Due::Reprompt(_))
        ));
        c.caller_spoke();
        assert_eq!(c.due(true), None);
        assert!(matches!(
            after(&mut c, Duration::from_secs(6)),
            Some(Due::Reprompt(_))
        ));
        assert!(matches!(
            after(&mut c, Duration::from_secs(6)),
            Some(Due::Reprompt(_))
        ));
        assert_eq!(clock(0, 0).due(false), None, "off");
    }

    #[test]
    fn a_long_call_is_closed_when_nothing_is_under_way() {
        let mut c = clock(0, 1);
        c.started = Instant::now() - Duration::from_secs(2);
        assert_eq!(c.due(true), None);
        assert!(matches!(
            c.due(false),
            Some(Due::Goodbye(_, EndReason::MaxDuration))
        ));
    }
}
